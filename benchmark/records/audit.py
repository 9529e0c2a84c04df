"""Auditing a run from its log: list, log, explain, replay, verify."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

from aggregates.runrecord import RECORD_FACTS, RewriteRecord, StaleRecord, decide_rewrite
from benchmark.records.decided import APPEND_TRIES, append_decided
from benchmark.records.reporting import (
    REPORTED,
    Projected,
    chain_head,
    project,
    project_record,
    record_file,
)
from benchmark.records.runlist import run_events
from ledger.chaincheck import rule_for
from ledger.checkfacts import check_breaks
from ledger.collector import collector_paused
from ledger.errors import ArmbenchError, ConcurrencyConflict, Refusal, UnknownRun
from ledger.events import Event, PlanFrozen, RecordPublished, RecordQueued, RecordWritten, RunStarted
from ledger.leases import lease_breaks
from ledger.store import EventStore, decode_event, verify_chain
from projections.explain import Explanation, explain
from projections.labels import rescore
from projections.record import RecordChain, encode_record, read_record_chain
from projections.record_types import Record
from projections.replay import diff_records
from projections.results import fold_run

__all__ = [
    "Replay",
    "explain_trial",
    "plan_of",
    "record_changes",
    "replay_run",
    "verify_run",
]


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


def plan_of(store: EventStore, run: str) -> PlanFrozen:
    """The run's frozen plan; a run without one is refused."""
    plan = next((e for e in store.events(run, kinds=(PlanFrozen,)) if isinstance(e, PlanFrozen)), None)
    if plan is None:
        raise UnknownRun(run, what="planned run")
    return plan


@collector_paused()
def replay_run(store: EventStore, run: str, runs_dir: Path, *, write: bool,
               now: Any, scores: Mapping[str, Mapping[str, float]] | None = None,
               queue: Callable[[], RecordQueued | None] | None = None) -> Replay:
    """Rebuild every projection of the run; with write, replace the stored record, and, when
    `queue` gives an event (the project publishes), queue the new record for publication with
    it, so `armbench publish` pushes it and the reports branch stops holding the stale one.

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
        events, moved = rescore(events, scores)
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
               published: Published | None = None) -> list[str]:
    """Problems found: the ledger key missing or different, a broken chain (first bad
    position), events that break the lease rule, a check's result unlike its step's report,
    step or lease (`ledger.checkfacts`), a record unlike its log, a published chain
    head unlike the ledger's. `key_file` is named in messages; `published` reads the published
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
