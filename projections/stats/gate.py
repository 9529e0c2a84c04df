"""The regression gate: is the new run's pass rate lower than the old run's on the same trials?

Method (statistics.md section 5.2, chosen by the simulation in docs/guide/statistics.md):
Newcombe's method 10 on the (task, repetition) pairs with the counts divided by the
task-clustered design effect; a regression is flagged iff the upper limit of new - old is below 0
(a one-sided 2.5% test at 95% confidence).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from armbench.projections.stats.clustered import TaskTable, compare_pairs, tabulate
from armbench.projections.stats.errors import StatisticsInputError
from armbench.projections.stats.nodata import NoData
from armbench.projections.stats.outcomes import PairedOutcome

__all__ = ["GateResult", "TaskDiscordance", "regression_gate"]


class TaskDiscordance(msgspec.Struct, frozen=True, kw_only=True):
    """A task where the two runs disagreed on at least one repetition."""

    task: str
    """Task id."""
    new_only_passed: int
    """Repetitions that passed in the new run only (improvements)."""
    old_only_passed: int
    """Repetitions that passed in the old run only (regressions)."""


class GateResult(msgspec.Struct, frozen=True, kw_only=True, tag="gate_result"):
    """The regression gate's verdict on new - old pass rate, paired by (task, repetition)."""

    estimate: float
    """New pass rate minus old pass rate over the paired trials."""
    lower: float
    """Lower confidence limit of new - old."""
    upper: float
    """Upper confidence limit of new - old; below 0 means a regression."""
    confidence: float
    """Two-sided confidence level; the gate's one-sided error rate is (1 - confidence) / 2."""
    regressed: bool
    """True iff upper < 0."""
    n_pairs: int
    """Number of (task, repetition) pairs."""
    n_tasks: int
    """Number of tasks with at least one pair."""
    deff: float
    """Estimated design effect of repetitions within tasks (1 without repetitions)."""
    effective_pairs: float
    """n_pairs / max(1, deff): the sample size the interval was computed with."""
    both_passed: int
    """Pairs where both runs passed."""
    new_only_passed: int
    """Pairs where only the new run passed."""
    old_only_passed: int
    """Pairs where only the old run passed."""
    neither_passed: int
    """Pairs where neither run passed."""
    discordant: tuple[TaskDiscordance, ...]
    """Per-task discordant counts, only for tasks with any, sorted by task id."""
    mcnemar_p: float | None
    """Exact McNemar p-value on the per-trial table; it ignores clustering, so read it as descriptive."""
    small_sample: bool
    """True when the effective number of pairs is small."""
    note: str | None = None
    """A short warning for readers, or None."""


def regression_gate(outcomes: Sequence[PairedOutcome], confidence: float = 0.95) -> GateResult | NoData:
    """Flag a regression when the interval for new - old pass rate lies wholly below 0."""
    _reject_duplicates(outcomes)
    tables = tabulate((o.task, o.new_passed, o.old_passed) for o in outcomes)
    comparison = compare_pairs(tables, confidence)
    if isinstance(comparison, NoData):
        return comparison
    interval = comparison.interval
    return GateResult(
        estimate=interval.estimate,
        lower=interval.lower,
        upper=interval.upper,
        confidence=confidence,
        regressed=interval.upper < 0,
        n_pairs=len(outcomes),
        n_tasks=len(tables),
        deff=comparison.deff,
        effective_pairs=interval.n,
        both_passed=sum(t.both_passed for t in tables),
        new_only_passed=sum(t.first_only_passed for t in tables),
        old_only_passed=sum(t.second_only_passed for t in tables),
        neither_passed=sum(t.neither_passed for t in tables),
        discordant=_discordant(tables),
        mcnemar_p=comparison.mcnemar_p,
        small_sample=interval.small_sample,
        note=interval.note,
    )


def _discordant(tables: tuple[TaskTable, ...]) -> tuple[TaskDiscordance, ...]:
    return tuple(
        TaskDiscordance(
            task=t.task, new_only_passed=t.first_only_passed, old_only_passed=t.second_only_passed
        )
        for t in tables
        if t.first_only_passed or t.second_only_passed
    )


def _reject_duplicates(outcomes: Sequence[PairedOutcome]) -> None:
    seen: set[tuple[str, int]] = set()
    for position, outcome in enumerate(outcomes):
        key = (outcome.task, outcome.repetition)
        if key in seen:
            raise StatisticsInputError(
                f"expected each (task, repetition) once, got task {outcome.task!r} repetition "
                f"{outcome.repetition} again at position {position}; pair each trial of the new run with "
                "exactly one trial of the old run"
            )
        seen.add(key)
