"""docs/guide/judging.md (and its zh-CN page) as written: its suite and scorer files parse with
the real parsers, its answer is read as the label it shows, and its calibration text is what
`render_calibration` prints for the matrix it shows."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from armbench.ledger.events import CheckRan, LabelRecorded, PlanFrozen, PlannedArm, PlannedTask, PlannedTrial
from armbench.projections.calibration import calibration_report, render_calibration
from armbench.projections.results import fold_run
from armbench.suites.judging import Answer, read_answer
from armbench.suites.scorers import parse_scorer
from armbench.suites.validate import parse_suite

GUIDES = Path(__file__).resolve().parents[2] / "docs" / "guide"
BLOCK = re.compile(r'^```(\w+) title="([^"]+)"\n(.*?)^```$', re.MULTILINE | re.DOTALL)
AT = datetime(2026, 12, 1, tzinfo=UTC)


def blocks(page: Path) -> dict[str, str]:
    return {m[2]: m[3] for m in BLOCK.finditer(page.read_text())}


def test_the_guide_and_its_zh_cn_page_show_the_same_files() -> None:
    english = blocks(GUIDES / "judging.md")
    assert set(english) == {"benchmarks/docs-work/suite.yaml", "scorers/diff-quality.md",
                            "answer", "calibration"}
    assert blocks(GUIDES / "zh-CN" / "judging.md") == english


def test_the_guides_suite_and_scorer_are_valid_and_its_answer_is_read_as_shown() -> None:
    files = blocks(GUIDES / "judging.md")
    suite, found = parse_suite(files["benchmarks/docs-work/suite.yaml"],
                               file="benchmarks/docs-work/suite.yaml", scorers={"diff-quality"})
    assert found == [] and suite is not None and suite.judge is not None
    assert (suite.judge.tool, suite.judge.timeout_seconds) == ("claude", 300)
    scorer, found = parse_scorer(files["scorers/diff-quality.md"].encode(),
                                 file="scorers/diff-quality.md", name="diff-quality")
    assert found == [] and scorer is not None
    labels = [lb.value for lb in scorer.labels]
    assert read_answer(files["answer"], labels) == Answer(label="good", reason="One line, and add() adds.")


def _calibrated(outcomes: list[tuple[str, bool]]) -> list[object]:
    """A run of one task whose trial i's check gave outcomes[i][0] and its judge outcomes[i][1]."""
    task = PlannedTask(id="t", title="t", source_hash="0" * 64, starting_commit="1" * 40, prompt="p",
                       check_run="true")
    trials = [PlannedTrial(task="t", arm="a", repetition=i, order=i, lane=1,
                           prompt_step=f"trials.r{i}.t.a.prompt", check_step=f"trials.r{i}.t.a.check")
              for i in range(len(outcomes))]
    plan = PlanFrozen(suite="s", suite_hash="0" * 64, repo="r", repetitions=len(outcomes), parallel=1,
                      timeout_s=60, baseline_team_revision="2" * 40, tasks=[task],
                      arms=[PlannedArm(name="a", tool="x")], trials=trials)
    events: list[object] = [plan]
    for trial, (check, judged) in zip(trials, outcomes, strict=True):
        events.append(CheckRan(step=trial.check_step, task="t", kind="trial", result=check))  # type: ignore[arg-type]
        events.append(LabelRecorded(step=trial.prompt_step, scorer="armbench:correctness:t",
                                    rubric_hash="3" * 64, label="correct" if judged else "incorrect",
                                    score=1.0 if judged else 0.0, passed=judged, calibration=True, at=AT))
    return events


def test_the_calibration_text_is_what_armbench_prints_for_its_matrix() -> None:
    outcomes = [("passed", True), ("passed", True), ("passed", False),
                ("failed", True), ("failed", False), ("failed", False)]
    report = calibration_report(fold_run(_calibrated(outcomes)))  # type: ignore[arg-type]
    assert report is not None and report["matrix"] == [[2, 1], [1, 2]]
    shown = blocks(GUIDES / "judging.md")["calibration"]
    assert shown in render_calibration(report)


def test_a_judge_that_agrees_on_one_outcome_only_gives_no_kappa() -> None:
    report = calibration_report(fold_run(_calibrated([("passed", True)] * 3)))  # type: ignore[arg-type]
    assert report is not None and report["kappa"]["kappa"] is None
    assert "insufficient data" in render_calibration(report)
    assert report["falsePass"]["rate"] is None and report["falseFail"]["rate"] == 0.0
