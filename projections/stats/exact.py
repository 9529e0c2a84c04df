"""The exact (Clopper–Pearson) interval of a proportion: a check's strength, killed mutants out of
those its check decided (statistics.md; statsmodels' `proportion_confint`, method `beta`).

Exact means it never covers less than its confidence, however few the mutants: with 20 of 20
killed it still says the strength may be as low as 83%, which is the honest answer for 20."""

from __future__ import annotations

__all__ = ["exact_interval"]


def exact_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """(lower, upper) of k successes in n, or None when n is 0 (nothing to say)."""
    if not 0 <= k <= n:
        raise ValueError(f"expected 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return None
    from statsmodels.stats.proportion import proportion_confint  # seconds of imports: when used

    lower, upper = proportion_confint(k, n, alpha=1 - confidence, method="beta")
    return (0.0 if k == 0 else float(lower)), (1.0 if k == n else float(upper))
