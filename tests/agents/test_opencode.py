"""OpenCode for real, against the mock: a pass, a fail, a model error, its per-step usage and cost."""

from __future__ import annotations

import json

import pytest

from agents.clis import Clis
from agents.conftest import MODELS, Runs
from agents.evidence import expected_tokens, leaked, printed, prompt_report, seen_env, version_of

pytestmark = pytest.mark.agents
PLAN = "opencode"


def test_a_fix_passes_the_hidden_check_as_the_agent_opencode_said_it_ran(runs: Runs, clis: Clis) -> None:
    trial = runs.get("opencode").trial("fix")
    assert trial["result"] == "passed"
    agent = trial["agent"]
    assert agent["tool"] == {"name": "opencode", "version": version_of(clis, "opencode")}
    assert agent["model"] == {"requested": MODELS["opencode"]}  # OpenCode prints no model
    events = [json.loads(line) for line in printed(clis, "opencode", agent["sessionId"]).splitlines()]
    steps = [e["part"] for e in events if e["type"] == "step_finish"]
    assert len(steps) == 3
    assert trial["cost"] == {"amount": pytest.approx(sum(s["cost"] for s in steps)), "unit": "USD"}
    assert trial["cost"]["amount"] > 0
    assert trial["tokens"] == {
        "input": sum(s["tokens"]["input"] for s in steps),
        "cache_read": sum(s["tokens"]["cache"]["read"] for s in steps),
        "cache_write": sum(s["tokens"]["cache"]["write"] for s in steps),
        "output": sum(s["tokens"]["output"] + s["tokens"]["reasoning"] for s in steps),
        "reasoning": sum(s["tokens"]["reasoning"] for s in steps)}
    assert trial["tokens"] == {**expected_tokens(3, ("input", "cache_read", "cache_write", "output")),
                               "reasoning": 0}  # Anthropic states no reasoning count
    assert trial["usageVerified"] is True and trial["unenforced"] == ["max_turns"]


def test_an_edit_that_fails_the_hidden_check_fails(runs: Runs) -> None:
    trial = runs.get("opencode").trial("wrong")
    assert trial["result"] == "failed" and trial["checkExit"] != 0


def test_a_model_500_ends_the_trial_as_a_transient_error_with_the_tools_message(runs: Runs) -> None:
    trial = runs.get("opencode").trial("error")
    assert trial["result"] == "error"
    report = prompt_report(runs.world("opencode").checkout, trial["step"])
    assert report["outcome"] == "error" and report["cause"] == "server_error"
    assert report["transient"] is True and trial["transient"] is True  # the provider's 500
    # OpenCode retries a 500 itself; on a loaded machine its last try can end on a closed socket
    # instead of the mock's body, so the message is the tool's own, whichever it was.
    assert report["message"].startswith("opencode reported an error: ")
    assert report["message"].removeprefix("opencode reported an error: ").strip()


def test_no_withheld_variable_reaches_opencodes_shell(runs: Runs) -> None:
    runs.get("opencode")
    assert leaked(seen_env(runs.out, "opencode")) == []
