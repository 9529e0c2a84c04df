"""Auditing a run from its log: list, log, explain, replay, verify."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from pathlib import Path
from typing import Any

import msgspec

from benchmark.reporting import REPORTED, project
from ledger.collector import collector_paused
from ledger.errors import Refusal
from ledger.events import Event, RecordWritten, RunStarted
from ledger.store import EventStore, verify_chain
from projections.explain import Explanation, explain
from projections.record import encode_record
from projections.replay import diff_records
from projections.results import fold_run
from projections.runs import ROW_KINDS, RunRow, fold_run_row

__all__ = [
    "Replay",
    "explain_trial",
    "list_runs",
    "record_changes",
    "replay_run",
    "run_events",
    "verify_run",
]


def run_events(store: EventStore, run: str, *,
               kinds: Collection[type[Event]] | None = None) -> list[Event]:
    """A run's events (only `kinds` when given), or a refusal naming the runs there are."""
    events = store.events(run, kinds=kinds)
    if not events:
        known = [r.stream for r in store.all(topics=["RunStarted"])][-5:]
        raise Refusal(f"The ledger has no run {run!r}. Recent runs: {', '.join(known) or 'none'} "
                      "(armbench runs lists them all).", code="unknown_run")
    return events


def list_runs(store: EventStore) -> list[RunRow]:
    """Every run in the ledger, oldest first."""
    runs = [r.stream for r in store.all(topics=["RunStarted"])]
    return [fold_run_row(run, store.events(run, kinds=ROW_KINDS)) for run in runs]


def explain_trial(store: EventStore, run: str, subject: str) -> Explanation:
    """Why a trial or a baseline got its result."""
    events = run_events(store, run)
    return explain(fold_run(events), events, subject)


class Replay(msgspec.Struct, frozen=True, kw_only=True):
    """The tables rebuilt with today's code, and what changed against the stored record."""

    text: str
    table: dict[str, Any]
    changes: list[str]
    record_found: bool
    written: bool


@collector_paused()
def replay_run(store: EventStore, run: str, runs_dir: Path, *, write: bool,
               now: Any) -> Replay:
    """Rebuild every projection of the run; with write, replace the stored record.

    The cycle collector stays paused throughout: the events, the view and the record are
    acyclic and all freed on return, so no collection needs to scan them on the way.
    """
    projected = project(run, run_events(store, run, kinds=REPORTED), None)
    record = projected.record
    path = runs_dir / run / "benchmark.json"
    found = path.exists()
    changes = record_changes(path.read_bytes(), record) if found else ["no stored record"]
    written = False
    if write and changes:
        data = encode_record(record)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        store.append(run, [RecordWritten(sha256=hashlib.sha256(data).hexdigest(), at=now())],
                     expected_version=store.version(run))
        written = True
    return Replay(text=projected.text, table=projected.outputs, changes=changes,
                  record_found=found, written=written)


def record_changes(stored: bytes, rebuilt: dict[str, Any]) -> list[str]:
    """What changed between a stored record's bytes and the record rebuilt now ([] when the
    content is the same). The bytes are compared first, so an unchanged record is never decoded."""
    if encode_record(rebuilt) == stored:
        return []
    try:
        with collector_paused():
            old = msgspec.json.decode(stored)
    except msgspec.DecodeError as exc:
        return [f"the stored record is not readable JSON ({exc})"]
    if not isinstance(old, dict):
        return ["the stored record is not a JSON object"]
    return diff_records(old, rebuilt)


@collector_paused()
def verify_run(store: EventStore, run: str, runs_dir: Path) -> list[str]:
    """Problems found: a broken hash chain (first bad position) or a record unlike its log."""
    rows = store.read_raw(run)
    if not rows:
        raise Refusal(f"The ledger has no run {run!r}.", code="unknown_run")
    problems = []
    broken = verify_chain(rows)
    if broken is not None:
        problems.append(f"event {broken.position}: {broken.reason}")
        return problems
    events = [r.event for r in store.read(run)]
    if not isinstance(events[0], RunStarted):
        problems.append("event 1: a run's log must start with RunStarted")
    written = [e for e in events if isinstance(e, RecordWritten)]
    path = runs_dir / run / "benchmark.json"
    if written:
        if not path.exists():
            problems.append(f"the record {path} is missing")
        else:
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() != written[-1].sha256:
                problems.append("the record's bytes differ from the record the log says was "
                                "written")
            rebuilt = project(run, events, None).record
            if record_changes(data, rebuilt):
                problems.append("the record does not match what its log projects to (run "
                                "armbench replay to see how)")
    elif path.exists():
        problems.append(f"the record {path} exists but the log never says it was written (its "
                        "last events may have been removed)")
    return problems
