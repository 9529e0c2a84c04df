"""The dashboard's documents: what each page reads, from this checkout's ledger (through the
projections) and the records published on the reports branch.

A run in the ledger is projected from its events, as `armbench report` and `replay` do; a run
known only from the reports branch is shown from its published record. Documents are plain data
(msgspec-encodable); `benchmark.dashboard.pages` turns them into files.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from armbench.benchmark.records.evidence import pieces_of
from armbench.benchmark.records.reporting import project, report_events
from armbench.edge.evidence import EvidenceStore
from armbench.edge.reports import record_path
from armbench.ledger.collector import collector_paused
from armbench.ledger.errors import Refusal, UnknownRun
from armbench.ledger.events import Event, RunStarted
from armbench.ledger.store import EventStore
from armbench.projections.arm_pairs import derive_pairs
from armbench.projections.board import (
    SUMMARY_KINDS,
    RunSummary,
    history,
    published_summary,
    run_pairs,
    summarize,
)
from armbench.projections.diffs import files_of
from armbench.projections.explain import explain
from armbench.projections.record_types import Record, as_record, decode_record
from armbench.projections.results import RunView, fold_run
from armbench.projections.transcripts import turns_of

__all__ = ["Board", "Published"]

Published = Callable[[], dict[str, bytes]]
"""Reads every record on the reports branch, by run id (raises when it cannot be read)."""


R = TypeVar("R", Record, dict[str, Any])


def _served_record(record: R) -> R:
    """A record as the dashboard serves it: without each task's `fix` commit (the answer to the
    task, which anyone who reaches the server could read; the record has no prompt)."""
    if isinstance(record, Record):
        served = [msgspec.structs.replace(t, fix=None) for t in record.tasks]
        return msgspec.structs.replace(record, tasks=served)
    tasks = record.get("tasks")
    if not isinstance(tasks, list) or not any(isinstance(t, dict) and "fix" in t for t in tasks):
        return record
    kept = [{k: v for k, v in t.items() if k != "fix"} if isinstance(t, dict) else t for t in tasks]
    return {**record, "tasks": kept}


class Board:
    """The documents of one checkout's dashboard; each is rebuilt when its run's log grows."""

    def __init__(self, store: EventStore, published: Published | None = None,
                 evidence: EvidenceStore | None = None) -> None:
        self.store, self._published_reader = store, published
        self.evidence = evidence
        """The checkout's evidence folder (None: trial views show no evidence)."""
        self._lock = threading.Lock()
        self._runs: dict[str, tuple[int, dict[str, Any]]] = {}
        self._views: dict[str, tuple[int, RunView, dict[str, list[tuple[int, Event]]]]] = {}
        self.published: dict[str, tuple[Record, dict[str, Any]]] = {}
        self.published_problem: str | None = None
        self.published_skipped: list[str] = []
        """Records on the reports branch that do not decode, each with what was wrong."""

    def refresh_published(self) -> None:
        """Fetch the reports branch again; a branch that cannot be read is said, not fatal."""
        if self._published_reader is None:
            return
        try:
            found = self._published_reader()
        except Exception as exc:  # the branch's failures are many: each is a note on the page
            self.published_problem = str(getattr(exc, "message", exc))
            return
        kept, skipped = {}, []
        for run, data in sorted(found.items()):
            try:
                kept[run] = (decode_record(data), msgspec.json.decode(data))
            except msgspec.DecodeError as exc:
                skipped.append(f"{record_path(run)}: {exc}")
        self.published, self.published_problem = kept, None
        self.published_skipped = skipped

    def run_ids(self) -> list[str]:
        """Every run's id: the ledger's, then those only on the reports branch."""
        mine = self._started()
        return [*mine, *(r for r in self.published if r not in mine)]

    def runs(self) -> dict[str, Any]:
        """The Benchmarks page: every run, newest first, and the suites they ran."""
        mine = list(self._started())
        rows = [summarize(run, self.store.events(run, kinds=SUMMARY_KINDS)) for run in mine]
        rows += [published_summary(rec) for run, (rec, _) in self.published.items()
                 if run not in set(mine)]
        rows.sort(key=lambda r: (r.started_at or "", r.run), reverse=True)
        return {"runs": rows, "suites": sorted({r.suite for r in rows if r.suite}),
                "published_problem": self.published_problem,
                "published_skipped": self.published_skipped}

    def run(self, run: str) -> dict[str, Any]:
        """A run's page and its Compare tab (a ledger run's is kept while its log is unchanged)."""
        started = self._started()
        if run in started:
            version = self.store.version(run)
            with self._lock:
                kept = self._runs.get(run)
                if kept is None or kept[0] != version:
                    kept = (version, self._ledger_run(run))
                    self._runs[run] = kept
            doc = kept[1]
        elif run in self.published:
            rec, raw = self.published[run]
            summary = published_summary(rec)
            doc = {"summary": summary, "record": _served_record(raw), "table": None,
                   "pairs": derive_pairs(rec.arms, rec.trials),
                   "explained": False}
        else:
            raise UnknownRun(run, ledger="This checkout's ledger, like the reports branch,",
                             fix="the dashboard's runs list names those there are")
        suite = doc["summary"].suite
        suites = started | {r: rec.suite.name for r, (rec, _) in self.published.items()
                            if r not in started}
        return doc | {"others": [r for r, s in suites.items() if s == suite and r != run]}

    def _started(self) -> dict[str, str | None]:
        """The ledger's runs, each with its suite (from its RunStarted alone)."""
        return {r.stream: r.event.inputs.get("suite") for r in self.store.all(topics=["RunStarted"])
                if isinstance(r.event, RunStarted)}

    @collector_paused()
    def _ledger_run(self, run: str) -> dict[str, Any]:
        """The run's line, table, pairs and record from one read of the kinds they fold."""
        events = report_events(self.store, run)
        summary = summarize(run, events)
        projected = project(run, events, summary.state if summary.state == "running" else None)
        table = projected.outputs
        return {"summary": summary, "record": _served_record(projected.record), "table": table,
                "pairs": table.get("pairs", []), "explained": True}

    def _folded(self, run: str) -> tuple[RunView, dict[str, list[tuple[int, Event]]]]:
        """The run's view and its events by step (with their places in the log), folded once
        per version of its log."""
        version = self.store.version(run)
        with self._lock:
            kept = self._views.get(run)
            if kept is None or kept[0] != version:
                events = self.store.events(run)
                by_step: dict[str, list[tuple[int, Event]]] = {}
                for i, e in enumerate(events):
                    step = getattr(e, "step", None)
                    if isinstance(step, str):
                        by_step.setdefault(step, []).append((i, e))
                kept = (version, fold_run(events), by_step)
                self._views = {run: kept}
        return kept[1], kept[2]

    @staticmethod
    def _of(by_step: dict[str, list[tuple[int, Event]]], *steps: str) -> list[Event]:
        """The events of these steps, in log order."""
        return [e for _, e in sorted((p for s in steps for p in by_step.get(s, [])),
                                     key=lambda p: p[0])]

    def explain(self, run: str, index: int) -> dict[str, Any]:
        """Why trial `index` of the run's record got its result: `armbench explain`'s answer.

        Each trial is explained from its own steps' events (its prompt, its judge, its check
        and its task's baseline), in log order, so an export of every trial of a large run
        stays linear."""
        view, by_step = self._folded(run)
        if not 0 <= index < len(view.trials):
            raise Refusal(f"Run {run} has no trial number {index}.", code="unknown_trial")
        tv = view.trials[index]
        steps = [tv.trial.prompt_step, tv.trial.judge_step, tv.trial.check_step]
        events = self._of(by_step, *[s for s in steps if s], f"trials.baselines.{tv.trial.task}")
        got = explain(dataclasses.replace(view, trials=[tv]), events, tv.trial.prompt_step)
        return msgspec.to_builtins(got)  # type: ignore[no-any-return]

    def trial(self, run: str, index: int) -> dict[str, Any]:
        """Trial `index`'s view: its kept check and setup output, its diff file by file, its
        transcript as turns, its judges' prompts and answers (local: never in an export)."""
        view, by_step = self._folded(run)
        if not 0 <= index < len(view.trials):
            raise Refusal(f"Run {run} has no trial number {index}.", code="unknown_trial")
        tv = view.trials[index]
        steps = [tv.trial.prompt_step, tv.trial.check_step]
        events = self._of(by_step, *steps)
        doc: dict[str, Any] = {"subject": tv.trial.prompt_step.removesuffix(".prompt"),
                               "collected": False, "pieces": {}, "note": None}
        if self.evidence is None:
            return doc | {"note": "Evidence is shown only by a dashboard served from the checkout "
                                  "that ran the trial: an export never holds it."}
        collected = run in self.evidence.collected()
        pieces = pieces_of(events, steps, self.evidence, collected)
        if collected:
            when = self.evidence.collected()[run]
            return doc | {"collected": True,
                          "note": f"The evidence of this run was collected by armbench gc on {when}."}
        if not pieces:
            return doc | {"note": "This trial kept no evidence (its run used --no-evidence, or "
                                  "its steps never ran)."}
        shown: dict[str, Any] = {}
        for name, piece in pieces.items():
            text = piece.text() if piece.data is not None else None
            value: Any = text
            if text is not None and name == "diff":
                value = msgspec.to_builtins(files_of(text))
            elif piece.data is not None and name == "transcript":
                value = msgspec.to_builtins(turns_of(piece.data))
            shown[name] = {"value": value, "cut": piece.kept.cut, "redacted": piece.kept.redacted,
                           "missing": piece.data is None}
        return doc | {"pieces": shown}

    def explain_baseline(self, run: str, index: int) -> dict[str, Any]:
        """Why baseline `index` of the run's record got its status."""
        view, by_step = self._folded(run)
        tasks = list(view.baselines)
        if not 0 <= index < len(tasks):
            raise Refusal(f"Run {run} has no baseline number {index}.", code="unknown_trial")
        events = self._of(by_step, f"trials.baselines.{tasks[index]}")
        return msgspec.to_builtins(  # type: ignore[no-any-return]
            explain(view, events, f"baseline:{tasks[index]}"))

    def record_of(self, run: str) -> Record:
        doc = self.run(run)
        return as_record(doc["record"])

    def compare(self, earlier: str, later: str) -> dict[str, Any]:
        """Two runs of the same suite, arm by arm, measured from `earlier` to `later`."""
        a, b = self.record_of(earlier), self.record_of(later)
        if a.suite.name != b.suite.name:
            raise Refusal(f"Runs {earlier} and {later} ran different suites ({a.suite.name} and "
                          f"{b.suite.name}); only runs of the same suite compare.",
                          code="not_comparable")
        if (a.started_at or "", a.run) > (b.started_at or "", b.run):
            a, b = b, a
        return {"from": a.run, "to": b.run, "suite": a.suite.name, "pairs": run_pairs(a, b)}

    def history(self, suite: str) -> dict[str, Any]:
        """A suite's runs, each arm's pass rate with its interval, and the gate's flags."""
        runs: list[RunSummary] = self.runs()["runs"]
        records = [self.record_of(r.run) for r in runs if r.suite == suite
                   and r.state != "running"]
        return {"suite": suite, "runs": history(records, suite)}
