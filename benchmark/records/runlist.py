"""The ledger's runs, listed and looked up: what `armbench runs` and `log` read, kept apart from
the audit verbs so those commands start without the record's projections."""

from __future__ import annotations

from collections.abc import Collection

from armbench.ledger.errors import UnknownRun
from armbench.ledger.events import Event
from armbench.ledger.store import EventStore
from armbench.projections.runs import ROW_KINDS, RunRow, fold_run_row

__all__ = ["list_runs", "run_events"]


def run_events(store: EventStore, run: str, *,
               kinds: Collection[type[Event]] | None = None) -> list[Event]:
    """A run's events (only `kinds` when given), or a refusal naming the runs there are."""
    events = store.events(run, kinds=kinds)
    if not events:
        known = [r.stream for r in store.all(topics=["RunStarted"])][-5:]
        raise UnknownRun(run, fix=f"recent runs: {', '.join(known) or 'none'}; armbench runs "
                         "lists them all")
    return events


def list_runs(store: EventStore) -> list[RunRow]:
    """Every run in the ledger, oldest first."""
    runs = [r.stream for r in store.all(topics=["RunStarted"])]
    return [fold_run_row(run, store.events(run, kinds=ROW_KINDS)) for run in runs]
