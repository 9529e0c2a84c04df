"""Newcombe's paired interval with repetitions of a task treated as a cluster.

Repetitions of one task are not independent, so the per-trial table overstates the evidence.
Following statistics.md section 5.2, the design effect ``deff = V_clustered / V_iid`` of the
per-pair differences is estimated with tasks as clusters, and Newcombe's method 10 is applied to
the table divided by ``max(1, deff)``. With one repetition per task this is plain method 10.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from armbench.projections.stats.newcombe import PairedInterval, exact_mcnemar_p, newcombe_paired_interval
from armbench.projections.stats.nodata import NoData

__all__ = ["TaskTable", "ClusteredComparison", "compare_pairs", "design_effect", "tabulate"]


class TaskTable(msgspec.Struct, frozen=True, kw_only=True):
    """The paired 2x2 counts of one task, over its repetitions."""

    task: str
    """Task id."""
    both_passed: int = 0
    """Repetitions where both arms passed."""
    first_only_passed: int = 0
    """Repetitions where only the first arm passed."""
    second_only_passed: int = 0
    """Repetitions where only the second arm passed."""
    neither_passed: int = 0
    """Repetitions where neither arm passed."""

    @property
    def pairs(self) -> int:
        """Number of paired repetitions of this task."""
        return self.both_passed + self.first_only_passed + self.second_only_passed + self.neither_passed


class ClusteredComparison(msgspec.Struct, frozen=True, kw_only=True):
    """Method-10 interval for first - second on the table divided by max(1, deff)."""

    interval: PairedInterval
    """The interval, computed on the per-trial counts divided by max(1, deff)."""
    deff: float
    """Estimated design effect (1 when it cannot be estimated); the counts were divided by max(1, deff)."""
    tables: tuple[TaskTable, ...]
    """Per-task counts, sorted by task id."""
    mcnemar_p: float | None
    """Exact McNemar p-value on the per-trial table; it ignores clustering, so it is descriptive."""


def tabulate(pairs: Iterable[tuple[str, bool, bool]]) -> tuple[TaskTable, ...]:
    """Per-task tables from ``(task, first_passed, second_passed)`` pairs, sorted by task id."""
    cells: dict[str, list[int]] = {}
    for task, first, second in pairs:
        row = cells.setdefault(task, [0, 0, 0, 0])
        row[(0 if second else 1) if first else (2 if second else 3)] += 1
    return tuple(
        TaskTable(task=t, both_passed=w, first_only_passed=x, second_only_passed=y, neither_passed=z)
        for t, (w, x, y, z) in sorted(cells.items())
    )


def design_effect(tables: Iterable[TaskTable]) -> float:
    """Miller's task-clustered variance of the mean difference over the iid variance (1 if that is 0)."""
    tables = tuple(tables)
    n = sum(t.pairs for t in tables)
    b = sum(t.first_only_passed for t in tables)
    c = sum(t.second_only_passed for t in tables)
    if n == 0:
        return 1.0
    theta = (b - c) / n
    iid = (b + c) - n * theta * theta
    clustered = sum((t.first_only_passed - t.second_only_passed - t.pairs * theta) ** 2 for t in tables)
    return clustered / iid if iid > 1e-12 else 1.0


def compare_pairs(tables: tuple[TaskTable, ...], confidence: float = 0.95) -> ClusteredComparison | NoData:
    """Newcombe's interval for first - second, adjusted for clustering by task."""
    a = sum(t.both_passed for t in tables)
    b = sum(t.first_only_passed for t in tables)
    c = sum(t.second_only_passed for t in tables)
    d = sum(t.neither_passed for t in tables)
    deff = design_effect(tables)
    scale = max(1.0, deff)
    interval = newcombe_paired_interval(a / scale, b / scale, c / scale, d / scale, confidence)
    if isinstance(interval, NoData):
        return interval
    mcnemar_p = exact_mcnemar_p(a, b, c, d)
    return ClusteredComparison(interval=interval, deff=deff, tables=tables, mcnemar_p=mcnemar_p)
