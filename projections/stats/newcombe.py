"""Newcombe's (1998) interval for a difference of paired proportions, method 10.

Cells of the paired 2x2 table: ``a`` both arms passed, ``b`` only the first passed,
``c`` only the second passed, ``d`` neither. The estimate is ``(b - c) / n``, the first arm's
pass rate minus the second's. See ``docs/guide/statistics.md`` for a worked example.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import msgspec

from armbench.projections.stats.errors import StatisticsInputError
from armbench.projections.stats.nodata import NoData

__all__ = [
    "SMALL_SAMPLE_PAIRS",
    "PairedInterval",
    "adjusted_phi",
    "exact_mcnemar_p",
    "newcombe_paired_interval",
    "wilson_limits",
]

SMALL_SAMPLE_PAIRS = 10
"""Below this many pairs the interval is flagged as a small sample."""


class PairedInterval(msgspec.Struct, frozen=True, kw_only=True, tag="paired_interval"):
    """Newcombe method-10 interval for (first arm's pass rate) - (second arm's pass rate)."""

    estimate: float
    """Point estimate ``(b - c) / n``."""
    lower: float
    """Lower confidence limit, in [-1, 1]."""
    upper: float
    """Upper confidence limit, in [-1, 1]."""
    n: float
    """Number of pairs ``a + b + c + d`` (non-integer after a design-effect adjustment)."""
    a: float
    """Pairs where both arms passed."""
    b: float
    """Pairs where only the first arm passed."""
    c: float
    """Pairs where only the second arm passed."""
    d: float
    """Pairs where neither arm passed."""
    confidence: float
    """Two-sided confidence level, e.g. 0.95."""
    mcnemar_p: float | None
    """Exact McNemar p-value; None when a count is not a whole number."""
    small_sample: bool
    """True when there are fewer than ``SMALL_SAMPLE_PAIRS`` pairs."""
    note: str | None = None
    """A short warning for readers, or None."""


def newcombe_paired_interval(
    a: float, b: float, c: float, d: float, confidence: float = 0.95
) -> PairedInterval | NoData:
    """Newcombe's method-10 interval for the paired difference ``(b - c) / n``."""
    counts = (a, b, c, d)
    _check_counts(counts)
    _check_confidence(confidence)
    n = float(a + b + c + d)
    if n == 0:
        return NoData(reason="no paired trials")
    lower, upper = _limits(float(a), float(b), float(c), float(d), confidence)
    small = n < SMALL_SAMPLE_PAIRS
    note = f"only {n:.3g} pair{'' if n == 1 else 's'}: the interval is wide and its coverage approximate"
    return PairedInterval(
        estimate=(b - c) / n,
        lower=lower,
        upper=upper,
        n=n,
        a=float(a),
        b=float(b),
        c=float(c),
        d=float(d),
        confidence=confidence,
        mcnemar_p=exact_mcnemar_p(*counts),
        small_sample=small,
        note=note if small else None,
    )


_CRITICAL = {0.8: 1.2815515655446004, 0.9: 1.6448536269514729, 0.95: 1.959963984540054,
             0.99: 2.5758293035489004}
"""The normal critical values at the usual confidences, to the last bit as scipy's `ndtri` gives
them (`norm.isf((1 - c) / 2)`, what statsmodels used): the standard library's quantile differs
in the last bits, and a record folded again must keep the bytes the armbench that wrote it gave."""


def wilson_limits(x: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson score limits without continuity correction, exactly 0 at x = 0 and 1 at x = n.

    The closed form (Wilson 1927; Newcombe 1998's method 3), with z from the standard library's
    normal quantile: the same numbers as statsmodels' `proportion_confint(method="wilson")`
    (the tests hold it to both), without its second of imports in every `replay`."""
    z = _CRITICAL.get(confidence) or NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p, z2 = x / n, z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z * math.sqrt(max(0.0, p * (1 - p) / n + z2 / (4 * n * n))) / denominator
    return (0.0 if x == 0 else centre - half), (1.0 if x == n else centre + half)


def adjusted_phi(a: float, b: float, c: float, d: float) -> float:
    """Newcombe's phi*: the phi coefficient with the n/2 correction, 0 when a margin is empty.

    The margins' product is taken as a product of square roots: multiplied out, four small
    margins (fractional cluster-scaled counts) underflow into subnormal numbers, where the
    rounding depends on their order and phi* leaves [-1, 1]."""
    margins = (a + b, c + d, a + c, b + d)
    if min(margins) == 0:
        return 0.0
    denominator = math.prod(math.sqrt(m) for m in sorted(margins))
    cross = a * d - b * c
    half_n = (a + b + c + d) / 2
    if cross > half_n:
        phi = (cross - half_n) / denominator
    elif cross >= 0:
        return 0.0
    else:
        phi = cross / denominator
    return max(-1.0, min(1.0, phi))


def _limits(a: float, b: float, c: float, d: float, confidence: float) -> tuple[float, float]:
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_limits(a + b, n, confidence)
    l2, u2 = wilson_limits(a + c, n, confidence)
    phi = adjusted_phi(a, b, c, d)
    delta = _square_and_add(p1 - l1, u2 - p2, phi)
    epsilon = _square_and_add(u1 - p1, p2 - l2, phi)
    theta = (b - c) / n
    return max(-1.0, theta - delta), min(1.0, theta + epsilon)


def _square_and_add(x: float, y: float, phi: float) -> float:
    return math.sqrt(max(0.0, x * x - 2 * phi * x * y + y * y))


def exact_mcnemar_p(a: float, b: float, c: float, d: float) -> float | None:
    """Exact (binomial) McNemar p-value of the table; None unless every count is a whole number."""
    if not all(float(x).is_integer() for x in (a, b, c, d)):
        return None
    # twice the binomial(b + c, 1/2) tail at the smaller discordant count, at most 1: what
    # statsmodels' `mcnemar(exact=True)` gives, in whole numbers until the last division
    n, k = int(b) + int(c), min(int(b), int(c))
    tail: int = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, (2 * tail) / (1 << n))


def _check_counts(counts: tuple[float, float, float, float]) -> None:
    for name, value in zip("abcd", counts, strict=True):
        if isinstance(value, bool) or not math.isfinite(value) or value < 0:
            raise StatisticsInputError(
                f"expected count {name} to be a finite number >= 0, got {value!r}; "
                "pass the number of pairs in that cell"
            )


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence < 1:
        raise StatisticsInputError(
            f"expected confidence strictly between 0 and 1, got {confidence!r}; e.g. 0.95"
        )
