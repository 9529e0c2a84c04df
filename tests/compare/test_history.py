"""`--fail-on-regression`'s comparison (benchmark-suites.md): which published record is history,
how trials pair, when an arm drops, and the three messages word for word."""

from __future__ import annotations

from datetime import timedelta

import msgspec
import pytest

from armbench.ledger.events import NoTeam, PlanFrozen, PlannedArm, PlannedTask, PlanSubset, PulledTeam
from armbench.projections.history import comparable, compare_records, newest_comparable, points
from armbench.projections.record_types import Record, as_record
from compare.builders import AT, all_pass, arm, plan, record_of, run_events, task

BRANCH = "armbench-reports"
ARMS = [arm("claude", "claude", "opus"), arm("codex", "codex", "gpt")]
TASKS = [task(f"t{i}") for i in range(9)]
OLD_CODEX_PASSES = {"t0", "t1", "t2", "t3", "t4", "t6"}  # 6/9
NEW_CODEX_PASSES = {"t0", "t6"}  # 2/9: four tasks lost, none gained


def record(run: str, minutes: int, outcome=all_pass, *, arms: list[PlannedArm] = ARMS,
           tasks: list[PlannedTask] = TASKS, reps: int = 1, suite: str = "auth-fixes",
           state: str = "succeeded") -> Record:
    events = run_events(plan(arms, tasks, reps, suite=suite), outcome, run=run,
                        at=AT + timedelta(minutes=minutes), state=state)
    return as_record(record_of(events, run))


def codex_passes(which: set[str]):
    def outcome(t: str, a: str, _rep: int) -> str:
        return "passed" if a != "codex" or t in which else "failed"
    return outcome


OLD = record("r1a2b3c4d5e6f7a8b", 0, codex_passes(OLD_CODEX_PASSES))


def test_an_arm_whose_whole_interval_is_below_zero_drops_and_is_named_with_the_run() -> None:
    new = record("rnew", 60, codex_passes(NEW_CODEX_PASSES))
    verdict = compare_records(new, [OLD], branch=BRANCH)
    assert verdict.regressed and verdict.against == "r1a2b3c4d5e6f7a8b"
    assert verdict.lines == [
        'Arm "codex" passed 2/9 paired trials, against 6/9 in run r1a2b3c4d5e6f7a8b: a drop of 44 '
        "points, with a 95% interval of -70 to -2 points."]
    assert [a.arm for a in verdict.arms if a.dropped] == ["codex"]


def codex_errors(transient: set[str], passes: set[str] = NEW_CODEX_PASSES):
    """Codex passes `passes`; of the rest, the tasks in `transient` are transient errors."""
    def outcome(t: str, a: str, _rep: int) -> str:
        if a != "codex" or t in passes:
            return "passed"
        return "transient" if t in transient else "failed"
    return outcome


NOT_DECIDED = (
    'Arm "codex" is not comparable with run r1a2b3c4d5e6f7a8b: 4 transient errors. It passed '
    "2/9 paired trials against 6/9, but without the 4 trials that ended in the provider's or "
    "the network's failure (a rate limit, an overload, a 5xx, a dropped connection) it did not "
    "drop, so the drop is not decided. ")


def test_a_drop_its_transient_errors_explain_is_no_regression_and_fails_closed() -> None:
    new = record("rnew", 60, codex_errors({"t1", "t2", "t3", "t4"}))  # the four lost: the provider's
    verdict = compare_records(new, [OLD], branch=BRANCH)
    assert not verdict.regressed and verdict.inconclusive
    codex = next(a for a in verdict.arms if a.arm == "codex")
    assert (codex.dropped, codex.explained, codex.transient) == (True, True, 4)
    assert verdict.lines == [NOT_DECIDED + (
        "--fail-on-regression fails closed on it (exit 1): run the suite again once the provider "
        "is well, or add --allow-inconclusive to let such a run through.")]
    assert verdict.exit_code(allow_inconclusive=False) == 1
    assert verdict.exit_code(allow_inconclusive=True) == 0


def test_an_inconclusive_drop_let_through_says_so() -> None:
    new = record("rnew", 60, codex_errors({"t1", "t2", "t3", "t4"}))
    verdict = compare_records(new, [OLD], branch=BRANCH, allow_inconclusive=True)
    assert verdict.lines == [NOT_DECIDED + (
        "--allow-inconclusive lets this run through the gate. Run the suite again once the "
        "provider is well.")]
    assert verdict.exit_code(allow_inconclusive=True) == 0


def test_a_tool_that_says_every_attempt_was_transient_never_passes_the_gate() -> None:
    """A collapse from 9/9 to 0/9 where the tool exits 75 on every trial (its own word that the
    provider failed): not decided, so it fails closed."""
    old = record("r1a2b3c4d5e6f7a8b", 0, lambda t, a, r: "passed")
    new = record("rnew", 60, lambda t, a, r: "transient" if a == "codex" else "passed")
    verdict = compare_records(new, [old], branch=BRANCH)
    codex = next(a for a in verdict.arms if a.arm == "codex")
    assert (codex.dropped, codex.explained, codex.transient, codex.new_passed) == (True, True, 9, 0)
    assert verdict.exit_code(allow_inconclusive=False) == 1


def test_a_drop_that_stands_without_its_transient_errors_is_still_a_regression() -> None:
    new = record("rnew", 60, codex_errors({"t1"}, passes={"t6"}))  # 1/9: one transient error of five lost
    verdict = compare_records(new, [OLD], branch=BRANCH)
    codex = next(a for a in verdict.arms if a.arm == "codex")
    assert verdict.regressed and (codex.dropped, codex.explained, codex.transient) == (True, False, 1)
    assert verdict.exit_code(allow_inconclusive=True) == 1  # allowing the inconclusive allows no drop
    assert verdict.lines[0].startswith('Arm "codex" passed 1/9 paired trials, against 6/9')


def test_no_separated_drop_says_so_against_the_run() -> None:
    new = record("rnew", 60, codex_passes({"t0", "t1", "t2", "t3", "t6"}))  # 5/9: within chance
    verdict = compare_records(new, [OLD], branch=BRANCH)
    assert not verdict.regressed
    assert verdict.lines == ["No arm's pass rate dropped by more than chance against run r1a2b3c4d5e6f7a8b."]


def test_nothing_comparable_gives_the_notice() -> None:
    new = record("rnew", 60)
    verdict = compare_records(new, [record("rother", 0, suite="other")], branch=BRANCH)
    assert (verdict.against, verdict.regressed, verdict.arms) == (None, False, [])
    assert verdict.lines == [
        "No earlier succeeded run of suite auth-fixes ran the same tasks on the same arms on "
        "armbench-reports: recording is off, or nothing comparable has been published yet. "
        "--fail-on-regression has nothing to compare with."]


@pytest.mark.parametrize(("why", "old"), [
    ("the run failed", record("r0", 0, state="failed")),
    ("the run was cancelled", record("r0", 0, state="cancelled")),
    ("another suite", record("r0", 0, suite="other")),
    ("a task file changed", record("r0", 0, tasks=[*TASKS[:-1], task("t8", "edited")])),
    ("a task more", record("r0", 0, tasks=[*TASKS, task("t9")])),
    ("an arm renamed", record("r0", 0, arms=[ARMS[0], arm("codex-2", "codex", "gpt")])),
    ("another model", record("r0", 0, arms=[ARMS[0], arm("codex", "codex", "gpt-2")])),
    ("another effort", record("r0", 0, arms=[ARMS[0], arm("codex", "codex", "gpt", effort="high")])),
    ("another tool", record("r0", 0, arms=[ARMS[0], arm("codex", "codex-cli", "gpt")])),
    ("another team choice", record("r0", 0, arms=[ARMS[0], arm("codex", "codex", "gpt",
                                                              team=NoTeam())])),
    ("an arm fewer", record("r0", 0, arms=ARMS[:1])),
])
def test_what_makes_an_earlier_record_not_comparable(why: str, old: Record) -> None:
    assert not comparable(record("rnew", 60), old), why


def test_the_revision_a_team_resolved_to_and_the_arm_order_do_not_matter() -> None:
    moved = [arm("codex", "codex", "gpt", team=PulledTeam(revision="f" * 40)), ARMS[0]]
    assert comparable(record("rnew", 60), record("r0", 0, arms=moved))


def test_the_newest_earlier_comparable_record_is_history_and_never_the_run_itself_or_a_later_one() -> None:
    new = record("rnew", 60)
    older, newer = record("rolder", 0), record("rnewer", 30)
    later = record("rlater", 90)
    assert newest_comparable(new, [older, later, newer, new, record("rfail", 45, state="failed")]
                             ).run == "rnewer"
    assert newest_comparable(new, [later, new]) is None


def test_trials_pair_by_task_and_repetition_and_extra_repetitions_stay_unpaired() -> None:
    def codex_fails(_t: str, a: str, _rep: int) -> str:
        return "failed" if a == "codex" else "passed"
    new = record("rnew", 60, codex_fails, tasks=TASKS[:3], reps=3)
    old = record("r0", 0, tasks=TASKS[:3], reps=2)
    verdict = compare_records(new, [old], branch=BRANCH)
    codex = next(a for a in verdict.arms if a.arm == "codex")
    assert (codex.paired, codex.new_passed, codex.old_passed, codex.dropped) == (6, 0, 6, True)


@pytest.mark.parametrize(("x", "shown"), [(-0.444, "-44"), (0.1, "10"), (-0.003, "-0.3"), (0.0, "0")])
def test_points_keep_the_sign_that_rounding_would_hide(x: float, shown: str) -> None:
    assert points(x) == shown


def subset_record(run: str, minutes: int, reps: int = 1) -> Record:
    """A record of a subset run of the same tasks and arms (`--repetitions` only)."""
    events = run_events(plan(ARMS, TASKS, reps, suite="auth-fixes"), all_pass, run=run,
                        at=AT + timedelta(minutes=minutes))
    events = [msgspec.structs.replace(e, subset=PlanSubset(
        tasks=[t.id for t in TASKS], arms=[a.name for a in ARMS], repetitions=reps))
        if isinstance(e, PlanFrozen) else e for e in events]
    return as_record(record_of(events, run))


def test_a_subset_is_never_compared_with_a_whole_run_nor_the_reverse_and_the_gate_says_why() -> None:
    whole, subset = record("rwhole", 0), subset_record("rsub", 30)
    assert subset.subset is not None and whole.subset is None
    assert not comparable(subset, whole) and not comparable(record("rnew", 60), subset)
    assert compare_records(subset_record("rsub2", 60), [whole], branch=BRANCH).lines == [
        "This run was a subset of suite auth-fixes (--task, --arm or --repetitions), and no "
        "earlier succeeded run of the same subset is on armbench-reports (1 whole run(s) of the "
        "suite are, but a subset is never compared with a whole run): --fail-on-regression has "
        "nothing to compare with. Run the whole suite for the gate, or publish a run of this "
        "subset first."]
    assert compare_records(record("rnew", 60), [subset], branch=BRANCH).lines == [
        "No earlier succeeded whole run of suite auth-fixes ran the same tasks on the same arms "
        "on armbench-reports; 1 subset run(s) of the suite are there, but a whole run is never "
        "compared with a subset (--task, --arm or --repetitions). --fail-on-regression has "
        "nothing to compare with."]
    assert compare_records(record("rnew", 60), [whole, subset], branch=BRANCH).against == "rwhole"
    assert compare_records(subset_record("rsub2", 60), [whole, subset],
                           branch=BRANCH).against == "rsub"


def _with_roles(run: str, minutes: int, roles: list[str] | None, outcome=all_pass) -> Record:
    frozen = msgspec.structs.replace(plan(ARMS, TASKS, 1, suite="auth-fixes"), roles=roles)
    events = run_events(frozen, outcome, run=run, at=AT + timedelta(minutes=minutes))
    return as_record(record_of(events, run))


def test_arms_delivered_for_other_roles_are_not_comparable_and_unknown_roles_are() -> None:
    old = _with_roles("rold", 0, ["backend"])
    assert [a.roles for a in old.arms] == [["backend"], ["backend"]]
    assert comparable(_with_roles("rnew", 60, ["backend"]), old)
    assert not comparable(_with_roles("rnew", 60, ["frontend"]), old)
    assert not comparable(_with_roles("rnew", 60, []), old)
    assert comparable(_with_roles("rnew", 60, ["frontend"]), _with_roles("rolder", 0, None))


def _with_version(rec: Record, arm_name: str, version: str | None) -> Record:
    from armbench.projections.record_types import RecordAgent, RecordAgentTool

    trials = [msgspec.structs.replace(t, agent=RecordAgent(tool=RecordAgentTool(
        name=arm_name, version=version))) if t.arm == arm_name else t for t in rec.trials]
    return msgspec.structs.replace(rec, trials=trials)


def test_a_tool_version_that_changed_is_compared_and_named_in_the_gates_lines() -> None:
    old = _with_version(OLD, "codex", "0.45.0")
    dropped = _with_version(record("rnew", 60, codex_passes(NEW_CODEX_PASSES)), "codex", "0.47.1")
    verdict = compare_records(dropped, [old], branch=BRANCH)
    assert verdict.regressed
    assert verdict.lines == [
        'Arm "codex" (codex 0.45.0 → 0.47.1) passed 2/9 paired trials, against 6/9 in run '
        "r1a2b3c4d5e6f7a8b: a drop of 44 points, with a 95% interval of -70 to -2 points."]
    held = _with_version(record("rnew", 60, codex_passes(OLD_CODEX_PASSES)), "codex", "0.47.1")
    assert compare_records(held, [old], branch=BRANCH).lines == [
        "No arm's pass rate dropped by more than chance against run r1a2b3c4d5e6f7a8b.",
        'Arm "codex" (codex 0.45.0 → 0.47.1): its tool\'s version changed since run '
        "r1a2b3c4d5e6f7a8b; the comparison above includes that change."]
    unknown = _with_version(record("rnew", 60, codex_passes(OLD_CODEX_PASSES)), "codex", None)
    assert len(compare_records(unknown, [old], branch=BRANCH).lines) == 1  # never a guess


def _judged(rec: Record, tasks: set[str], judge: tuple[str, str, str] | None,
            rubric: str = "a" * 64) -> Record:
    """The record with each trial of `tasks` labelled by `judge` (tool, version, model; None: a
    label recorded before labels named their judge)."""
    from armbench.projections.record_types import RecordJudge, RecordLabel

    def label() -> RecordLabel:
        if judge is None:
            return RecordLabel(scorer="quality", label="good", score=1.0, passed=True)
        tool, version, model = judge
        return RecordLabel(scorer="quality", label="good", score=1.0, passed=True,
                           judge=RecordJudge(tool=tool, version=version, model=model), rubric_hash=rubric)

    trials = [msgspec.structs.replace(t, labels=[label()]) if t.task in tasks else t for t in rec.trials]
    return msgspec.structs.replace(rec, trials=trials)


def test_a_judged_task_whose_judge_changed_is_left_out_and_named() -> None:
    """Four of the tasks codex lost are judged; under another judge version they are not
    compared, and what is left (t5, t7, t8 and the unjudged ones) holds no separated drop."""
    judged = {"t1", "t2", "t3", "t4"}
    old = _judged(OLD, judged, ("claude", "2.1.0", "sonnet"))
    new = _judged(record("rnew", 60, codex_passes(NEW_CODEX_PASSES)), judged, ("claude", "2.2.0", "sonnet"))
    verdict = compare_records(new, [old], branch=BRANCH)
    assert not verdict.regressed
    assert [v.paired for v in verdict.arms] == [5, 5]
    assert verdict.lines[0] == "No arm's pass rate dropped by more than chance against run r1a2b3c4d5e6f7a8b."
    assert verdict.lines[1] == (
        "Task t1 is not comparable with run r1a2b3c4d5e6f7a8b: the judge changed (claude 2.1.0 sonnet, "
        "rubric aaaaaaaaaaaa → claude 2.2.0 sonnet, rubric aaaaaaaaaaaa). Its trials are left out of the "
        "comparison above.")
    assert len(verdict.lines) == 5
    same = _judged(record("rnew", 60, codex_passes(NEW_CODEX_PASSES)), judged, ("claude", "2.1.0", "sonnet"))
    assert compare_records(same, [old], branch=BRANCH).regressed  # the same judge: compared as before
    rubric = _judged(record("rnew", 60, codex_passes(NEW_CODEX_PASSES)), judged,
                     ("claude", "2.1.0", "sonnet"), rubric="b" * 64)
    assert not compare_records(rubric, [old], branch=BRANCH).regressed
    unnamed = _judged(OLD, judged, None)  # an old record's labels name no judge: never the same
    lines = compare_records(same, [unnamed], branch=BRANCH).lines
    assert "the judge changed (run r1a2b3c4d5e6f7a8b does not name its judge)" in lines[1]


def _with_assets(rec: Record, arm_name: str, assets: str, revision: str = "f" * 40) -> Record:
    from armbench.projections.record_types import RecordTeam

    arms = [msgspec.structs.replace(a, team=RecordTeam(kind="pulled", revision=revision, assets=assets))
            if a.name == arm_name else a for a in rec.arms]
    return msgspec.structs.replace(rec, arms=arms)


def test_team_assets_that_changed_under_one_team_revision_are_compared_and_named() -> None:
    """Other roles (or another armbench's reading of the team repo) deliver other assets at one
    team revision: compared, as a tool upgrade is, and named, since nothing else shows it."""
    old = _with_assets(OLD, "codex", "1a2b3c4d" + "0" * 56)
    dropped = _with_assets(record("rnew", 60, codex_passes(NEW_CODEX_PASSES)), "codex", "5e6f7a8b" + "0" * 56)
    verdict = compare_records(dropped, [old], branch=BRANCH)
    assert verdict.regressed
    assert verdict.lines == [
        'Arm "codex" (team assets 1a2b3c4d → 5e6f7a8b under team revision fffffff) passed 2/9 '
        "paired trials, against 6/9 in run r1a2b3c4d5e6f7a8b: a drop of 44 points, with a 95% "
        "interval of -70 to -2 points."]
    held = _with_version(_with_assets(record("rnew", 60, codex_passes(OLD_CODEX_PASSES)), "codex",
                                      "5e6f7a8b" + "0" * 56), "codex", "0.47.1")
    assert compare_records(held, [_with_version(old, "codex", "0.45.0")], branch=BRANCH).lines[1] == (
        'Arm "codex" (codex 0.45.0 → 0.47.1, team assets 1a2b3c4d → 5e6f7a8b under team revision '
        "fffffff): its tool's version and its team assets changed since run r1a2b3c4d5e6f7a8b; the "
        "comparison above includes that change.")
    moved = _with_assets(record("rnew", 60, codex_passes(OLD_CODEX_PASSES)), "codex", "5e6f7a8b" + "0" * 56,
                         revision="e" * 40)  # another team revision: the record already says so
    assert len(compare_records(moved, [old], branch=BRANCH).lines) == 1
    same = _with_assets(record("rnew", 60, codex_passes(OLD_CODEX_PASSES)), "codex", "1a2b3c4d" + "0" * 56)
    assert len(compare_records(same, [old], branch=BRANCH).lines) == 1
