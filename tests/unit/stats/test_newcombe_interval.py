"""Newcombe's paired method 10 against published worked examples, edge cases and properties."""

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from armbench.ledger.errors import Refusal
from armbench.projections.stats import NoData, PairedInterval, StatisticsInputError, newcombe_paired_interval
from armbench.projections.stats.newcombe import adjusted_phi, wilson_limits

Z95 = 1.959963984540054


def interval(a: float, b: float, c: float, d: float, confidence: float = 0.95) -> PairedInterval:
    result = newcombe_paired_interval(a, b, c, d, confidence)
    assert isinstance(result, PairedInterval)
    return result


# (a, b, c, d, lower, upper, tolerance): statistics.md section 1.5, "Published worked examples".
PUBLISHED = [
    pytest.param(36, 12, 2, 0, 0.0569, 0.3404, 1e-4, id="newcombe1998-propint"),
    pytest.param(20, 12, 2, 16, 0.0562, 0.3292, 1e-4, id="newcombe1998-ratesci"),
    # Published to 3 decimals only, so the tolerance is half a unit in the third decimal.
    pytest.param(1, 1, 7, 12, -0.507, -0.026, 5e-4, id="bentur2009-fagerland2014"),
    pytest.param(59, 6, 16, 80, -0.1186, -0.0046, 1e-4, id="cavo2012-contingencytables"),
]


@pytest.mark.parametrize(("a", "b", "c", "d", "lower", "upper", "tolerance"), PUBLISHED)
def test_published_worked_examples(a, b, c, d, lower, upper, tolerance):
    result = interval(a, b, c, d)
    assert result.lower == pytest.approx(lower, abs=tolerance)
    assert result.upper == pytest.approx(upper, abs=tolerance)
    assert result.estimate == pytest.approx((b - c) / (a + b + c + d))


def test_method_8_trap_is_not_what_we_compute():
    result = interval(20, 12, 2, 16)
    assert abs(result.lower - 0.0618) > 1e-3
    assert abs(result.upper - 0.3242) > 1e-3


EDGE_CASES = [
    pytest.param(1, 0, 0, 1, -0.5734, 0.5734, id="concordant-1-0-0-1"),
    pytest.param(5, 0, 0, 5, -0.1666, 0.1666, id="concordant-5-0-0-5"),
    pytest.param(27, 0, 0, 27, -0.0351, 0.0351, id="concordant-27-0-0-27"),
    pytest.param(54, 0, 0, 0, -0.0664, 0.0664, id="all-pass-54"),
    pytest.param(10, 0, 0, 0, -0.2775, 0.2775, id="all-pass-10"),
    pytest.param(1, 0, 0, 0, -0.7935, 0.7935, id="all-pass-1"),
    pytest.param(0, 30, 0, 0, 0.8395, 1.0, id="empty-margin-0-30-0-0"),
    pytest.param(0, 1, 0, 0, -0.1221, 1.0, id="single-pair-0-1-0-0"),
]


@pytest.mark.parametrize(("a", "b", "c", "d", "lower", "upper"), EDGE_CASES)
def test_edge_case_table(a, b, c, d, lower, upper):
    result = interval(a, b, c, d)
    assert (result.lower, result.upper) == pytest.approx((lower, upper), abs=1e-4)


def test_all_pass_and_all_fail_give_plus_minus_z2_over_n_plus_z2():
    for table in [(54, 0, 0, 0), (0, 0, 0, 54)]:
        result = interval(*table)
        half = Z95**2 / (54 + Z95**2)
        assert (result.lower, result.upper) == pytest.approx((-half, half), abs=1e-12)


def test_empty_margin_with_discordant_pairs_follows_the_guard_formula():
    result = interval(0, 30, 0, 0)
    assert result.lower == pytest.approx(1 - math.sqrt(2) * Z95**2 / (30 + Z95**2), abs=1e-12)
    assert result.upper == 1.0


@pytest.mark.parametrize("table", [(0, 29, 1, 0), (0, 3, 3, 0)])
def test_phi_star_of_minus_one_adds_the_margins_linearly(table):
    a, b, c, d = table
    n = a + b + c + d
    assert adjusted_phi(*map(float, table)) == pytest.approx(-1.0)
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_limits(a + b, n, 0.95)
    l2, u2 = wilson_limits(a + c, n, 0.95)
    result = interval(*table)
    assert result.lower == pytest.approx((b - c) / n - ((p1 - l1) + (u2 - p2)), abs=1e-12)
    assert result.upper == pytest.approx((b - c) / n + ((u1 - p1) + (p2 - l2)), abs=1e-12)


def test_no_pairs_is_no_data_not_numbers():
    assert newcombe_paired_interval(0, 0, 0, 0) == NoData(reason="no paired trials")


def test_small_samples_say_so():
    small = interval(0, 1, 0, 0)
    assert small.small_sample
    assert small.note == "only 1 pair: the interval is wide and its coverage approximate"
    assert not interval(5, 0, 0, 5).small_sample
    assert interval(5, 0, 0, 5).note is None


def test_mcnemar_p_is_exact_for_whole_counts_and_absent_otherwise():
    assert interval(20, 12, 2, 16).mcnemar_p == pytest.approx(
        2 * sum(math.comb(14, k) for k in range(3)) / 2**14
    )
    assert interval(5, 0, 0, 5).mcnemar_p == 1.0
    assert interval(10.0, 6.0, 1.0, 8.0).mcnemar_p is not None
    assert interval(10.5, 6, 1, 8).mcnemar_p is None


def test_non_integer_counts_scale_like_a_smaller_sample():
    halved = interval(10, 6, 1, 8)
    assert interval(20 / 2, 12 / 2, 2 / 2, 16 / 2) == halved
    assert halved.upper - halved.lower > interval(20, 12, 2, 16).upper - interval(20, 12, 2, 16).lower


def test_other_confidence_levels_widen_and_narrow():
    narrow, wide = interval(20, 12, 2, 16, 0.90), interval(20, 12, 2, 16, 0.99)
    middle = interval(20, 12, 2, 16)
    assert wide.lower < middle.lower < narrow.lower < narrow.upper < middle.upper < wide.upper


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((-1, 0, 0, 0), "expected count a to be a finite number >= 0, got -1"),
        ((0, math.nan, 0, 0), "expected count b to be a finite number >= 0, got nan"),
        ((0, 0, True, 0), "expected count c to be a finite number >= 0, got True"),
        ((1, 0, 0, 0, 1.0), "expected confidence strictly between 0 and 1, got 1.0"),
    ],
)
def test_bad_input_says_what_was_expected_and_found(args, message):
    with pytest.raises(StatisticsInputError, match=message.replace("(", r"\(")) as raised:
        newcombe_paired_interval(*args)
    assert isinstance(raised.value, Refusal) and isinstance(raised.value, ValueError)
    assert (raised.value.code, raised.value.exit_code) == ("statistics_input_error", 2)


def reference_wilson(x: float, n: float) -> tuple[float, float]:
    """statistics.md section 1.2, written out independently of statsmodels."""
    root = Z95 * math.sqrt(Z95**2 + 4 * x * (1 - x / n))
    return (2 * x + Z95**2 - root) / (2 * (n + Z95**2)), (2 * x + Z95**2 + root) / (2 * (n + Z95**2))


whole = st.integers(min_value=0, max_value=300)
fractional = st.floats(min_value=0, max_value=300, allow_nan=False, allow_infinity=False)
tables = st.one_of(
    st.tuples(whole, whole, whole, whole), st.tuples(fractional, fractional, fractional, fractional)
)
nonempty_tables = tables.filter(lambda t: sum(t) >= 1)


@given(st.integers(min_value=1, max_value=500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_limits_match_the_closed_form(case):
    x, n = case
    lower, upper = wilson_limits(x, n, 0.95)
    expected_lower, expected_upper = reference_wilson(x, n)
    assert lower == pytest.approx(expected_lower, abs=1e-12)
    assert upper == pytest.approx(expected_upper, abs=1e-12)
    assert (lower == 0.0) == (x == 0) and (upper == 1.0) == (x == n)


@given(nonempty_tables)
def test_interval_contains_the_estimate_and_has_positive_width(table):
    result = interval(*table)
    assert -1.0 <= result.lower <= result.estimate + 1e-12
    assert result.estimate - 1e-12 <= result.upper <= 1.0
    assert result.upper > result.lower


@given(nonempty_tables)
@example((0.0, 2.0, 8.608059749386076e-161, 0.0))  # margins whose product underflowed (found by hypothesis)
def test_swapping_the_arms_mirrors_the_interval(table):
    a, b, c, d = table
    forward, swapped = interval(a, b, c, d), interval(a, c, b, d)
    assert swapped.estimate == pytest.approx(-forward.estimate, abs=1e-12)
    assert swapped.lower == pytest.approx(-forward.upper, abs=1e-12)
    assert swapped.upper == pytest.approx(-forward.lower, abs=1e-12)


@given(tables)
@example((0.0, 2.0, 8.608059749386076e-161, 0.0))  # was -1.0000081 before the margins were rooted
def test_phi_star_is_a_correlation(table):
    assert -1.0 - 1e-12 <= adjusted_phi(*map(float, table)) < 1.0
