"""Appending through a decider: a run's state folded at a version, the decider's events appended
at exactly that version, folded and decided again when another writer got there first.

Publication, `replay --write` and `judge calibrate` append to runs that other processes may be
appending to at the same time (aggregates/runrecord.py says what each may append).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from armbench.aggregates.runrecord import FOLDED, RecordState, fold
from armbench.ledger.errors import ConcurrencyConflict
from armbench.ledger.events import Event
from armbench.ledger.store import EventStore

__all__ = ["APPEND_TRIES", "append_decided", "record_state"]

APPEND_TRIES = 5
"""How often a decision is made again after another writer appended first, before giving up."""

Decide = Callable[[RecordState], list[Event]]


def record_state(store: EventStore, run: str,
                 kinds: Sequence[type[Event]] = FOLDED) -> RecordState:
    """The run's `RecordState` as the store holds it now, from the events of `kinds` (only those
    are decoded): its version first, then the events up to it, so nothing appended in between is
    decided on and missed by the expected version."""
    version = store.version(run)
    return fold(run, ((r.version, r.event) for r in store.read(run, kinds=kinds)), version)


def append_decided(store: EventStore, run: str, decide: Decide, *,
                   tries: int = APPEND_TRIES,
                   kinds: Sequence[type[Event]] = FOLDED) -> tuple[list[Event], int]:
    """Fold the run, decide, and append the decision at the version it was made on; after a
    conflict, fold and decide again (`tries` times in all). The events appended (none when the
    decider found nothing left to record) and the run's version after them; the state is folded
    from `kinds`, the ones the decider reads (`aggregates.runrecord`). The decider's own
    refusals pass through; a `ConcurrencyConflict` names the run when every try lost."""
    for _ in range(tries):
        state = record_state(store, run, kinds)
        events = decide(state)
        if not events:
            return [], state.version
        try:
            return events, store.append(run, events, expected_version=state.version)
        except ConcurrencyConflict:
            continue
    raise ConcurrencyConflict(
        f"Could not append to run {run}: another writer appended to it each of {tries} times "
        "this process decided. Nothing was recorded; try again once the other writer is done.")
