"""The Wilson limits and the exact McNemar p-value are computed without statsmodels (its import
is about a second of every `replay`); they agree with statsmodels to the last digits, and with the
published values the other tests pin (Newcombe 1998)."""

from __future__ import annotations

import pytest

from armbench.projections.stats.newcombe import exact_mcnemar_p, wilson_limits


@pytest.mark.parametrize(("x", "n", "confidence"), [
    (0, 10, 0.95), (1, 10, 0.95), (5, 10, 0.95), (10, 10, 0.95), (81, 263, 0.95), (15, 148, 0.9),
    (3.5, 7.25, 0.95), (0.4, 1.3, 0.99), (29, 30, 0.8)])
def test_wilson_agrees_with_statsmodels(x: float, n: float, confidence: float) -> None:
    from statsmodels.stats.proportion import proportion_confint

    lower, upper = proportion_confint(x, n, alpha=1 - confidence, method="wilson")
    # to the last bit: a record folded again keeps the bytes the armbench that wrote it gave
    expected = (0.0 if x == 0 else float(lower), 1.0 if x == n else float(upper))
    assert wilson_limits(x, n, confidence) == expected


def test_an_unusual_confidence_takes_the_standard_librarys_quantile() -> None:
    from statsmodels.stats.proportion import proportion_confint

    lower, upper = proportion_confint(3, 11, alpha=1 - 0.975, method="wilson")
    assert wilson_limits(3, 11, 0.975) == pytest.approx((lower, upper), abs=1e-12)


def test_wilson_matches_newcombes_table_i() -> None:
    # Newcombe (1998), Statistics in Medicine 17:857, Table I, method 3 (score): 81/263
    assert wilson_limits(81, 263, 0.95) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    assert wilson_limits(15, 148, 0.95) == pytest.approx((0.0624, 0.1605), abs=5e-5)


@pytest.mark.parametrize("table", [(0, 0, 0, 0), (3, 0, 0, 4), (10, 5, 1, 4), (2, 12, 3, 1),
                                   (0, 40, 25, 0), (7, 1, 1, 7), (1, 200, 180, 3)])
def test_exact_mcnemar_agrees_with_statsmodels(table: tuple[int, int, int, int]) -> None:
    from statsmodels.stats.contingency_tables import mcnemar

    a, b, c, d = table
    expected = float(mcnemar([[a, b], [c, d]], exact=True).pvalue)
    assert exact_mcnemar_p(*map(float, table)) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_fractional_counts_have_no_exact_p() -> None:
    assert exact_mcnemar_p(1.5, 2.0, 3.0, 4.0) is None
