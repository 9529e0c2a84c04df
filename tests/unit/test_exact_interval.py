"""The exact (Clopper–Pearson) interval against published worked values."""

from __future__ import annotations

import pytest

from armbench.projections.stats.exact import exact_interval


@pytest.mark.parametrize(("k", "n", "lower", "upper"), [
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison of
    # seven methods", Statistics in Medicine 17:857-872, Table I, method 4 (exact):
    (81, 263, 0.2527, 0.3676),
    (15, 148, 0.0578, 0.1617),
    (0, 20, 0.0, 0.1684),
    (1, 29, 0.0009, 0.1776),
    # n = 10 by the closed forms: 1 - 0.025 ** (1 / 10) = 0.3085 for 0/10, and its mirror
    (0, 10, 0.0, 0.3085),
    (10, 10, 0.6915, 1.0),
])
def test_published_values(k: int, n: int, lower: float, upper: float) -> None:
    got = exact_interval(k, n)
    assert got is not None
    assert got[0] == pytest.approx(lower, abs=5e-5) and got[1] == pytest.approx(upper, abs=5e-5)


def test_twenty_of_twenty_killed_still_admits_a_weaker_check() -> None:
    got = exact_interval(20, 20)
    assert got is not None and got[1] == 1.0 and got[0] == pytest.approx(0.8316, abs=5e-5)


def test_no_mutant_decided_says_nothing_and_a_bad_count_is_refused() -> None:
    assert exact_interval(0, 0) is None
    with pytest.raises(ValueError, match="0 <= k <= n"):
        exact_interval(3, 2)


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (3, 7), (12, 20), (19, 20), (50, 200), (199, 200)])
def test_it_agrees_with_statsmodels_beta_method(k: int, n: int) -> None:
    from statsmodels.stats.proportion import proportion_confint

    lower, upper = proportion_confint(k, n, alpha=0.05, method="beta")
    got = exact_interval(k, n)
    assert got is not None
    assert got[0] == pytest.approx(0.0 if k == 0 else lower, abs=1e-9)
    assert got[1] == pytest.approx(1.0 if k == n else upper, abs=1e-9)
