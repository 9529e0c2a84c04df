"""The descriptive "pairs" between two arms of one run: first arm's pass rate minus the second's.

Trials are paired by (task, repetition); trials present in only one arm are counted, never paired.
With repetitions, the interval is Newcombe's method 10 on the table divided by the task-clustered
design effect (the same method as the regression gate); with one repetition it is plain method 10.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from armbench.projections.stats.clustered import compare_pairs, tabulate
from armbench.projections.stats.errors import StatisticsInputError
from armbench.projections.stats.nodata import NoData
from armbench.projections.stats.outcomes import TrialOutcome

__all__ = ["PairedDifference", "paired_difference", "paired_difference_by_key"]


class PairedDifference(msgspec.Struct, frozen=True, kw_only=True, tag="paired_difference"):
    """First arm's pass rate minus the second arm's, over trials both arms ran."""

    estimate: float
    """First pass rate minus second pass rate over the paired trials."""
    lower: float
    """Lower confidence limit of first - second."""
    upper: float
    """Upper confidence limit of first - second."""
    confidence: float
    """Two-sided confidence level."""
    n_pairs: int
    """Number of (task, repetition) pairs."""
    n_tasks: int
    """Number of tasks with at least one pair."""
    deff: float
    """Estimated design effect of repetitions within tasks (1 without repetitions)."""
    effective_pairs: float
    """n_pairs / max(1, deff): the sample size the interval was computed with."""
    both_passed: int
    """Pairs where both arms passed."""
    first_only_passed: int
    """Pairs where only the first arm passed."""
    second_only_passed: int
    """Pairs where only the second arm passed."""
    neither_passed: int
    """Pairs where neither arm passed."""
    first_unpaired: int
    """Trials of the first arm with no partner in the second (left out of the table)."""
    second_unpaired: int
    """Trials of the second arm with no partner in the first (left out of the table)."""
    mcnemar_p: float | None
    """Exact McNemar p-value on the per-trial table; it ignores clustering, so read it as descriptive."""
    small_sample: bool
    """True when the effective number of pairs is small."""
    note: str | None = None
    """A short warning for readers, or None."""


def paired_difference(
    first: Sequence[TrialOutcome], second: Sequence[TrialOutcome], confidence: float = 0.95
) -> PairedDifference | NoData:
    """Pass rate of ``first`` minus pass rate of ``second``, paired by (task, repetition)."""
    return paired_difference_by_key(_by_key(first, "first"), _by_key(second, "second"),
                                    confidence)


def paired_difference_by_key(
    first_by_key: Mapping[tuple[str, int], bool], second_by_key: Mapping[tuple[str, int], bool],
    confidence: float = 0.95,
) -> PairedDifference | NoData:
    """`paired_difference` over each arm's passed flag by (task, repetition), for a caller that
    keys its trials already (each key once by construction)."""
    keys = sorted(first_by_key.keys() & second_by_key.keys())
    tables = tabulate((task, first_by_key[(task, r)], second_by_key[(task, r)]) for task, r in keys)
    comparison = compare_pairs(tables, confidence)
    if isinstance(comparison, NoData):
        return comparison
    interval = comparison.interval
    return PairedDifference(
        estimate=interval.estimate,
        lower=interval.lower,
        upper=interval.upper,
        confidence=confidence,
        n_pairs=len(keys),
        n_tasks=len(tables),
        deff=comparison.deff,
        effective_pairs=interval.n,
        both_passed=sum(t.both_passed for t in tables),
        first_only_passed=sum(t.first_only_passed for t in tables),
        second_only_passed=sum(t.second_only_passed for t in tables),
        neither_passed=sum(t.neither_passed for t in tables),
        first_unpaired=len(first_by_key) - len(keys),
        second_unpaired=len(second_by_key) - len(keys),
        mcnemar_p=comparison.mcnemar_p,
        small_sample=interval.small_sample,
        note=interval.note,
    )


def _by_key(trials: Sequence[TrialOutcome], arm: str) -> dict[tuple[str, int], bool]:
    passed: dict[tuple[str, int], bool] = {}
    for position, trial in enumerate(trials):
        key = (trial.task, trial.repetition)
        if key in passed:
            raise StatisticsInputError(
                f"expected each (task, repetition) once per arm, got task {trial.task!r} repetition "
                f"{trial.repetition} again in the {arm} arm at position {position}; "
                "keep one outcome per trial"
            )
        passed[key] = trial.passed
    return passed
