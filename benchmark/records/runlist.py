"""The ledger's runs, listed and looked up: what `armbench runs` and `log` read, kept apart from
the audit verbs so those commands start without the record's projections."""

from __future__ import annotations

from collections.abc import Collection

from armbench.ledger.errors import RunTampered, UnknownRun
from armbench.ledger.events import Event
from armbench.ledger.store import EventStore
from armbench.projections.runs import ROW_KINDS, RunRow, fold_run_row

__all__ = ["list_runs", "run_events"]


def run_events(store: EventStore, run: str, *,
               kinds: Collection[type[Event]] | None = None) -> list[Event]:
    """A run's events (only `kinds` when given), or a refusal naming the runs there are."""
    events = store.events(run, kinds=kinds)
    if not events:
        known = store.run_ids()[-5:]
        raise UnknownRun(run, fix=f"recent runs: {', '.join(known) or 'none'}; armbench runs "
                         "lists them all")
    return events


def list_runs(store: EventStore) -> list[RunRow]:
    """Every run in the ledger, oldest first: a tampered or quarantined run as such, with its
    problem, and nothing else of it read."""
    rows = []
    aside = store.quarantined()
    for run in store.run_ids():
        if run in aside:
            rows.append(RunRow(run=run, state="quarantined", problem=aside[run].reason))
            continue
        try:
            rows.append(fold_run_row(run, store.events(run, kinds=ROW_KINDS)))
        except RunTampered as tampered:
            rows.append(RunRow(run=run, state="tampered",
                               problem=f"event {tampered.position}: {tampered.reason}"))
    return rows
