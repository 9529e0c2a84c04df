"""The lease rule: a step's report (`StepReported`, or an attempt's transient failure,
`AttemptFailed`, which hands the step back) and a check's result (`CheckRan`) are facts only
from the lease that holds the step, and only once per step per lease; and a step once
reported or skipped is never leased again (so a second report cannot be had by a fresh lease).

`LeaseBook` folds the events that lease, release and report steps, and says why an event breaks
the rule. The store refuses such an event at append; `verify` names any that is in a log. The
workflow decider keeps the same rule in its own state (`aggregates.workflow`).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    Event,
    LeaseExpired,
    StepLeased,
    StepReported,
    StepSkipped,
)

__all__ = ["LEASE_TAGS", "LeaseBook", "LeaseBreak", "lease_breaks"]

LEASE_TAGS = ("StepLeased", "LeaseExpired", "StepSkipped", "StepReported", "AttemptFailed",
              "CheckRan")
"""The tags of the events the rule folds (the store reads only these to catch up)."""


class LeaseBreak(msgspec.Struct, frozen=True, kw_only=True):
    """An event the lease rule refuses."""

    position: int
    """Its version in the run's stream."""
    kind: str
    """StepReported, AttemptFailed, CheckRan, or StepLeased (of a step already settled)."""
    step: str
    """The step it is about."""
    why: str
    """Why it breaks the rule."""

    def __str__(self) -> str:
        return f"event {self.position}: {self.kind} for step {self.step!r} {self.why}"


class LeaseBook:
    """Which lease holds each step, which recorded a check, which steps settled."""

    __slots__ = ("checked", "held", "settled", "version")

    def __init__(self) -> None:
        self.held: dict[str, str] = {}
        self.checked: dict[str, str] = {}
        self.settled: dict[str, str] = {}
        """Step -> how it settled: `reported (under lease l…)` or `skipped`."""
        self.version = 0

    def refusal(self, event: Event) -> str | None:
        """Why the rule refuses `event` now (None: it may be recorded)."""
        if isinstance(event, StepLeased) and event.step in self.settled:
            return f"comes after the step was already {self.settled[event.step]}"
        if isinstance(event, StepReported | AttemptFailed):
            return self._unheld(event.step, event.lease)
        if isinstance(event, CheckRan):
            lease = self.held.get(event.step)
            if lease is None:
                return self._unheld(event.step, None)
            if self.checked.get(event.step) == lease:
                return f"comes a second time under lease {lease}"
        return None

    def _unheld(self, step: str, lease: str | None) -> str | None:
        held = self.held.get(step)
        if held is not None and (lease is None or lease == held):
            return None
        if held is not None:
            return f"comes from lease {lease}, but the step is leased to {held}"
        if step in self.settled:
            return f"comes after the step was already {self.settled[step]}"
        return "comes for a step that no lease holds (never leased, or its lease lapsed)"

    def save(self, step: str) -> tuple[str | None, str | None, str | None]:
        """What the book says about one step (to put back with `restore`)."""
        return self.held.get(step), self.checked.get(step), self.settled.get(step)

    def restore(self, step: str, saved: tuple[str | None, str | None, str | None]) -> None:
        """Put back what `save` gave for the step."""
        for book, value in zip((self.held, self.checked, self.settled), saved, strict=True):
            if value is None:
                book.pop(step, None)
            else:
                book[step] = value

    def apply(self, event: Event) -> None:
        """Fold one event (any kind; those the rule does not read change nothing)."""
        self.version += 1
        if isinstance(event, StepLeased):
            self.held[event.step] = event.lease
        elif isinstance(event, LeaseExpired | AttemptFailed):  # the step goes back to pending
            if self.held.get(event.step) == event.lease:
                del self.held[event.step]
        elif isinstance(event, StepSkipped):
            self.held.pop(event.step, None)
            self.settled.setdefault(event.step, "skipped")
        elif isinstance(event, StepReported):
            if self.held.get(event.step) == event.lease:
                del self.held[event.step]
                self.settled[event.step] = f"reported (under lease {event.lease})"
        elif isinstance(event, CheckRan):
            lease = self.held.get(event.step)
            if lease is not None:
                self.checked[event.step] = lease


def lease_breaks(events: Iterable[Event]) -> list[LeaseBreak]:
    """Every event of a run's log (in order, from version 1) that breaks the lease rule."""
    book, found = LeaseBook(), []
    for event in events:
        why = book.refusal(event)
        if why is not None and isinstance(event, StepReported | AttemptFailed | CheckRan | StepLeased):
            found.append(LeaseBreak(position=book.version + 1, kind=type(event).__name__,
                                    step=event.step, why=why))
        book.apply(event)
    return found
