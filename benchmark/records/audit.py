"""Auditing a run from its log: list, log, explain, replay, verify."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from armbench.aggregates.runrecord import RECORD_FACTS, RewriteRecord, StaleRecord, decide_rewrite
from armbench.benchmark.records.decided import APPEND_TRIES, append_decided
from armbench.benchmark.records.evidence import evidence_problems, pieces_of
from armbench.benchmark.records.reporting import (
    REPORTED,
    Projected,
    chain_head,
    project,
    project_record,
    record_file,
)
from armbench.benchmark.records.runlist import run_events
from armbench.edge.evidence import EvidenceStore
from armbench.ledger.chaincheck import rule_for
from armbench.ledger.checkfacts import check_breaks
from armbench.ledger.collector import collector_paused
from armbench.ledger.errors import ArmbenchError, ConcurrencyConflict, Refusal, UnknownRun
from armbench.ledger.events import (
    CheckRan,
    Event,
    PlanFrozen,
    PlannedScorer,
    RecordPublished,
    RecordQueued,
    RecordWritten,
    RunStarted,
)
from armbench.ledger.leases import lease_breaks
from armbench.ledger.store import EventStore, decode_event, verify_chain
from armbench.projections.explain import Explanation, explain, trial_steps
from armbench.projections.labels import rejudged, rescore
from armbench.projections.record import RecordChain, encode_record, read_record_chain
from armbench.projections.record_types import Record
from armbench.projections.replay import diff_records
from armbench.projections.results import fold_run
from armbench.projections.transcripts import render_turns, turns_of

__all__ = [
    "OUTPUT_LINES",
    "Replay",
    "Shown",
    "explain_trial",
    "plan_of",
    "record_changes",
    "replay_run",
    "show_evidence",
    "verify_run",
]


OUTPUT_LINES = 25
"""How many of the check's (or setup's) last lines `explain` shows."""
_SHOWN = ("passed", "valid")
"""Results whose check output `explain` leaves out (nothing went wrong to explain)."""


def explain_trial(store: EventStore, run: str, subject: str,
                  evidence: EvidenceStore | None = None) -> Explanation:
    """Why a trial or a baseline got its result; for one that did not pass, the last lines of
    its check's (or setup's) output from the kept evidence (`evidence`: the evidence folder)."""
    events = run_events(store, run)
    view = fold_run(events)
    got = explain(view, events, subject)
    if evidence is None or got.result in _SHOWN:
        return got
    _, steps = trial_steps(view, subject)
    collected = run in evidence.collected()
    pieces = pieces_of(events, steps, evidence, collected)
    piece, kind = next(((pieces[k], k) for k in ("check", "setup") if k in pieces), (None, None))
    if piece is None:
        ran = any(isinstance(e, CheckRan) and e.step in steps and e.cause != "setup_failed"
                  for e in events)
        if not ran:
            return got
        return msgspec.structs.replace(got, evidence="The run kept no output of this trial's "
                                       "check (it ran with --no-evidence, or before armbench "
                                       "kept it).")
    if piece.collected or piece.data is None:
        why = (f"collected by armbench gc on {evidence.collected()[run]}" if piece.collected
               else f"not in {evidence.root} on this machine")
        return msgspec.structs.replace(got, output_of=kind,
                                       evidence=f"The {kind}'s output was kept but is {why}.")
    lines = piece.text().rstrip("\n").splitlines()[-OUTPUT_LINES:]
    return msgspec.structs.replace(got, output=lines, output_of=kind,
                                   evidence=piece.kept.cut)


class Shown(msgspec.Struct, frozen=True, kw_only=True):
    """One piece of a trial's kept evidence, for `armbench show`."""

    subject: str
    kind: str
    """check, setup, diff, transcript, or judge (every judge prompt and answer)."""
    text: str
    """The piece as people read it (a transcript as turns)."""
    raw: str | None
    """The piece as kept (None: not on this machine)."""
    sha256: str | None
    cut: str | None
    collected: bool = False
    note: str | None = None
    """Why nothing is shown, when nothing is."""


def show_evidence(store: EventStore, run: str, subject: str, kind: str,
                  evidence: EvidenceStore) -> Shown:
    """The kept `kind` of a trial (or baseline) of the run: its text and raw bytes."""
    events = run_events(store, run)
    name, steps = trial_steps(fold_run(events), subject)
    collected = run in evidence.collected()
    pieces = pieces_of(events, steps, evidence, collected)
    if kind == "judge":
        judged = [(k, p) for k, p in pieces.items() if k.startswith(("judge_prompt:", "judge_answer:"))]
        if not judged:
            return Shown(subject=name, kind=kind, text="", raw=None, sha256=None, cut=None,
                         collected=collected, note=_none_kept(name, kind, collected, evidence, run))
        text = "".join(f"== {k.replace('_', ' ', 1)} ==\n{p.text()}\n" for k, p in judged)
        return Shown(subject=name, kind=kind, text=text, raw=text, sha256=None, cut=None,
                     collected=collected)
    piece = pieces.get(kind)
    if piece is None or piece.data is None:
        return Shown(subject=name, kind=kind, text="", raw=None,
                     sha256=piece.kept.sha256 if piece else None,
                     cut=piece.kept.cut if piece else None, collected=collected,
                     note=_none_kept(name, kind, collected, evidence, run, piece is not None))
    raw = piece.text()
    text = render_turns(turns_of(piece.data)) if kind == "transcript" else raw
    return Shown(subject=name, kind=kind, text=text, raw=raw, sha256=piece.kept.sha256,
                 cut=piece.kept.cut, collected=collected)


def _none_kept(name: str, kind: str, collected: bool, evidence: EvidenceStore, run: str,
               named: bool = False) -> str:
    if collected:
        return (f"The evidence of run {run} was collected by armbench gc on "
                f"{evidence.collected()[run]}; its {kind} is no longer kept.")
    if named:
        return (f"The {kind} of {name} was kept, but its file is not in {evidence.root} on this "
                "machine (kept where the trial ran, or removed by hand).")
    return (f"No {kind} was kept for {name} (the run kept no evidence, the step never ran, or "
            f"it has no {kind}).")


class Replay(msgspec.Struct, frozen=True, kw_only=True):
    """The tables rebuilt with today's code, and what changed against the stored record."""

    text: str
    table: dict[str, Any]
    changes: list[str]
    record_found: bool
    written: bool


def plan_of(store: EventStore, run: str) -> PlanFrozen:
    """The run's frozen plan; a run without one is refused."""
    plan = next((e for e in store.events(run, kinds=(PlanFrozen,)) if isinstance(e, PlanFrozen)), None)
    if plan is None:
        raise UnknownRun(run, what="planned run")
    return plan


@collector_paused()
def replay_run(store: EventStore, run: str, runs_dir: Path, *, write: bool,
               now: Any, scores: Mapping[str, Mapping[str, float]] | None = None,
               rejudge: Mapping[str, PlannedScorer] | None = None,
               queue: Callable[[], RecordQueued | None] | None = None) -> Replay:
    """Rebuild every projection of the run; with write, replace the stored record, and, when
    `queue` gives an event (the project publishes), queue the new record for publication with
    it, so `armbench publish` pushes it and the reports branch stops holding the stale one.

    With `scores` (`--rescore`): the tables as today's scorer files make them, never written:
    each scorer in `rejudge` (its rubric or labels changed) with the verdicts the run's judge
    gave again (`benchmark.rescore`, appended before), each other label scored by its file's
    mapping.

    The cycle collector stays paused throughout: the events, the view and the record are
    acyclic and all freed on return, so no collection needs to scan them on the way.
    """
    events = run_events(store, run, kinds=REPORTED)
    moved: list[str] = []
    if scores is not None:
        if write:
            raise Refusal("replay --rescore shows what today's scorer files would make of the run's "
                          "labels; it never replaces the record, whose scores are the frozen plan's. "
                          "Leave out --write.", code="invalid_inputs")
        events, moved = rejudged(events, rejudge or {})
        events, remapped = rescore(events, scores)
        moved += remapped
    path = record_file(runs_dir, run)
    found = path.exists()
    stored = path.read_bytes() if found else b""
    kept = read_record_chain(stored)  # the head the stored record was written with
    projected = project(run, events, None,
                        chain_head(store, run, kept.event) if kept is not None else None)
    changes = moved + (record_changes(stored, projected.record) if found else ["no stored record"])
    written = False
    if write and changes:  # a new record: the chain head now, before its RecordWritten
        projected = _rewrite(store, run, path, now, queue)
        written = True
    return Replay(text=projected.text, table=projected.outputs, changes=changes,
                  record_found=found, written=written)


def _rewrite(store: EventStore, run: str, path: Path, now: Any,
             queue: Callable[[], RecordQueued | None] | None) -> Projected:
    """Write the record of the run's whole log and its RecordWritten, through the rewrite decider
    (`aggregates.runrecord.decide_rewrite`): a record projected before another writer appended
    (a publication, a calibration, another replay) is projected again, `APPEND_TRIES` times."""
    for _ in range(APPEND_TRIES):
        head = chain_head(store, run)  # before the events, so the record is never past them
        projected = project(run, run_events(store, run, kinds=REPORTED), None, head)
        data = encode_record(projected.record)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        command = RewriteRecord(sha256=hashlib.sha256(data).hexdigest(),
                                head=head.event if head else 0, at=now(),
                                queued=queue() if queue is not None else None)
        try:
            append_decided(store, run, partial(decide_rewrite, command=command), tries=1,
                           kinds=RECORD_FACTS)
        except (StaleRecord, ConcurrencyConflict):
            continue
        return projected
    raise ConcurrencyConflict(
        f"Could not rewrite run {run}'s record: another writer appended to the run each of "
        f"{APPEND_TRIES} times it was projected. Its record file may be ahead of its log: run "
        f"`armbench replay {run} --write` again once the other writer is done.")


def record_changes(stored: bytes, rebuilt: Record) -> list[str]:
    """What changed between a stored record's bytes and the record rebuilt now ([] when the
    content is the same). The bytes are compared first, so an unchanged record is never decoded."""
    if encode_record(rebuilt) == stored:
        return []
    try:
        old = msgspec.json.decode(stored)
    except msgspec.DecodeError as exc:
        return [f"the stored record is not readable JSON ({exc})"]
    if not isinstance(old, dict):
        return ["the stored record is not a JSON object"]
    return diff_records(old, msgspec.to_builtins(rebuilt))


Published = Callable[[str], bytes | None]
"""Reads a run's record from the reports branch (None: the branch holds none for it)."""


@collector_paused()
def verify_run(store: EventStore, run: str, runs_dir: Path, *, key_file: Path | None = None,
               published: Published | None = None,
               evidence: EvidenceStore | None = None) -> list[str]:
    """Problems found: the ledger key missing or different, a broken chain (first bad
    position), events that break the lease rule, a check's result unlike its step's report,
    step or lease (`ledger.checkfacts`), a record unlike its log, kept evidence altered or
    missing (`evidence`: the evidence folder), a published chain head unlike the ledger's.
    `key_file` is named in messages; `published` reads the published
    copy of a run that was published (not read when None)."""
    rows = store.read_raw(run)
    if not rows:
        raise UnknownRun(run)
    rule, problem = rule_for(run, rows, key=store.key, seal=store.seal(),
                             ledger_keyed=store.has_keyed_rows(),
                             key_file=str(key_file or "the ledger key file"))
    if problem is not None:
        return [problem]
    broken = verify_chain(rows, stream=run, rule=rule)
    if broken is not None:
        return [f"event {broken.position}: {broken.reason}"]
    events = [decode_event(state) for _, state in rows]  # the rows the chain was checked on
    problems = [str(b) for b in sorted([*lease_breaks(events), *check_breaks(events)],
                                       key=lambda b: b.position)]
    if not isinstance(events[0], RunStarted):
        problems.append("event 1: a run's log must start with RunStarted")
    problems += _record_problems(store, run, runs_dir, events)
    if evidence is not None:
        problems += evidence_problems(events, evidence, run)
    if published is not None:
        problems += _published_problems(store, run, events, published)
    return problems


def _record_problems(store: EventStore, run: str, runs_dir: Path, events: list[Event]) -> list[str]:
    written = [e for e in events if isinstance(e, RecordWritten)]
    path = record_file(runs_dir, run)
    if not written:
        if path.exists():
            return [f"the record {path} exists but the log never says it was written (its last "
                    "events may have been removed)"]
        return []
    if not path.exists():
        return [f"the record {path} is missing"]
    problems = []
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != written[-1].sha256:
        problems.append("the record's bytes differ from the record the log says was written")
    kept = read_record_chain(data)
    head = chain_head(store, run, kept.event) if kept is not None else None
    if kept is not None and head != kept:
        problems.append(f"the record's chain head {_shown(kept)} is not the ledger's "
                        f"{_shown(head)}: the log or the record was rewritten")
    if record_changes(data, project_record(run, events, None, head)):
        problems.append("the record does not match what its log projects to (run armbench "
                        "replay to see how)")
    return problems


def _published_problems(store: EventStore, run: str, events: list[Event],
                        published: Published) -> list[str]:
    done = [e for e in events if isinstance(e, RecordPublished)]
    if not done:
        return []
    try:
        data = published(run)
    except ArmbenchError as exc:
        return [f"the published record could not be read ({exc.message}); verify again when "
                "the reports repo can be reached"]
    if data is None:
        return [f"the log says the record was published ({done[-1].path} at commit "
                f"{done[-1].commit[:12]}), but the reports branch holds no record for this run"]
    there = read_record_chain(data)
    if there is None:
        return []  # published before records carried their chain head
    head = chain_head(store, run, there.event)
    if head != there:
        return [f"the published record's chain head {_shown(there)} differs from the ledger's "
                f"{_shown(head)}: the ledger was rewritten after the record was published (or "
                "the published copy was changed)"]
    return []


def _shown(chain: RecordChain | None) -> str:
    if chain is None:
        return "(none: the log has no such event)"
    return f"({chain.kind} at event {chain.event}: {chain.head[:16]})"
