"""Given events, then results: the spec's results table, rule by rule, and the record's contents."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from armbench.ledger.events import (
    Agent,
    CheckRan,
    Cost,
    PlanFrozen,
    PlannedArm,
    PlannedTask,
    PlannedTrial,
    RunStarted,
    StepLeased,
    StepReported,
    StepSkipped,
    Usage,
    WorkspacePrepared,
)
from armbench.projections.record import build_record
from armbench.projections.results import fold_run
from armbench.projections.table import build_table, render_markdown

AT = datetime(2026, 1, 1, tzinfo=UTC)
REV = "a" * 40


def plan(trials: int = 1, arms: tuple[str, ...] = ("a",)) -> PlanFrozen:
    task = PlannedTask(id="t", title="T", source_hash="h", starting_commit="c" * 40,
                       prompt="SECRET PROMPT", check_run="SECRET COMMAND", protect=["test/**"])
    planned = [PlannedTrial(task="t", arm=arm, repetition=r, order=i, lane=1,
                            prompt_step=f"trials.r{r}.t.{arm}.prompt",
                            check_step=f"trials.r{r}.t.{arm}.check")
               for i, (r, arm) in enumerate((r, arm) for r in range(trials) for arm in arms)]
    return PlanFrozen(suite="s", suite_hash="sh", repo="https://x.invalid/r", repetitions=trials,
                      parallel=1, timeout_s=60, baseline_team_revision=REV, tasks=[task],
                      arms=[PlannedArm(name=a, tool="tool", model="m-1") for a in arms],
                      trials=planned)


def started() -> RunStarted:
    return RunStarted(run="r1", workflow="armbench-benchmark", source_hash="w", timeout_s=60,
                      at=AT)


def prompt(step: str, outcome: str = "succeeded", **kw) -> StepReported:
    return StepReported(step=step, lease="l", outcome=outcome, at=AT, **kw)


def check(step: str, result: str, **kw) -> CheckRan:
    return CheckRan(step=step, task="t", kind="trial", result=result, **kw)


P, C = "trials.r0.t.a.prompt", "trials.r0.t.a.check"


def result_of(*events) -> str:
    view = fold_run([started(), plan(), *events])
    return view.trials[0].result


def test_given_a_check_that_exits_0_then_passed():
    assert result_of(prompt(P), check(C, "passed", exit_code=0)) == "passed"


def test_given_a_check_that_ran_and_failed_then_failed():
    assert result_of(prompt(P), check(C, "failed", exit_code=1)) == "failed"


def test_given_a_check_that_could_not_run_after_a_good_prompt_then_error_not_failed():
    assert result_of(prompt(P), check(C, "could_not_run", cause="timeout")) == "error"


def test_given_a_failed_prompt_then_error():
    assert result_of(prompt(P, "error", cause="exit", exit_code=2)) == "error"


def test_given_a_prompt_skipped_for_its_tool_or_baseline_then_not_run():
    for reason in ("tool_unavailable", "needs_unmet", "timed_out", "cancelled"):
        assert result_of(StepSkipped(step=P, reason=reason, at=AT)) == "not_run"


def test_given_no_events_for_the_trial_then_not_run_and_a_lease_alone_is_error():
    assert result_of() == "not_run"
    lease = StepLeased(step=P, lease="l", driver="d", at=AT, expires_at=AT)
    assert result_of(lease) == "error"


def test_given_one_pass_in_ten_then_a_pass_rate_of_10_percent():
    p = plan(trials=10)
    events = [started(), p, prompt(p.trials[0].prompt_step),
              check(p.trials[0].check_step, "passed")]
    table = build_table(fold_run(events))
    assert table.arms[0].pass_rate == 0.1
    assert "| 10% (1/10) |" in render_markdown(table)


def test_usage_medians_say_how_many_values_and_cost_is_never_filled_in():
    p = plan(trials=3)
    usage = [Usage(tokens={"input": 10, "output": 5}, cost=Cost(amount=0.5, unit="USD")),
             Usage(tokens={"input": 30, "output": 5}), None]
    events = [started(), p]
    for t, u in zip(p.trials, usage, strict=True):
        events += [prompt(t.prompt_step, usage=u, duration_ms=1000), check(t.check_step, "failed")]
    text = render_markdown(build_table(fold_run(events)))
    assert "| a | 25 (2) | 1.0 s (3) | 0.50 USD (1 of 3, incomplete) |" in text


def test_a_reported_model_that_contradicts_a_concrete_id_is_a_deviation_and_missing_is_not_verified():
    p = plan(trials=2)
    odd = Agent(tool="tool", model_requested="m-1", model_reported="other-2")
    events = [started(), p, prompt(p.trials[0].prompt_step, agent=odd),
              check(p.trials[0].check_step, "passed"),
              prompt(p.trials[1].prompt_step, agent=Agent(tool="tool", model_requested="m-1")),
              check(p.trials[1].check_step, "passed")]
    row = build_table(fold_run(events)).arms[0]
    assert (row.deviations, row.not_verified, row.passed) == (1, 1, 2)


def test_a_tool_selector_is_never_compared_with_a_provider_model_id():
    p = plan()
    agent = Agent(tool="tool", model_requested="opus", model_reported="claude-opus-4-8[1m]")
    events = [started(), p, prompt(P, agent=agent), check(C, "passed")]
    assert build_table(fold_run(events)).arms[0].deviations == 0


def test_the_record_holds_no_prompt_command_or_path_and_every_trial():
    p = plan(trials=2, arms=("a", "b"))
    rec = msgspec.to_builtins(build_record(fold_run([started(), p]), run="r1"))
    text = str(rec)
    assert "SECRET" not in text and "/tmp" not in text
    assert [(t["arm"], t["repetition"], t["order"], t["result"]) for t in rec["trials"]] == [
        ("a", 0, 0, "not_run"), ("b", 0, 1, "not_run"), ("a", 1, 2, "not_run"),
        ("b", 1, 3, "not_run")]
    assert rec["baselineTeamRevision"] == REV


def test_the_record_says_how_each_trials_clone_was_made_by_its_last_preparation():
    """A retried prompt is prepared again: the record keeps the last clone's way; a log from
    before armbench said has none, and a check step's clone is not the trial's."""
    p = plan(trials=2)

    def prepared(step: str, how: str | None) -> WorkspacePrepared:
        return WorkspacePrepared(step=step, lease="l", path="/tmp/w/c", commit="c" * 40,
                                 duration_ms=1, preparation=how)  # type: ignore[arg-type]
    events = [started(), p, prepared(P, "clone"), prepared(P, "overlay"), prompt(P),
              prepared("trials.r1.t.a.check", "copy")]
    rec = msgspec.to_builtins(build_record(fold_run(events), run="r1"))
    assert [t.get("clone") for t in rec["trials"]] == ["overlay", None]
