"""Miller's variance components of a paired comparison, from earlier records of two arms.

For task i, x_i is the true pass probability of an arm and p_i(1 - p_i) its within-task variance.
``omega2`` = Var(x_first - x_second) across tasks, ``sigma2_first`` = E[p_first(1 - p_first)],
likewise ``sigma2_second`` (statistics.md section 4.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean, variance

import msgspec

from armbench.projections.stats.nodata import NoData
from armbench.projections.stats.outcomes import TrialOutcome

__all__ = ["VarianceComponents", "variance_components"]


class VarianceComponents(msgspec.Struct, frozen=True, kw_only=True, tag="variance_components"):
    """Task-level and within-task variance of a paired pass-rate difference."""

    omega2: float
    """Variance across tasks of the true per-task difference; the total variance if not separated."""
    sigma2_first: float
    """Mean within-task variance p(1 - p) of the first arm (0 if not separated)."""
    sigma2_second: float
    """Mean within-task variance p(1 - p) of the second arm (0 if not separated)."""
    n_tasks: int
    """Tasks both arms ran in the records."""
    repetitions_first: float
    """Mean repetitions per task of the first arm in the records."""
    repetitions_second: float
    """Mean repetitions per task of the second arm in the records."""
    separated: bool = True
    """False when some task had one repetition: omega2 then holds the total variance of the
    per-task difference, which is safe (conservative) for any number of repetitions."""


def variance_components(
    first: Sequence[TrialOutcome], second: Sequence[TrialOutcome]
) -> VarianceComponents | NoData:
    """Estimate the components from per-(task, repetition) outcomes of two arms, over shared tasks."""
    first_tasks, second_tasks = _per_task(first), _per_task(second)
    shared = sorted(first_tasks.keys() & second_tasks.keys())
    if len(shared) < 2:
        return NoData(reason=f"need at least two tasks run by both arms, found {len(shared)}")
    f = [first_tasks[t] for t in shared]
    s = [second_tasks[t] for t in shared]
    spread = variance([x.rate - y.rate for x, y in zip(f, s, strict=True)])
    reps_first, reps_second = fmean(x.k for x in f), fmean(y.k for y in s)
    if min(x.k for x in f + s) < 2:
        # One repetition somewhere: task and repetition variance cannot be told apart.
        return VarianceComponents(
            omega2=spread, sigma2_first=0.0, sigma2_second=0.0, n_tasks=len(shared),
            repetitions_first=reps_first, repetitions_second=reps_second, separated=False,
        )  # fmt: skip
    noise = fmean(x.within / x.k for x in f) + fmean(y.within / y.k for y in s)
    return VarianceComponents(
        omega2=max(0.0, spread - noise), sigma2_first=fmean(x.within for x in f),
        sigma2_second=fmean(y.within for y in s), n_tasks=len(shared),
        repetitions_first=reps_first, repetitions_second=reps_second,
    )  # fmt: skip


class _Task(msgspec.Struct, frozen=True):
    rate: float
    """Pass fraction over the task's repetitions."""
    k: int
    """Number of repetitions."""

    @property
    def within(self) -> float:
        """Unbiased within-task variance of a pass/fail outcome (needs k >= 2)."""
        return self.rate * (1 - self.rate) * self.k / (self.k - 1)


def _per_task(trials: Sequence[TrialOutcome]) -> dict[str, _Task]:
    counts: dict[str, list[int]] = {}
    for trial in trials:
        row = counts.setdefault(trial.task, [0, 0])
        row[0] += trial.passed
        row[1] += 1
    return {task: _Task(passed / k, k) for task, (passed, k) in counts.items()}
