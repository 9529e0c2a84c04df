"""One suite end to end: a Claude Code arm and a Codex arm, 2 tasks, 2 repetitions, and its table."""

from __future__ import annotations

import pytest

from agents.conftest import MODELS, Runs
from agents.evidence import expected_tokens

pytestmark = pytest.mark.agents
PLAN = "mixed"


def _rows(text: str, header: str) -> dict[str, list[str]]:
    """The rows of the Markdown table whose header starts with `header`, by first cell."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_a_claude_arm_and_a_codex_arm_run_every_trial_and_the_table_says_how_they_did(runs: Runs) -> None:
    run = runs.get("mixed")
    assert run.code == 0 and run.envelope["data"]["done"]["state"] == "succeeded"
    text = run.envelope["data"]["done"]["outputs"]["text"]
    assert text in run.stderr
    arms = _rows(text, "| Arm | Tool |")
    assert arms == {
        "claude": ["claude", f"{MODELS['claude']} (team)", "4", "2", "2", "0", "0", "0", "0", "0", "0",
                   "50% (2/4)"],
        "codex": ["codex", f"{MODELS['codex']} (team)", "4", "2", "2", "0", "0", "0", "0", "0", "4",
                  "50% (2/4)"],  # Codex reports no model, so none of its trials is verified
    }
    usage = _rows(text, "| Arm | Median tokens")
    assert usage["claude"][2].endswith(" USD (4)") and usage["codex"][2] == "not stated"
    assert _rows(text, "| Task |") == {"fix": ["100% (2/2)", "100% (2/2)"], "wrong": ["0% (0/2)", "0% (0/2)"]}


def test_every_trial_records_the_agent_it_ran_as(runs: Runs) -> None:
    run = runs.get("mixed")
    assert len(run.record["trials"]) == 8
    for trial in run.record["trials"]:
        agent = trial["agent"]
        assert agent["tool"]["name"] == trial["arm"] and agent["tool"]["version"]
        assert agent["model"]["requested"] == MODELS[trial["arm"]]
        assert agent["team"]["revision"] == run.record["baselineTeamRevision"]
        assert agent["project"]["commit"] == runs.world("mixed").start and agent["sessionId"]
        calls = 3 if trial["task"] == "fix" else 2  # a model call per tool call, and the last
        assert trial["tokens"] == (expected_tokens(calls, ("input", "cache_read", "cache_write", "output"))
                                   if trial["arm"] == "claude" else
                                   {**expected_tokens(calls, ("input", "cache_read", "output", "reasoning")),
                                    "cache_write": 0})
    orders = [[t["arm"] for t in run.record["trials"] if t["repetition"] == r and t["task"] == "fix"]
              for r in (0, 1)]
    assert orders[0] == list(reversed(orders[1]))
