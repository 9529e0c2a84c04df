"""How much to run: tasks and repetitions needed to detect a difference with a paired comparison.

Miller's formulas (statistics.md section 4.4), two-sided alpha, power 1 - beta, K repetitions per arm:
``n = (z_a + z_b)^2 (omega2 + sigma2_first/K + sigma2_second/K) / delta^2``.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import msgspec

from armbench.projections.stats.components import VarianceComponents, variance_components
from armbench.projections.stats.errors import StatisticsInputError

__all__ = [
    "NeedMoreTasks",
    "VarianceComponents",
    "min_detectable_effect",
    "repetitions_needed",
    "tasks_needed",
    "variance_components",
]


class NeedMoreTasks(msgspec.Struct, frozen=True, kw_only=True, tag="need_more_tasks"):
    """No number of repetitions detects the difference with this many tasks."""

    reason: str
    """Why, in words."""
    n_tasks: int
    """The number of tasks asked about."""
    limit: float
    """Smallest difference detectable with these tasks and unlimited repetitions."""


def tasks_needed(
    components: VarianceComponents, k: int, delta: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Tasks needed to detect a difference of ``delta`` with ``k`` repetitions per arm (at least 2)."""
    _check_plan(k=k, delta=delta, alpha=alpha, power=power)
    n = _z2(alpha, power) * _variance(components, k) / delta**2
    return max(2, _ceil(n))


def min_detectable_effect(
    components: VarianceComponents, n_tasks: int, k: int, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest difference detected with the given power, with ``n_tasks`` tasks and ``k`` repetitions."""
    _check_plan(k=k, n_tasks=n_tasks, alpha=alpha, power=power)
    return math.sqrt(_z2(alpha, power) * _variance(components, k) / n_tasks)


def repetitions_needed(
    components: VarianceComponents, n_tasks: int, delta: float, alpha: float = 0.05, power: float = 0.8
) -> int | NeedMoreTasks:
    """Repetitions per arm needed to detect ``delta`` with ``n_tasks`` tasks, or NeedMoreTasks."""
    _check_plan(n_tasks=n_tasks, delta=delta, alpha=alpha, power=power)
    budget = n_tasks * delta**2 / _z2(alpha, power) - components.omega2
    if budget <= 0:
        limit = math.sqrt(_z2(alpha, power) * components.omega2 / n_tasks)
        why = (
            "the task-level variance alone"
            if components.separated
            else (
                "the total variance of earlier records with one repetition (run a pilot with two or more "
                "repetitions to tell task from repetition variance)"
            )
        )
        return NeedMoreTasks(
            reason=f"{n_tasks} tasks cannot detect {delta:g}: {why} limits them to {limit:.4f}; add tasks",
            n_tasks=n_tasks,
            limit=limit,
        )
    return max(1, _ceil((components.sigma2_first + components.sigma2_second) / budget))


def _variance(components: VarianceComponents, k: int) -> float:
    return components.omega2 + (components.sigma2_first + components.sigma2_second) / k


def _z2(alpha: float, power: float) -> float:
    normal = NormalDist()
    return (normal.inv_cdf(1 - alpha / 2) + normal.inv_cdf(power)) ** 2


def _ceil(x: float) -> int:
    """Round up, ignoring floating-point noise below 1e-9."""
    return math.ceil(round(x, 9))


def _check_plan(*, alpha: float, power: float, k: int = 1, n_tasks: int = 1, delta: float = 0.5) -> None:
    checks = (
        (0 < alpha < 1, f"alpha strictly between 0 and 1, got {alpha!r}"),
        (0 < power < 1, f"power strictly between 0 and 1, got {power!r}"),
        (isinstance(k, int) and k >= 1, f"k (repetitions per arm) a whole number >= 1, got {k!r}"),
        (isinstance(n_tasks, int) and n_tasks >= 1, f"n_tasks a whole number >= 1, got {n_tasks!r}"),
        (0 < delta <= 1, f"delta (a difference of pass rates) in (0, 1], got {delta!r}"),
    )
    problems = [message for ok, message in checks if not ok]
    if problems:
        raise StatisticsInputError("expected " + "; ".join(problems))
