"""Gemini CLI for real, against the mock: a pass, a fail, a model error, its usage and served model."""

from __future__ import annotations

import json

import pytest

from agents.clis import Clis
from agents.conftest import MODELS, Runs
from agents.evidence import expected_tokens, leaked, printed, prompt_report, seen_env, version_of

pytestmark = pytest.mark.agents
PLAN = "gemini"


def test_a_fix_passes_the_hidden_check_as_the_agent_gemini_said_it_ran(runs: Runs, clis: Clis) -> None:
    trial = runs.get("gemini").trial("fix")
    assert trial["result"] == "passed"
    agent = trial["agent"]
    assert agent["tool"] == {"name": "gemini", "version": version_of(clis, "gemini")}
    said = json.loads(printed(clis, "gemini", agent["sessionId"]))
    (model, stats), = said["stats"]["models"].items()
    assert agent["model"] == {"requested": MODELS["gemini"], "reported": model}
    counts = stats["tokens"]
    assert trial["tokens"] == {"input": counts["prompt"] - counts["cached"] + counts["tool"],
                               "cache_read": counts["cached"], "reasoning": counts["thoughts"],
                               "output": counts["candidates"] + counts["thoughts"]}
    assert trial["tokens"] == expected_tokens(3, ("input", "cache_read", "output", "reasoning"))
    assert "cost" not in trial and trial["usageVerified"] is True


def test_an_effort_gemini_cannot_take_is_listed_with_the_turn_limit(runs: Runs) -> None:
    trial = runs.get("gemini").trial("fix")
    assert trial["agent"]["effort"] == "high"
    assert trial["unenforced"] == ["max_turns", "effort"] and trial["deviation"] is True


def test_an_edit_that_fails_the_hidden_check_fails(runs: Runs) -> None:
    trial = runs.get("gemini").trial("wrong")
    assert trial["result"] == "failed" and trial["checkExit"] != 0


def test_a_model_500_ends_the_trial_as_a_transient_error_with_the_tools_message(runs: Runs) -> None:
    trial = runs.get("gemini").trial("error")
    assert trial["result"] == "error"
    report = prompt_report(runs.world("gemini").checkout, trial["step"])
    assert report["outcome"] == "error" and report["cause"] == "server_error"
    assert report["transient"] is True and trial["transient"] is True  # the provider's 500
    assert "gemini reported an error" in report["message"] and "mock injected error" in report["message"]
    assert report["agent"]["session_id"]


def test_no_withheld_variable_reaches_geminis_shell(runs: Runs) -> None:
    runs.get("gemini")
    assert leaked(seen_env(runs.out, "gemini")) == []
