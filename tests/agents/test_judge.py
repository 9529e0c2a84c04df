"""Each pinned CLI that can judge (claude, codex, gemini) as a suite's judge, for real, against
the mock model answering with a label, each in its answer-only form. (OpenCode prints no final
message, so it cannot be a judge.)"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agents.clis import Clis
from agents.conftest import JUDGE_KEY, MODELS, Runs
from agents.evidence import version_of

JUDGES = ("claude", "codex", "gemini")
SHELL = {"claude": "Bash", "codex": "exec_command", "gemini": "run_shell_command"}
"""The tool each CLI offers its model to run a command (an arm's call has it; a judge's never)."""
PATHS = {"claude": "/messages", "codex": "/responses", "gemini": "GenerateContent"}
PLAN = tuple(f"judge-{cli}" for cli in JUDGES)  # the runs fixture starts both
pytestmark = [pytest.mark.agents, pytest.mark.parametrize("cli", JUDGES)]


def test_the_cli_as_the_judge_labels_the_trial_and_the_label_reaches_the_record(
        runs: Runs, clis: Clis, cli: str) -> None:
    run = runs.get(f"judge-{cli}")
    assert run.code == 0, run.stderr
    trial = run.trial("fix")
    assert trial["result"] == "passed"
    label = {"scorer": "diff-quality", "label": "good", "score": 1.0, "passed": True}
    (got,) = trial["labels"]
    judge, rubric = got.pop("judge"), got.pop("rubricHash")  # the record names what judged
    assert judge["tool"] == cli and judge.get("version") and judge.get("model"), judge
    assert rubric == run.record["scorers"][0]["rubric"]["sourceHash"]
    # codex still offers apply_patch (refused by its read-only sandbox) and a few tools of its own
    assert got == label | ({"unenforced": ["answer_only:tools"]} if cli == "codex" else {})
    assert [s["name"] for s in run.record["scorers"]] == ["diff-quality"]
    assert trial["scoringTokens"]  # the judge's usage, apart from the prompt's tokens
    assert f"| {cli} | 1 of 1 | 1 | 0 | 0 | 1.00 |" in run.stderr


def test_the_cli_as_the_judge_was_asked_with_the_rubric_and_the_diff_and_its_reason_stays_in_the_ledger(
        runs: Runs, clis: Clis, cli: str) -> None:
    run = runs.get(f"judge-{cli}")
    asked = [r for r in runs_mock_requests(runs) if JUDGE_KEY in r]
    assert asked, "the judge never reached the mock model"
    assert any("+    return a + b" in r for r in asked)  # the trial's diff is in the prompt
    record_text = str(run.record)
    assert "One line, and add() adds." not in record_text
    label = next(e for e in ledger_events(runs.world(f"judge-{cli}").checkout)
                 if e["type"] == "LabelRecorded")
    assert label["reason"] == "One line, and add() adds."
    assert label["judge"]["tool"] == cli
    assert label["judge"]["model_requested"] == MODELS[cli]
    assert label["judge"]["tool_version"] == version_of(clis, cli)


def test_the_cli_as_the_judge_is_offered_no_tool_that_runs_commands_or_writes(
        runs: Runs, clis: Clis, cli: str) -> None:
    runs.get(f"judge-{cli}")
    calls = [r["body"] for r in runs.mock.requests if PATHS[cli] in r["path"].split("?")[0]]
    judged = [b for b in calls if JUDGE_KEY in json.dumps(b)]
    assert judged
    for body in judged:
        assert SHELL[cli] not in offered(body)
        if cli in ("claude", "gemini"):  # no tool at all
            assert not [t for t in body.get("tools") or [] if t.get("name")
                        or t.get("functionDeclarations")], offered(body)
    # the arms' own calls keep their tools
    assert any(SHELL[cli] in offered(b) for b in calls if JUDGE_KEY not in json.dumps(b))


def offered(body: dict[str, Any]) -> str:
    """The tools a request offers the model: Anthropic's `tools`, and the tools Codex lists in
    `tools` and in an `additional_tools` item of its input."""
    items = [i for i in body.get("input", []) if isinstance(i, dict) and i.get("type") == "additional_tools"]
    return json.dumps([body.get("tools"), items])


def runs_mock_requests(runs: Runs) -> list[str]:
    return [json.dumps(r["body"]) if not isinstance(r["body"], str) else r["body"]
            for r in runs.mock.requests]


def ledger_events(checkout: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(checkout / ".armbench" / "ledger.sqlite") as db:
        rows = db.execute("SELECT state FROM events ORDER BY rowid").fetchall()
    return [json.loads(state)["event"] for (state,) in rows]
