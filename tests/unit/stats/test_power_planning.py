"""Miller's variance components and the planning formulas (statistics.md section 4.4)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from armbench.projections.stats import (
    NeedMoreTasks,
    NoData,
    StatisticsInputError,
    TrialOutcome,
    VarianceComponents,
    min_detectable_effect,
    repetitions_needed,
    tasks_needed,
    variance_components,
)

#: The worked example: omega^2 = 0.05, sigma^2 = 0.10 per arm.
EXAMPLE = VarianceComponents(
    omega2=0.05, sigma2_first=0.10, sigma2_second=0.10, n_tasks=100, repetitions_first=5, repetitions_second=5
)


def test_worked_example_needs_283_tasks_at_five_repetitions():
    # 7.8489 * (0.05 + 0.02 + 0.02) / 0.05^2 = 282.6
    assert tasks_needed(EXAMPLE, k=5, delta=0.05) == 283
    assert min_detectable_effect(EXAMPLE, n_tasks=283, k=5) <= 0.05 < min_detectable_effect(EXAMPLE, 282, 5)


def test_worked_example_minimum_detectable_effect_with_100_tasks():
    assert min_detectable_effect(EXAMPLE, n_tasks=100, k=5) == pytest.approx(0.084, abs=5e-4)


def test_worked_example_no_number_of_repetitions_suffices_with_100_tasks():
    result = repetitions_needed(EXAMPLE, n_tasks=100, delta=0.05)
    assert isinstance(result, NeedMoreTasks)
    assert result.limit == pytest.approx(0.063, abs=5e-4)
    assert result.reason == (
        "100 tasks cannot detect 0.05: the task-level variance alone limits them to 0.0626; add tasks"
    )


def test_worked_example_400_tasks_need_three_repetitions():
    # K >= 0.2 / (400 * 0.05^2 / 7.8489 - 0.05) = 2.58
    assert repetitions_needed(EXAMPLE, n_tasks=400, delta=0.05) == 3
    assert min_detectable_effect(EXAMPLE, 400, 3) <= 0.05 < min_detectable_effect(EXAMPLE, 400, 2)


def test_969_tasks_for_three_points_with_total_variance_one_ninth():
    total = VarianceComponents(
        omega2=1 / 9, sigma2_first=0, sigma2_second=0, n_tasks=50, repetitions_first=1, repetitions_second=1,
        separated=False,
    )  # fmt: skip
    assert tasks_needed(total, k=1, delta=0.03) == 969


def test_one_repetition_is_enough_when_the_tasks_alone_suffice():
    assert repetitions_needed(EXAMPLE, n_tasks=2000, delta=0.05) == 1


def trials(rates: dict[str, list[bool]]) -> list[TrialOutcome]:
    return [
        TrialOutcome(task=t, repetition=r, passed=p) for t, runs in rates.items() for r, p in enumerate(runs)
    ]


def test_components_by_hand():
    # first: t1 2/2, t2 1/2, t3 0/2; second: t1 1/2, t2 1/2, t3 1/2.
    first = trials(
        {"t1": [True, True], "t2": [True, False], "t3": [False, False], "only-first": [True, True]}
    )
    second = trials({"t1": [True, False], "t2": [False, True], "t3": [True, False]})
    result = variance_components(first, second)
    # within (unbiased, k=2): first 0, 0.5, 0 -> 1/6; second 0.5 each -> 0.5.
    # differences 0.5, 0, -0.5 have sample variance 0.25; noise = (1/6)/2 + 0.5/2 = 1/3 > 0.25.
    assert result == VarianceComponents(
        omega2=0.0, sigma2_first=pytest.approx(1 / 6), sigma2_second=pytest.approx(0.5), n_tasks=3,
        repetitions_first=2.0, repetitions_second=2.0, separated=True,
    )  # fmt: skip


def test_one_repetition_falls_back_to_the_total_variance():
    first = trials({"t1": [True], "t2": [True], "t3": [False]})
    second = trials({"t1": [False], "t2": [True], "t3": [True]})
    result = variance_components(first, second)
    assert isinstance(result, VarianceComponents)
    assert (result.omega2, result.sigma2_first, result.sigma2_second, result.separated) == (1.0, 0, 0, False)
    verdict = repetitions_needed(result, n_tasks=10, delta=0.1)
    assert isinstance(verdict, NeedMoreTasks) and "one repetition" in verdict.reason
    assert tasks_needed(result, k=1, delta=0.5) == tasks_needed(result, k=7, delta=0.5) == 32


def test_fewer_than_two_shared_tasks_is_no_data():
    one = trials({"t1": [True, False]})
    assert variance_components(one, one) == NoData(reason="need at least two tasks run by both arms, found 1")


def test_components_recovered_from_a_seeded_simulation():
    rng = np.random.default_rng(4411)
    tasks, k = 4000, 5
    p_first = rng.beta(0.7, 0.7, size=tasks)
    p_second = np.clip(p_first + rng.normal(0, 0.12, size=tasks), 0, 1)
    first = trials({f"t{i}": list(rng.random(k) < p) for i, p in enumerate(p_first)})
    second = trials({f"t{i}": list(rng.random(k) < p) for i, p in enumerate(p_second)})
    result = variance_components(first, second)
    assert result.omega2 == pytest.approx(np.var(p_first - p_second, ddof=1), abs=0.004)
    assert result.sigma2_first == pytest.approx(np.mean(p_first * (1 - p_first)), abs=0.004)
    assert result.sigma2_second == pytest.approx(np.mean(p_second * (1 - p_second)), abs=0.004)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: tasks_needed(EXAMPLE, k=0, delta=0.05),
            "k \\(repetitions per arm\\) a whole number >= 1, got 0",
        ),
        (
            lambda: tasks_needed(EXAMPLE, k=5, delta=0),
            "delta \\(a difference of pass rates\\) in \\(0, 1\\], got 0",
        ),
        (lambda: min_detectable_effect(EXAMPLE, 0, 5), "n_tasks a whole number >= 1, got 0"),
        (lambda: repetitions_needed(EXAMPLE, 100, 0.05, alpha=1), "alpha strictly between 0 and 1, got 1"),
        (lambda: repetitions_needed(EXAMPLE, 100, 0.05, power=0), "power strictly between 0 and 1, got 0"),
    ],
)
def test_bad_plans_say_what_was_expected(call, message):
    with pytest.raises(StatisticsInputError, match=message):
        call()


components = st.builds(
    VarianceComponents,
    omega2=st.floats(0, 0.25),
    sigma2_first=st.floats(0, 0.25),
    sigma2_second=st.floats(0, 0.25),
    n_tasks=st.just(10),
    repetitions_first=st.just(2.0),
    repetitions_second=st.just(2.0),
)


@given(components, st.integers(1, 20), st.floats(0.01, 0.5))
def test_tasks_needed_is_the_smallest_suite_that_detects_delta(c, k, delta):
    n = tasks_needed(c, k, delta)
    assert min_detectable_effect(c, n, k) <= delta * (1 + 1e-9)
    if n > 2:
        assert min_detectable_effect(c, n - 1, k) > delta


@given(components, st.integers(2, 5000), st.floats(0.01, 0.5))
def test_repetitions_needed_is_the_fewest_that_detect_delta(c, n_tasks, delta):
    k = repetitions_needed(c, n_tasks, delta)
    if isinstance(k, NeedMoreTasks):
        assert k.limit >= delta * (1 - 1e-9)
        return
    assert min_detectable_effect(c, n_tasks, k) <= delta * (1 + 1e-9)
    if k > 1:
        assert min_detectable_effect(c, n_tasks, k - 1) > delta
