"""What `armbench run` prints after its tables: a pair in a sentence, a trial of each result to
paste into `explain`, and the next commands; from the record alone."""

from __future__ import annotations

from armbench.benchmark.records.reporting import project
from armbench.projections.arm_pairs import derive_pairs
from armbench.projections.closing import closing_lines, pair_line
from compare.builders import arm, plan, run_events, task

ARMS = [arm("careful", model="good"), arm("hasty", model="bad")]
TASKS = [task(f"t{i}") for i in range(6)]


def _lines(outcome) -> list[str]:
    projected = project("r1", run_events(plan(ARMS, TASKS, 2), outcome), None)
    return closing_lines("r1", projected.table.pairs, projected.record.trials)


def test_a_clear_drop_names_the_better_arm_and_a_trial_of_each_result() -> None:
    lines = _lines(lambda t, a, rep: "passed" if a == "careful" else "failed")
    assert lines[0] == ("hasty vs careful (model): \u2212100 points, 95% interval \u2212100 to "
                        f"{lines[0].split(' to ')[1].split(':')[0]}: careful is better on these tasks.")
    assert lines[1:] == [
        "A passed trial: armbench explain r1 r0.t0.careful",
        "A failed trial: armbench explain r1 r0.t0.hasty",
        "Next: armbench dashboard --open to browse this run, or armbench show r1 <trial> --check "
        "for a trial's check output."]


def test_identical_arms_show_no_difference_and_the_interval_includes_zero() -> None:
    lines = _lines(lambda t, a, rep: "passed" if t in ("t0", "t1", "t2") else "failed")
    assert lines[0].startswith("hasty vs careful (model): 0 points, 95% interval \u2212")
    assert lines[0].endswith(": no difference shown on these tasks (the interval includes 0).")


def test_one_arm_has_no_pair_line() -> None:
    projected = project("r1", run_events(plan(ARMS[:1], TASKS, 1), lambda t, a, r: "passed"), None)
    lines = closing_lines("r1", projected.table.pairs, projected.record.trials)
    assert [line.split(":")[0] for line in lines] == ["A passed trial", "Next"]
    assert all(" vs " not in line for line in lines)


def test_a_pair_without_paired_trials_says_so() -> None:
    projected = project("r1", run_events(plan(ARMS, TASKS, 1), lambda t, a, r: "passed"), None)
    record = projected.record
    [pair] = derive_pairs(record.arms, [t for t in record.trials if t.arm == "careful"])
    assert pair_line(pair) == "hasty vs careful (model): no paired trials, so no difference can be told."
