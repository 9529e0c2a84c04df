"""The regression gate and the descriptive pairs: pairing, the design effect, direction, input errors."""

import pytest

from armbench.projections.stats import (
    GateResult,
    NoData,
    PairedDifference,
    PairedOutcome,
    StatisticsInputError,
    TrialOutcome,
    newcombe_paired_interval,
    paired_difference,
    regression_gate,
)
from armbench.projections.stats.clustered import design_effect, tabulate
from armbench.projections.stats.gate import TaskDiscordance


def outcomes(*rows: tuple[str, int, bool, bool]) -> list[PairedOutcome]:
    return [PairedOutcome(task=t, repetition=r, new_passed=n, old_passed=o) for t, r, n, o in rows]


def gate(rows: list[PairedOutcome]) -> GateResult:
    result = regression_gate(rows)
    assert isinstance(result, GateResult)
    return result


def single_repetition_table(a: int, b: int, c: int, d: int) -> list[PairedOutcome]:
    cells = [(True, True)] * a + [(True, False)] * b + [(False, True)] * c + [(False, False)] * d
    return outcomes(*((f"task-{i}", 0, new, old) for i, (new, old) in enumerate(cells)))


def test_one_repetition_per_task_is_plain_method_10():
    result = gate(single_repetition_table(59, 6, 16, 80))
    plain = newcombe_paired_interval(59, 6, 16, 80)
    assert result.deff == pytest.approx(1.0)
    assert (result.estimate, result.lower, result.upper) == pytest.approx(
        (plain.estimate, plain.lower, plain.upper)
    )
    assert result.upper == pytest.approx(-0.0046, abs=1e-4)
    assert result.regressed
    cells = (result.both_passed, result.new_only_passed, result.old_only_passed, result.neither_passed)
    assert cells == (59, 6, 16, 80)
    assert result.mcnemar_p == plain.mcnemar_p
    assert (result.n_pairs, result.n_tasks, result.effective_pairs) == (161, 161, pytest.approx(161))


def test_an_improvement_or_no_change_is_not_a_regression():
    assert not gate(single_repetition_table(20, 12, 2, 16)).regressed
    assert not gate(single_repetition_table(27, 0, 0, 27)).regressed


def test_repetitions_that_move_together_divide_the_table_by_the_design_effect():
    # d = +1, +1 on "up"; -1, -1 on "down"; 0, 0 on "same". theta = 0, so
    # V_iid * n^2 = 4 and V_cl * n^2 = 2^2 + (-2)^2 = 8: deff = 2.
    rows = outcomes(
        ("up", 0, True, False), ("up", 1, True, False),
        ("down", 0, False, True), ("down", 1, False, True),
        ("same", 0, True, True), ("same", 1, True, True),
    )  # fmt: skip
    result = gate(rows)
    assert result.deff == pytest.approx(2.0)
    assert result.effective_pairs == pytest.approx(3.0)
    expected = newcombe_paired_interval(1, 1, 1, 0)
    assert (result.lower, result.upper) == pytest.approx((expected.lower, expected.upper))
    assert (
        result.small_sample
        and result.note == "only 3 pairs: the interval is wide and its coverage approximate"
    )
    assert result.discordant == (
        TaskDiscordance(task="down", new_only_passed=0, old_only_passed=2),
        TaskDiscordance(task="up", new_only_passed=2, old_only_passed=0),
    )
    assert result.mcnemar_p == 1.0


def test_a_design_effect_below_one_never_narrows_the_interval():
    rows = outcomes(
        ("x", 0, True, False), ("x", 1, False, True),
        ("y", 0, True, False), ("y", 1, False, True),
    )  # fmt: skip
    result = gate(rows)
    assert result.deff == pytest.approx(0.0)
    plain = newcombe_paired_interval(0, 2, 2, 0)
    assert (result.lower, result.upper, result.effective_pairs) == pytest.approx(
        (plain.lower, plain.upper, 4)
    )


def test_design_effect_is_one_when_every_difference_is_the_same():
    assert design_effect(tabulate([("t", False, True), ("t", False, True), ("u", False, True)])) == 1.0
    assert design_effect(tabulate([("t", True, True), ("u", False, False)])) == 1.0
    assert design_effect(()) == 1.0


def test_a_consistent_drop_across_repeated_tasks_is_flagged():
    rows = outcomes(*((f"t{i}", r, i >= 6, True) for i in range(30) for r in range(5)))
    result = gate(rows)
    assert result.estimate == pytest.approx(-0.2)
    assert result.deff > 1 and result.regressed
    assert len(result.discordant) == 6


def test_no_pairs_means_no_verdict():
    assert regression_gate([]) == NoData(reason="no paired trials")


def test_a_repeated_pair_is_rejected_with_its_position():
    rows = outcomes(("t", 0, True, True), ("t", 1, True, False), ("t", 0, False, False))
    with pytest.raises(StatisticsInputError, match=r"got task 't' repetition 0 again at position 2"):
        regression_gate(rows)


def trials(*rows: tuple[str, int, bool]) -> list[TrialOutcome]:
    return [TrialOutcome(task=t, repetition=r, passed=p) for t, r, p in rows]


def test_paired_difference_is_first_minus_second_and_counts_the_unpaired():
    first = trials(("a", 0, True), ("a", 1, True), ("b", 0, True), ("c", 0, False), ("only-first", 0, True))
    second = trials(("a", 0, False), ("a", 1, True), ("b", 0, False), ("c", 0, False), ("a", 2, True))
    result = paired_difference(first, second)
    assert isinstance(result, PairedDifference)
    assert result.estimate == pytest.approx(2 / 4)
    cells = (result.both_passed, result.first_only_passed, result.second_only_passed, result.neither_passed)
    assert cells == (1, 2, 0, 1)
    assert (result.n_pairs, result.n_tasks, result.first_unpaired, result.second_unpaired) == (4, 3, 1, 1)
    reverse = paired_difference(second, first)
    assert (reverse.estimate, reverse.lower, reverse.upper) == pytest.approx(
        (-result.estimate, -result.upper, -result.lower)
    )


def test_paired_difference_matches_the_gate_on_the_same_pairs():
    rows = outcomes(*((f"t{i}", r, (i + r) % 3 == 0, i % 2 == 0) for i in range(12) for r in range(4)))
    first = trials(*((o.task, o.repetition, o.new_passed) for o in rows))
    second = trials(*((o.task, o.repetition, o.old_passed) for o in rows))
    pairs, verdict = paired_difference(first, second), gate(rows)
    assert (pairs.estimate, pairs.lower, pairs.upper, pairs.deff) == (
        verdict.estimate, verdict.lower, verdict.upper, verdict.deff,
    )  # fmt: skip


def test_paired_difference_without_shared_trials_is_no_data():
    assert paired_difference(trials(("a", 0, True)), trials(("b", 0, True))) == NoData(
        reason="no paired trials"
    )


def test_paired_difference_rejects_a_trial_listed_twice_in_one_arm():
    with pytest.raises(
        StatisticsInputError, match=r"got task 'a' repetition 0 again in the second arm at position 1"
    ):
        paired_difference(trials(("a", 0, True)), trials(("a", 0, True), ("a", 0, False)))
