"""The words `armbench plan --detect` prints for a `Detection`. Pure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from armbench.projections.stats import NoData
from armbench.suites.model import REPETITIONS_RANGE

if TYPE_CHECKING:
    from armbench.projections.detect import Detection, PairPlan

__all__ = ["detection_lines"]

MAX_REPETITIONS = REPETITIONS_RANGE[1]


def _pts(x: float) -> str:
    return f"{100 * x:.0f}" if round(100 * x) else f"{100 * x:.1f}"


def _reps(k: int | None) -> str:
    return f"{k} repetition{'' if k == 1 else 's'}"


def _as_planned(p: PairPlan, d: Detection) -> str:
    now = p.detectable_now or 0
    if now > 1:
        return f"; as planned ({_reps(d.repetitions)}) not even 100 points are detectable"
    return f"; as planned ({_reps(d.repetitions)}) it detects {_pts(now)} points"


def _pair_line(p: PairPlan, d: Detection) -> str:
    name = f"{p.first} to {p.second}" + (f" ({p.key})" if p.key else "")
    c = p.components
    if isinstance(c, NoData):
        return f"- {name}: cannot be estimated yet ({c.reason})."
    caveat = "" if c.separated else " (the earlier records have one repetition: a cautious estimate)"
    now = _as_planned(p, d)
    if p.repetitions is not None:
        return (f"- {name}: {_reps(p.repetitions)} of the {d.tasks} tasks detect "
                f"{d.points:g} points{now}{caveat}.")
    return (f"- {name}: no number of repetitions of the {d.tasks} tasks "
            f"{'up to ' + str(MAX_REPETITIONS) + ' ' if p.at_repetitions == MAX_REPETITIONS else ''}"
            f"detects {d.points:g} points{now}; more tasks are needed: {p.tasks} tasks at "
            f"{_reps(p.at_repetitions)}{caveat}.")


def _cost(d: Detection) -> str:
    if not d.cost_per_trial:
        return "cost not stated"
    total = " + ".join(f"{amount:.2f} {unit}" for unit, amount in d.cost.items())
    each = " + ".join(f"{amount:.2f} {unit}" for unit, amount in d.cost_per_trial.items())
    return f"about {total} at the median stated cost of {each} a trial"


def detection_lines(d: Detection) -> list[str]:
    """The answer in words: a head line, a line per two arms, and the suite's need and cost."""
    lines = [f"To detect a difference of {d.points:g} points between two arms with 80% power "
             f"(two-sided 5%), from {d.records} earlier record{'' if d.records == 1 else 's'} "
             f"({d.trials_used} trials of these tasks on these arms):"]
    lines += [_pair_line(p, d) for p in d.pairs]
    if d.trials is None:
        lines.append("Not every two arms can be estimated yet: run the suite with two or more "
                     "tasks on both arms and plan again.")
        return lines
    tasks = d.tasks_needed or d.tasks
    shape = f"{tasks} tasks x {_reps(d.repetitions_needed)} x {d.arms} arms"
    head = (f"More tasks are needed: {tasks} tasks at {_reps(d.repetitions_needed)}"
            if d.tasks_needed is not None else
            f"The suite needs {_reps(d.repetitions_needed)}")
    lines.append(f"{head}: {d.trials} trials ({shape}), {_cost(d)}.")
    return lines
