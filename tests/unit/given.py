"""Given events, when a command, then events: the run's deciders as pure functions.

    given(started(), planned(a, b)).when(LeaseStep(...)).then(StepLeased(...))
    given(...).when(ReportStep(...)).refuses(UnknownLease, "does not hold step")

No store, no engine, no threads: the events are folded with `evolve` and the command goes to
the one decider that takes it: the workflow's (`aggregates.workflow`), or, for what is appended to
a run outside its workflow, the record's (`aggregates.runrecord`, the history's events at
versions 1, 2, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from armbench.aggregates.runrecord import (
    Delivered,
    DeliveryFailed,
    RecordCalibration,
    RecordRescore,
    RewriteRecord,
    decide_calibration,
    decide_delivery,
    decide_rescore,
    decide_rewrite,
)
from armbench.aggregates.runrecord import fold as fold_record
from armbench.aggregates.workflow import (
    CancelRun,
    Command,
    LeaseStep,
    RenewLease,
    ReportStep,
    RunState,
    decide_cancel,
    decide_next,
    decide_renew,
    decide_report,
    fold,
)
from armbench.ledger.events import Event

DECIDERS: dict[type, Callable[[RunState, Any], list[Event]]] = {
    LeaseStep: decide_next,
    ReportStep: decide_report,
    RenewLease: decide_renew,
    CancelRun: decide_cancel,
}
RECORD_DECIDERS: dict[type, Callable[[Any, Any], list[Event]]] = {
    RewriteRecord: decide_rewrite,
    Delivered: decide_delivery,
    DeliveryFailed: decide_delivery,
    RecordCalibration: decide_calibration,
    RecordRescore: decide_rescore,
}


class When:
    def __init__(self, history: tuple[Event, ...], command: Any) -> None:
        self.history, self.command = history, command

    def decided(self) -> list[Event]:
        """The decider's events; the history is folded afresh each time, so nothing leaks."""
        kind = type(self.command)
        if kind in RECORD_DECIDERS:
            state = fold_record("r1", enumerate(self.history, start=1), len(self.history))
            return RECORD_DECIDERS[kind](state, self.command)
        return DECIDERS[kind](fold(list(self.history)), self.command)

    def then(self, *expected: Event) -> None:
        """The decider answers exactly these events, in this order."""
        assert self.decided() == list(expected)

    def refuses(self, error: type[Exception], match: str) -> None:
        """The decider says no with this error, whose message contains `match`."""
        with pytest.raises(error, match=re.escape(match)):
            self.decided()


class Given:
    def __init__(self, history: tuple[Event, ...]) -> None:
        self.history = history

    def when(self, command: Command | Any) -> When:
        return When(self.history, command)


def given(*events: Event) -> Given:
    """A run whose log holds these events."""
    return Given(events)
