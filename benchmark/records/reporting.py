"""The report verb: project the run's log into the table and the record, and write the record."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from armbench.ledger.collector import collector_paused
from armbench.ledger.events import Event, RecordPublished, RecordQueued, RecordWritten
from armbench.ledger.store import EventStore
from armbench.projections.publication import publication_state
from armbench.projections.record import RecordChain, build_record, encode_record, trial_entries
from armbench.projections.record_types import Record, RecordTrial
from armbench.projections.results import FOLDED, RunView, fold_run

if TYPE_CHECKING:  # the table (its pairs and their statistics) is imported when one is built
    from armbench.projections.table import ResultsTable

__all__ = ["REPORTED", "Projected", "chain_head", "project", "project_record", "project_run",
           "record_file", "report_events", "write_report"]

REPORTED: tuple[type, ...] = (*FOLDED, RecordQueued, RecordPublished)
"""The event kinds the table and the record are projected from (the rest are never decoded)."""


class Projected(NamedTuple):
    """A run's table and record, as the log projects them."""

    table: ResultsTable
    record: Record

    @property
    def text(self) -> str:
        """The table as Markdown."""
        from armbench.projections.table import render_markdown

        return render_markdown(self.table)

    @property
    def outputs(self) -> dict[str, Any]:
        """The table as plain data (the done envelope's `outputs.table`)."""
        table: dict[str, Any] = msgspec.to_builtins(self.table)
        return table

    def restated(self, events: Iterable[Event]) -> Projected:
        """The same projection with the record's publication state as `events` leave it."""
        table = msgspec.structs.replace(self.table, record=publication_state(events))
        return self._replace(table=table)


def chain_head(store: EventStore, run: str, version: int | None = None) -> RecordChain | None:
    """The run's chain head for its record: the chain value of its event at `version` (by
    default its last event now; read before the events a report projects, so the head is never
    past them)."""
    got = store.head(run) if version is None else store.chain_at(run, version)
    return None if got is None else RecordChain(kind=got.kind, event=got.event, head=got.head)


def report_events(store: EventStore, run: str) -> list[Event]:
    """The run's events a report folds, read without decoding the others."""
    return store.events(run, kinds=REPORTED)


@collector_paused()
def project_run(store: EventStore, run: str, run_state: str | None) -> Projected:
    """The run's table and record from its log as the store holds it now; an entry point: the
    collector is paused once around the read and the projection (the events are freed before
    it resumes)."""
    return project(run, report_events(store, run), run_state)


def project(run: str, events: list[Event], run_state: str | None,
            chain: RecordChain | None = None) -> Projected:
    """The table and the record from the log alone; `run_state` is the outcome while the run
    has not ended; `chain`, the run's chain head, goes into the record as given. Pauses no
    collector: its callers' entry points do (`ledger.collector`)."""
    from armbench.projections.table import build_table

    view = fold_run(events)
    trials = trial_entries(view, view.plan) if view.plan is not None else None
    table = build_table(view, record=publication_state(events), trials=trials)
    return Projected(table, _record(view, run, trials, run_state, chain))


def project_record(run: str, events: list[Event], run_state: str | None,
                   chain: RecordChain | None = None) -> Record:
    """The record alone, exactly as `project` makes it, without the table: the record holds no
    pairs (they are derived when read), so checking a record against its log (`verify`,
    `export`) computes no interval and loads no statistics library."""
    view = fold_run(events)
    trials = trial_entries(view, view.plan) if view.plan is not None else None
    return _record(view, run, trials, run_state, chain)


def _record(view: RunView, run: str, trials: list[RecordTrial] | None, run_state: str | None,
            chain: RecordChain | None) -> Record:
    record = build_record(view, run=run, trials=trials, chain=chain)
    if record.outcome is None:
        record = msgspec.structs.replace(record, outcome=run_state)
    return record


def record_file(runs_dir: Path, run: str) -> Path:
    """Where a run's record is kept: `<runs_dir>/<run>/benchmark.json`."""
    return runs_dir / run / "benchmark.json"


def write_report(run: str, events: list[Event], run_state: str, runs_dir: Path,
                 now: datetime, chain: RecordChain | None = None) -> tuple[RecordWritten, Projected]:
    """Write `<runs_dir>/<run>/benchmark.json` (with the run's chain head `chain`); return the
    event that says so, and the projection."""
    projected = project(run, events, run_state, chain)
    data = encode_record(projected.record)
    target = record_file(runs_dir, run)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".json.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
    return RecordWritten(sha256=hashlib.sha256(data).hexdigest(), at=now), projected
