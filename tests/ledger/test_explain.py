"""`armbench explain` names the events that decided a trial (or a baseline) and the rule in words."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from armbench.ledger.events import PlannedTrial, StepReported
from armbench.projections.results import TrialView, classify


def explain(cli, run: str, subject: str) -> dict:
    got = cli("explain", run, subject)
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)["data"]["explain"]
    assert f"{data['subject']}: {data['result']}\nRule: {data['rule']}\n" in got.stderr
    assert "\nEvents:\n" in got.stderr
    return data


def kinds(events: list[str]) -> list[str]:
    return [line.split()[0] for line in events]


def test_a_passed_trial(cli, audited) -> None:
    got = explain(cli, audited[1], "r0.double.good")
    assert (got["subject"], got["result"]) == ("trials.lane1.r0.double.good", "passed")
    assert got["rule"] == "The prompt succeeded and the check passed (exit 0)."
    assert kinds(got["events"]) == ["StepLeased", "WorkspacePrepared", "StepReported",
                                    "StepLeased", "CheckRan", "StepReported"]
    assert "result=passed" in got["events"][4]


def test_a_failed_trial(cli, audited) -> None:
    got = explain(cli, audited[1], "r0.double.lazy")
    assert got["result"] == "failed"
    assert got["rule"] == "The prompt succeeded and the check ran to the end and failed (exit 1)."
    assert "result=failed exit_code=1" in got["events"][4]


def test_an_error_when_the_prompt_failed(cli, audited) -> None:
    got = explain(cli, audited[1], "r0.double.broken")
    assert got["result"] == "error"
    assert got["rule"] == "The tool exited 3, so its work was never checked: an error, not a failure."
    assert kinds(got["events"]) == ["StepLeased", "WorkspacePrepared", "StepReported", "StepSkipped"]
    assert "outcome=error" in got["events"][2] and "exit_code=3" in got["events"][2]


def test_an_error_when_the_trials_check_could_not_run(cli, audited) -> None:
    got = explain(cli, audited[1], "r0.crashy.good")
    assert got["result"] == "error"
    assert got["rule"].startswith("The check could not run: it was killed by a signal")
    assert "result=could_not_run cause=signal signal=9" in got["events"][4]


def test_not_run_when_no_driver_has_the_tool(cli, audited) -> None:
    got = explain(cli, audited[1], "r0.double.ghost")
    assert got["result"] == "not_run"
    assert got["rule"] == "No driver could run its tool (ghost)."
    assert "reason=tool_unavailable detail=ghost" in got["events"][0]


def test_not_run_when_the_baseline_is_invalid_shows_the_baselines_events_too(cli, audited) -> None:
    got = explain(cli, audited[1], "r0.done-already.lazy")
    assert got["result"] == "not_run"
    assert "Baseline done-already is invalid: the check passed at the starting commit" in got["rule"]
    assert kinds(got["events"]) == ["StepLeased", "CheckRan", "StepReported",
                                    "StepSkipped", "StepSkipped"]
    assert "step=trials.baselines.done-already" in got["events"][1] and "result=passed" in got["events"][1]


@pytest.mark.parametrize(("task", "status", "words"), [
    ("done-already", "invalid", "The check passed at the starting commit without changes"),
    ("no-runner", "could_not_run", "its command was not found, exit 127 (not_found)"),
    ("double", "valid", "The check failed at the starting commit, as a task needs"),
])
def test_a_baseline(cli, audited, task: str, status: str, words: str) -> None:
    got = explain(cli, audited[1], f"baseline:{task}")
    assert (got["subject"], got["result"]) == (f"baseline:{task}", status)
    assert words in got["rule"]
    assert kinds(got["events"]) == ["StepLeased", "CheckRan", "StepReported"]


def test_a_trial_is_found_by_any_of_its_names(cli, audited) -> None:
    run = audited[1]
    names = ["r0.double.good", "trials.lane1.r0.double.good", "lane1.r0.double.good",
             "trials.lane1.r0.double.good.prompt", "trials.lane1.r0.double.good.check"]
    assert {explain(cli, run, n)["subject"] for n in names} == {"trials.lane1.r0.double.good"}


def test_an_unknown_trial_is_refused_with_examples(cli, audited) -> None:
    got = cli("explain", audited[1], "r9.nothing.none")
    assert got.exit_code == 2
    error = json.loads(got.stdout)["error"]
    assert error["code"] == "unknown_trial"
    assert "r<repetition>.<task>.<arm>" in error["message"] and "r0.crashy.good" in error["message"]


AT = datetime(2026, 1, 1, tzinfo=UTC)
TRIAL = PlannedTrial(task="t", arm="a", repetition=0, order=0, lane=1, prompt_step="trials.r0.t.a.prompt",
                     check_step="trials.r0.t.a.check")


@pytest.mark.parametrize(("report", "words"), [
    (dict(cause="prepare_failed"), "The trial's clone could not be prepared, so the tool never ran"),
    (dict(cause="setup_failed"), "The suite's setup failed in the trial's clone, so the tool never ran"),
    (dict(cause="exit", exit_code=2), "The tool exited 2, so its work was never checked"),
    (dict(cause="signal", signal=9), "The tool was killed by signal 9, so"),
    (dict(cause="timeout", timed_out=True, signal=15), "The tool was stopped at the run's time limit"),
    (dict(cause="cancelled", signal=15), "The tool was stopped when the run was cancelled"),
    (dict(cause="not_found", exit_code=127), "The tool could not be found (exit 127)"),
    (dict(cause="weird"), "The tool could not do its work (weird)"),
])
def test_each_way_a_prompt_fails_is_named(report: dict, words: str) -> None:
    tv = TrialView(trial=TRIAL, prompt=StepReported(step=TRIAL.prompt_step, lease="l", at=AT,
                                                    outcome="error", **report))
    result, rule = classify(tv)
    assert result == "error" and rule.startswith(words)
