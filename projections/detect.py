"""`armbench plan <suite> --detect <points>`: how much to run, from earlier records. Pure.

For each two arms the table pairs (every two arms when it pairs none), Miller's variance
components are estimated from earlier trials of the plan's tasks (same id and sourceHash) on the
same arms (`history.arm_identity`). Trials that never ran (not_run) say nothing about an arm and
are left out; every other result counts as passed or not. Then `repetitions_needed` for the
plan's tasks or, when no number of repetitions up to the suite's limit can do it,
`tasks_needed`; 80% power, two-sided 5%. The cost is the median stated cost of a trial times the
trials needed, in the unit the tools stated.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence

import msgspec

from armbench.projections.arm_keys import arm_pairs
from armbench.projections.detect_text import detection_lines
from armbench.projections.history import arm_identity
from armbench.projections.record_types import Record, RecordArm, RecordTrial
from armbench.projections.stats import (
    NeedMoreTasks,
    NoData,
    TrialOutcome,
    VarianceComponents,
    min_detectable_effect,
    repetitions_needed,
    tasks_needed,
    variance_components,
)
from armbench.suites.model import REPETITIONS_RANGE

__all__ = ["Detection", "PairPlan", "plan_detection"]

MAX_REPETITIONS = REPETITIONS_RANGE[1]


class PairPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What telling two arms apart takes."""

    first: str
    """The arm measured from."""
    second: str
    """The arm measured to."""
    key: str | None
    """The one key they differ in, or None when they differ in more."""
    components: VarianceComponents | NoData
    """Miller's variance components from earlier trials, or why there are none."""
    detectable_now: float | None = None
    """The difference the plan as it stands detects with 80% power."""
    repetitions: int | None = None
    """Repetitions per arm the plan's tasks need, when they can do it."""
    tasks: int | None = None
    """Otherwise the tasks needed, at `at_repetitions` repetitions."""
    at_repetitions: int | None = None
    """The repetitions `tasks` is computed for."""


class Detection(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to `--detect`: per two arms, and for the suite."""

    points: float
    """The difference asked about, in percentage points."""
    tasks: int
    """Tasks in the plan."""
    repetitions: int
    """Repetitions in the plan."""
    arms: int
    """Arms in the plan."""
    records: int
    """Earlier records that gave trials."""
    trials_used: int
    """Earlier trials the estimate rests on."""
    pairs: list[PairPlan] = []
    """One entry per two arms."""
    repetitions_needed: int | None = None
    """Repetitions the suite needs for every pair, when its tasks can do it."""
    tasks_needed: int | None = None
    """Tasks the suite needs (at `repetitions_needed`, or its own), when repetitions cannot do it."""
    trials: int | None = None
    """Trials that takes, over every arm."""
    cost_per_trial: dict[str, float] = {}
    """Median stated cost of a trial, by unit; empty when the tools stated none."""
    cost: dict[str, float] = {}
    """cost_per_trial times trials, by unit."""
    lines: list[str] = []
    """The answer in words, for stderr."""


def plan_detection(*, tasks: Mapping[str, str], arms: Sequence[RecordArm], repetitions: int,
                   records: Sequence[Record], points: float) -> Detection:
    """How many repetitions (or tasks) detect `points` between two arms, and what that costs.

    `tasks` maps the plan's task ids to their sourceHash; `arms` are record arm entries.
    """
    outcomes, used, count = _earlier(records, tasks, arms)
    d = Detection(points=points, tasks=len(tasks), repetitions=repetitions, arms=len(arms),
                  records=count, trials_used=len(used), cost_per_trial=_median_cost(used))
    if len(arms) < 2:
        return msgspec.structs.replace(d, lines=[
            "The suite has one arm, so there are no two arms to tell apart."])
    if not used:
        return msgspec.structs.replace(d, lines=[
            "No earlier record ran these tasks (by sourceHash) on these arms, so there is nothing "
            "to estimate from. Run the suite once, with two or more repetitions, and plan again."])
    pairs = [_pair_plan(a, b, key, outcomes, d) for a, b, key in _two_arms(arms)]
    d = _for_suite(msgspec.structs.replace(d, pairs=pairs))
    return msgspec.structs.replace(d, lines=detection_lines(d))


def _two_arms(arms: Sequence[RecordArm]) -> list[tuple[str, str, str | None]]:
    paired: list[tuple[str, str, str | None]] = [
        (a.name, b.name, key) for a, b, key in arm_pairs(arms)]
    return paired or [(a.name, b.name, None) for i, a in enumerate(arms) for b in arms[i + 1:]]


def _earlier(records: Sequence[Record], tasks: Mapping[str, str], arms: Sequence[RecordArm]
             ) -> tuple[dict[str, list[TrialOutcome]], list[RecordTrial], int]:
    wanted = {arm_identity(a): a.name for a in arms}
    outcomes: dict[str, list[TrialOutcome]] = defaultdict(list)
    used: list[RecordTrial] = []
    count = 0
    for record in records:
        same = {t.id for t in record.tasks if tasks.get(t.id) == t.source_hash}
        names = {a.name: wanted[arm_identity(a)] for a in record.arms if arm_identity(a) in wanted}
        ran = [t for t in record.trials if t.task in same and t.arm in names
               and t.result != "not_run"]
        for t in ran:
            outcomes[names[t.arm]].append(TrialOutcome(
                task=t.task, repetition=t.repetition, passed=t.result == "passed"))
        used.extend(ran)
        count += bool(ran)
    return outcomes, used, count


def _median_cost(trials: Sequence[RecordTrial]) -> dict[str, float]:
    by_unit: dict[str, list[float]] = defaultdict(list)
    for t in trials:
        if t.cost is not None:
            by_unit[t.cost.unit].append(t.cost.amount)
    return {unit: statistics.median(values) for unit, values in sorted(by_unit.items())}


def _pair_plan(first: str, second: str, key: str | None,
               outcomes: Mapping[str, list[TrialOutcome]], d: Detection) -> PairPlan:
    c = variance_components(outcomes.get(second, []), outcomes.get(first, []))
    plan = PairPlan(first=first, second=second, key=key, components=c)
    if isinstance(c, NoData):
        return plan
    delta = d.points / 100
    now = min_detectable_effect(c, n_tasks=d.tasks, k=d.repetitions)
    needed = repetitions_needed(c, n_tasks=d.tasks, delta=delta)
    if isinstance(needed, int) and needed <= MAX_REPETITIONS:
        return msgspec.structs.replace(plan, detectable_now=now, repetitions=needed)
    at = d.repetitions if isinstance(needed, NeedMoreTasks) else MAX_REPETITIONS
    return msgspec.structs.replace(plan, detectable_now=now, at_repetitions=at,
                                   tasks=tasks_needed(c, k=at, delta=delta))


def _for_suite(d: Detection) -> Detection:
    if any(isinstance(p.components, NoData) for p in d.pairs):
        return d
    reps = max(p.at_repetitions or p.repetitions or 1 for p in d.pairs)
    more = [p.tasks for p in d.pairs if p.tasks is not None]
    tasks = max(more) if more else d.tasks
    trials = tasks * reps * d.arms
    return msgspec.structs.replace(
        d, repetitions_needed=reps, tasks_needed=tasks if more else None, trials=trials,
        cost={unit: each * trials for unit, each in d.cost_per_trial.items()})
