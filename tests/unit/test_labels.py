"""A successCriteria trial's result from its correctness label, and labels in the record and table:
given a run's events, the fold says."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from armbench.ledger.events import (
    Cost,
    JudgeFailed,
    LabelRecorded,
    PlanFrozen,
    PlannedArm,
    PlannedLabel,
    PlannedScorer,
    PlannedTask,
    PlannedTrial,
    RubricRef,
    StepReported,
    Usage,
)
from armbench.projections.labels import asks_again, rejudged, rescore, scorer_rows, trial_labels
from armbench.projections.record import build_record
from armbench.projections.results import fold_run

AT = datetime(2026, 12, 1, tzinfo=UTC)
STEP = "trials.r0.docs.a.prompt"
CORRECT = "armbench:correctness:docs"


def _given(*verdicts: object) -> list[object]:
    task = PlannedTask(id="docs", title="d", source_hash="0" * 64, starting_commit="1" * 40,
                       prompt="p", success_criteria="It reads well.")
    plan = PlanFrozen(suite="s", suite_hash="0" * 64, repo="r", repetitions=1, parallel=1,
                      timeout_s=60, baseline_team_revision="2" * 40, tasks=[task],
                      arms=[PlannedArm(name="a", tool="x")],
                      trials=[PlannedTrial(task="docs", arm="a", repetition=0, order=0, lane=1,
                                           prompt_step=STEP, check_step="",
                                           judge_step="trials.r0.docs.a.judge")],
                      scorers=[PlannedScorer(name=CORRECT, rubric=RubricRef(source_hash="3" * 64),
                                             task="docs", labels=[
                                                 PlannedLabel(value="correct", score=1.0),
                                                 PlannedLabel(value="incorrect", score=0.0)],
                                             passing_score=1.0, text="secret rubric")])
    return [plan, StepReported(step=STEP, lease="l", outcome="succeeded", at=AT), *verdicts]


def _label(label: str, passed: bool, **kw: object) -> LabelRecorded:
    return LabelRecorded(step=STEP, scorer=CORRECT, rubric_hash="3" * 64, label=label,
                         score=1.0 if passed else 0.0, passed=passed, reason="why", at=AT, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(("verdicts", "result"), [
    ([_label("correct", True)], "passed"),
    ([_label("incorrect", False)], "failed"),
    ([JudgeFailed(step=STEP, scorer=CORRECT, rubric_hash="3" * 64, cause="timeout", at=AT)], "unscored"),
    ([], "unscored"),
    ([_label("correct", True, calibration=True)], "unscored"),  # a calibration label scores nothing
    ([_label("correct", True), JudgeFailed(step=STEP, scorer=CORRECT, rubric_hash="3" * 64,
                                           cause="exit", at=AT)], "unscored"),  # the last verdict
])
def test_a_criteria_trial_is_passed_failed_or_unscored_by_its_correctness_label(
        verdicts: list[object], result: str) -> None:
    view = fold_run(_given(*verdicts))  # type: ignore[arg-type]
    assert view.trials[0].result == result


def test_the_record_has_the_scorer_hash_and_the_label_and_never_the_rubric_or_the_reason() -> None:
    usage = Usage(tokens={"input": 10}, cost=Cost(amount=0.5, unit="USD"))
    view = fold_run(_given(_label("correct", True, usage=usage)))  # type: ignore[arg-type]
    record = msgspec.to_builtins(build_record(view, run="r1"))
    assert record["scorers"] == [{"name": CORRECT, "rubric": {"sourceHash": "3" * 64}}]
    trial = record["trials"][0]
    assert trial["labels"] == [{"scorer": CORRECT, "label": "correct", "score": 1.0, "passed": True,
                                "rubricHash": "3" * 64}]
    assert trial["scoringCost"] == [{"amount": 0.5, "unit": "USD"}] and "cost" not in trial
    assert "secret rubric" not in str(record) and "why" not in str(trial_labels(view.trials[0]))


def test_rescore_moves_scores_not_passed_and_says_what_moved() -> None:
    events, moved = rescore(_given(_label("correct", True)), {CORRECT: {"correct": 0.5}})  # type: ignore[arg-type]
    view = fold_run(events)
    label = view.trials[0].labels[CORRECT]
    assert isinstance(label, LabelRecorded) and (label.score, label.passed) == (0.5, True)
    assert moved == [f'scorer {CORRECT}: label "correct" scored 1, now 0.5 (1 label(s) moved)']
    assert view.plan is not None
    assert scorer_rows(view.plan, view.trials)[0]["meanScore"] == 0.5


def _today(text: str = "a fixed rubric") -> PlannedScorer:
    plan = _given()[0]
    assert isinstance(plan, PlanFrozen)
    return msgspec.structs.replace(plan.scorers[0], text=text, rubric=RubricRef(source_hash="4" * 64))


def test_a_scorer_asks_again_when_its_rubric_or_label_values_change_not_its_scores() -> None:
    frozen = _today("secret rubric")
    assert not asks_again(frozen, msgspec.structs.replace(frozen, passing_score=0.5, labels=[
        PlannedLabel(value="correct", score=0.5), PlannedLabel(value="incorrect", score=0.0)]))
    assert asks_again(frozen, _today())
    assert asks_again(frozen, msgspec.structs.replace(frozen, labels=[
        PlannedLabel(value="right", score=1.0), PlannedLabel(value="incorrect", score=0.0)]))


def test_rejudged_puts_the_rescored_verdict_in_the_trials_own_place_and_the_new_rubric_in_the_plan() -> None:
    own = _label("correct", True)
    stale = _label("correct", True, rescored=True)  # an earlier rescore, under the frozen rubric
    again = msgspec.structs.replace(_label("incorrect", False, rescored=True), rubric_hash="4" * 64)
    events, lines = rejudged(_given(own, stale, again), {CORRECT: _today()})  # type: ignore[arg-type]
    view = fold_run(events)
    label = view.trials[0].labels[CORRECT]
    assert isinstance(label, LabelRecorded) and (label.label, label.rescored) == ("incorrect", False)
    assert view.trials[0].result == "failed" and view.rescored == []
    assert view.plan is not None and view.plan.scorers[0].rubric_hash == "4" * 64
    assert lines == [f"scorer {CORRECT}: its rubric or labels changed since the plan froze (rubric "
                     "444444444444); 1 of 1 judged trial(s) judged again from their kept evidence, "
                     "1 verdict(s) moved",
                     '  r0.docs.a: "correct", now "incorrect"']


def test_rejudged_leaves_a_trial_not_judged_again_without_a_verdict_and_says_so() -> None:
    events, lines = rejudged(_given(_label("correct", True)), {CORRECT: _today()})  # type: ignore[arg-type]
    assert fold_run(events).trials[0].result == "unscored"
    assert lines[0].endswith("0 of 1 judged trial(s) judged again from their kept evidence, "
                             "0 verdict(s) moved, 1 not judged again (no verdict under the new rubric)")
    assert rejudged(_given(), {})[1] == []


def test_a_rescored_verdict_never_counts_in_the_runs_own_tables() -> None:
    view = fold_run(_given(_label("correct", True, rescored=True)))  # type: ignore[arg-type]
    assert view.trials[0].result == "unscored" and len(view.rescored) == 1
