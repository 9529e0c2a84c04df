"""`armbench plan --detect`: repetitions (or tasks) and cost from earlier records, pure."""

from __future__ import annotations

import msgspec
import pytest

from armbench.projections.detect import plan_detection
from armbench.projections.record import arm_entries
from armbench.projections.record_types import Record, RecordArm, as_record
from armbench.projections.stats import NeedMoreTasks, VarianceComponents, repetitions_needed, tasks_needed
from compare.builders import all_pass, arm, plan, record_of, run_events, task

ARMS = [arm("a", model="m1"), arm("b", model="m2")]
TASKS = [task(f"t{i}") for i in range(4)]
PLAN = plan(ARMS, TASKS, 4)


def detect(records: list[Record], points: float, the_plan=PLAN):
    return plan_detection(tasks={t.id: t.source_hash for t in the_plan.tasks},
                          arms=msgspec.convert(arm_entries(the_plan), list[RecordArm]),
                          repetitions=the_plan.repetitions,
                          records=records, points=points)


def half_of_b(t: str, a: str, rep: int) -> str:
    """a passes everything; b passes two of four repetitions of every task."""
    return "passed" if a == "a" or rep % 2 == 0 else "failed"


def flipped(t: str, a: str, rep: int) -> str:
    """a passes t0 and t1, b passes t2 and t3: the arms disagree by whole tasks."""
    return "passed" if (a == "a") == (t in {"t0", "t1"}) else "failed"


def record(outcome, *, cost: float | None = None, the_plan=PLAN, run: str = "r1") -> Record:
    usage = (lambda _t: {"cost": cost}) if cost is not None else None
    return as_record(record_of(run_events(the_plan, outcome, run=run, usage=usage), run))


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_repetitions_needed_and_their_cost_in_the_stated_unit() -> None:
    got = detect([record(half_of_b, cost=0.2)], 50)
    # omega2 = 0 (b's rate is 0.5 on every task), sigma2_b = 0.25 * 4/3,
    # so K = 0.3333 / (4 * 0.25 / 7.8489) = 2.6: 3 repetitions
    [pair] = got.pairs
    assert (pair.first, pair.second, pair.key, pair.repetitions) == ("a", "b", "model", 3)
    assert isinstance(pair.components, VarianceComponents)
    assert pair.repetitions == repetitions_needed(pair.components, n_tasks=4, delta=0.5)
    assert (got.repetitions_needed, got.tasks_needed, got.trials) == (3, None, 24)  # 4 x 3 x 2 arms
    assert got.cost_per_trial == {"USD": 0.2} and got.cost == pytest.approx({"USD": 4.8})
    assert got.lines[-1] == ("The suite needs 3 repetitions: 24 trials (4 tasks x 3 repetitions x 2 "
                             "arms), about 4.80 USD at the median stated cost of 0.20 USD a trial.")
    assert got.lines[0].startswith("To detect a difference of 50 points between two arms with 80% power")


@pytest.mark.slow
def test_when_no_number_of_repetitions_can_do_it_it_says_how_many_tasks() -> None:
    got = detect([record(flipped)], 20)
    [pair] = got.pairs
    assert isinstance(pair.components, VarianceComponents)
    assert isinstance(repetitions_needed(pair.components, n_tasks=4, delta=0.2), NeedMoreTasks)
    assert (pair.repetitions, pair.at_repetitions) == (None, 4)
    assert pair.tasks == tasks_needed(pair.components, k=4, delta=0.2) == 262
    assert (got.tasks_needed, got.trials) == (262, 262 * 4 * 2)
    assert "no number of repetitions of the 4 tasks detects 20 points" in got.lines[1]
    assert got.lines[-1].startswith("More tasks are needed: 262 tasks at 4 repetitions")
    assert got.lines[-1].endswith("cost not stated.")


def test_without_earlier_records_it_says_so_plainly() -> None:
    got = detect([], 10)
    assert (got.pairs, got.trials, got.records) == ([], None, 0)
    assert got.lines == ["No earlier record ran these tasks (by sourceHash) on these arms, so there "
                         "is nothing to estimate from. Run the suite once, with two or more "
                         "repetitions, and plan again."]


@pytest.mark.slow
def test_only_the_same_tasks_by_source_hash_on_the_same_arms_count() -> None:
    edited = plan(ARMS, [task(t.id, "edited") for t in TASKS], 4)
    other_model = plan([ARMS[0], arm("b", model="m3")], TASKS, 4)
    got = detect([record(half_of_b, the_plan=edited, run="r1"),
                  record(half_of_b, the_plan=other_model, run="r2")], 10)
    [pair] = got.pairs
    assert got.records == 1  # r2 still gives arm a's trials
    assert pair.repetitions is None and pair.components.reason == (
        "need at least two tasks run by both arms, found 0")
    assert got.lines[-1].startswith("Not every two arms can be estimated yet")


def test_trials_that_never_ran_are_left_out() -> None:
    def never_b(t: str, a: str, rep: int) -> str:
        return "not_run" if a == "b" else "passed"
    got = detect([record(never_b)], 10)
    assert got.trials_used == 16 and not isinstance(got.pairs[0].components, VarianceComponents)


def test_records_with_one_repetition_give_a_cautious_estimate_and_say_so() -> None:
    single = plan(ARMS, TASKS, 1)
    got = detect([record(flipped, the_plan=single)], 20, the_plan=single)
    [pair] = got.pairs
    assert isinstance(pair.components, VarianceComponents) and not pair.components.separated
    assert "a cautious estimate" in got.lines[1]


def test_a_suite_with_one_arm_has_nothing_to_tell_apart() -> None:
    one = plan(ARMS[:1], TASKS, 3)
    got = detect([record(all_pass, the_plan=one)], 10, the_plan=one)
    assert got.lines == ["The suite has one arm, so there are no two arms to tell apart."]
