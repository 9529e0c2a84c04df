"""A check's result (`CheckRan`) held to the report of its step and to the lease it ran under.

The host records a check's result with its step's report, in one append: the `CheckRan` right
before the `StepReported` of the same step (only the `EvidenceKept` pointers to its kept output
between them), both under the lease that holds the step, the report
saying what the result says (its outcome, cause, exit code and duration), on a step the plan made
for that kind of check and that task, and no longer than the lease was held. `verify` names every
`CheckRan` that does not fit, so whoever rewrites a check's result, even one who holds the ledger
key and re-chains the log, must rewrite a consistent story around it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from armbench.ledger.events import (
    CheckRan,
    Event,
    EvidenceKept,
    StepLeased,
    StepReported,
    StepSpec,
    StepsPlanned,
)
from armbench.ledger.leases import LeaseBreak

__all__ = ["CLOCK_SLACK_MS", "check_breaks"]

CLOCK_SLACK_MS = 2000
"""How much longer than its lease was held a check may say it ran (the two are read from
different clocks: the lease's and report's times from the wall clock, the duration from a
monotonic one)."""

_VERBS = {"check_trial": "trial", "check_baseline": "baseline"}


def check_breaks(events: Sequence[Event]) -> list[LeaseBreak]:
    """Every `CheckRan` of a run's log (events in order, from version 1) that does not fit its
    step's report, its step or its lease; and every check step reported as having run that has
    no `CheckRan`."""
    specs: dict[str, StepSpec] = {}
    leased: dict[tuple[str, str], datetime] = {}
    found: list[LeaseBreak] = []
    for index, event in enumerate(events):
        position = index + 1
        if isinstance(event, StepsPlanned):
            specs.update((s.id, s) for s in event.steps)
        elif isinstance(event, StepLeased):
            leased[(event.step, event.lease)] = event.at
        elif isinstance(event, CheckRan):
            after = _beside(events, index, +1)
            report = after if isinstance(after, StepReported) and after.step == event.step else None
            why = _misfit(event, report, specs.get(event.step),
                          leased.get((event.step, report.lease)) if report else None)
            if why is not None:
                found.append(LeaseBreak(position=position, kind="CheckRan", step=event.step, why=why))
        elif isinstance(event, StepReported) and event.outcome == "succeeded":
            spec = specs.get(event.step)
            before = _beside(events, index, -1)
            if spec is not None and spec.verb in _VERBS and not (
                    isinstance(before, CheckRan) and before.step == event.step):
                found.append(LeaseBreak(position=position, kind="StepReported", step=event.step,
                                        why="says the check ran, and no check's result comes "
                                            "with it"))
    return found


def _beside(events: Sequence[Event], index: int, step: int) -> Event | None:
    """The event next to `events[index]` in direction `step`, past the `EvidenceKept` pointers
    the host appends in the same append (a check's output kept beside its result)."""
    at = index + step
    while 0 <= at < len(events) and isinstance(events[at], EvidenceKept):
        at += step
    return events[at] if 0 <= at < len(events) else None


def _misfit(check: CheckRan, report: StepReported | None, spec: StepSpec | None,
            leased_at: datetime | None) -> str | None:
    """Why `check` does not fit its report, its step or its lease (None: it fits)."""
    if report is None:
        return "is not followed by its step's report, which the host records with it"
    if spec is not None and spec.verb is not None:
        if _VERBS.get(spec.verb) != check.kind:
            return f"is a {check.kind} check's result on a step the plan made for {spec.verb}"
        task = spec.tags.get("task")
        if task is not None and task != check.task:
            return f"is for task {check.task!r} on a step the plan made for task {task!r}"
    said = _report_of(check)
    wrong = [f"{name} {getattr(report, name)!r} (the check's says {want!r})"
             for name, want in said.items() if getattr(report, name) != want]
    if wrong:
        return "differs from its step's report: " + ", ".join(wrong)
    if leased_at is None:
        return f"comes with a report under lease {report.lease}, which never leased the step"
    held_ms = (report.at - leased_at).total_seconds() * 1000
    if check.duration_ms is not None and check.duration_ms > held_ms + CLOCK_SLACK_MS:
        return (f"says it ran {check.duration_ms} ms, longer than its lease {report.lease} held "
                f"the step ({max(0, int(held_ms))} ms)")
    return None


def _report_of(check: CheckRan) -> dict[str, object]:
    """What the step's report says when the host made it from `check` (`benchmark.host`)."""
    if check.kind == "baseline":
        return {"outcome": "succeeded" if check.result == "failed" else "failed",
                "cause": check.cause or check.result, "duration_ms": check.duration_ms}
    return {"outcome": "error" if check.result == "could_not_run" else "succeeded",
            "cause": check.cause, "exit_code": check.exit_code, "duration_ms": check.duration_ms,
            "message": check.message}
