"""A successCriteria trial's result from its correctness label, and labels in the record and table:
given a run's events, the fold says."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from ledger.events import (
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
from projections.labels import rescore, scorer_rows, trial_labels
from projections.record import build_record
from projections.results import fold_run

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
    assert trial["labels"] == [{"scorer": CORRECT, "label": "correct", "score": 1.0, "passed": True}]
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
