"""Where a run's record stands on its way to the reports branch, folded from the log.

A record is pending from its `RecordQueued` until a `RecordPublished`; a failed delivery
(`RecordDeliveryFailed`) leaves it pending. The ledger is the queue: nothing else says what
waits for publication.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from armbench.ledger.events import Event, RecordPublished, RecordQueued

__all__ = ["Publication", "pending_runs", "publication_state"]

Publication = Literal["pending", "published"]


def publication_state(events: Iterable[Event]) -> Publication | None:
    """One run's publication state from its events; None when its record was never queued."""
    state: Publication | None = None
    for event in events:
        kind = type(event)
        if kind is RecordQueued:
            state = "pending"
        elif kind is RecordPublished and state is not None:
            state = "published"
    return state


def pending_runs(log: Iterable[tuple[str, Event]]) -> list[str]:
    """The runs whose record is queued and not yet published, oldest queued first."""
    states: dict[str, Publication] = {}
    for run, event in log:
        if isinstance(event, RecordQueued):
            states.pop(run, None)
            states[run] = "pending"
        elif isinstance(event, RecordPublished) and run in states:
            states[run] = "published"
    return [run for run, state in states.items() if state == "pending"]
