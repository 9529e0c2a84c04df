"""Claude Code for real, against the mock: a pass, a fail, a model error, a turn limit, its usage."""

from __future__ import annotations

import json

import pytest

from agents.clis import Clis
from agents.conftest import MODELS, Runs
from agents.evidence import expected_tokens, leaked, printed, prompt_report, seen_env, version_of

pytestmark = pytest.mark.agents
PLAN = "claude"


def test_a_fix_passes_the_hidden_check_as_the_agent_claude_code_said_it_ran(runs: Runs, clis: Clis) -> None:
    trial = runs.get("claude").trial("fix")
    assert trial["result"] == "passed"
    agent = trial["agent"]
    assert agent["tool"] == {"name": "claude", "version": version_of(clis, "claude")}
    assert agent["model"]["requested"] == MODELS["claude"] and agent["effort"] == "high"
    events = [json.loads(line) for line in printed(clis, "claude", agent["sessionId"]).splitlines()]
    said = events[-1]
    assert said["type"] == "result" and events[0]["type"] == "system"  # stream-json, one event a line
    assert agent["model"]["reported"] == next(iter(said["modelUsage"])) == MODELS["claude"]
    usage = next(iter(said["modelUsage"].values()))
    assert trial["tokens"] == {"input": usage["inputTokens"], "cache_read": usage["cacheReadInputTokens"],
                               "cache_write": usage["cacheCreationInputTokens"],
                               "output": usage["outputTokens"]}
    assert trial["tokens"] == expected_tokens(3, ("input", "cache_read", "cache_write", "output"))
    assert trial["cost"] == {"amount": said["total_cost_usd"], "unit": "USD"} and said["total_cost_usd"] > 0
    assert trial["usageVerified"] is True and "deviation" not in trial and "unenforced" not in trial
    assert 0 < trial["durationMs"] < 180_000


def test_an_edit_that_fails_the_hidden_check_fails(runs: Runs) -> None:
    trial = runs.get("claude").trial("wrong")
    assert trial["result"] == "failed" and trial["checkExit"] != 0


def test_a_model_500_ends_the_trial_as_a_transient_error_with_the_tools_message(runs: Runs) -> None:
    run = runs.get("claude")
    trial = run.trial("error")
    assert trial["result"] == "error"
    report = prompt_report(runs.world("claude").checkout, trial["step"])
    assert report["outcome"] == "error" and report["cause"] == "server_error"
    assert report["transient"] is True and trial["transient"] is True  # the provider's 500
    assert "claude reported an error" in report["message"] and "500" in report["message"]


def test_the_turn_limit_is_passed_and_hitting_it_still_runs_the_check(runs: Runs) -> None:
    trial = runs.get("claude").trial("limit")
    assert trial["limit"] == "max_turns"
    assert trial["result"] == "passed"  # the fix came before the limit; the check still ran


def test_no_withheld_variable_reaches_claude_codes_shell(runs: Runs) -> None:
    runs.get("claude")
    assert leaked(seen_env(runs.out, "claude")) == []


def test_the_kept_transcript_shows_the_shell_call_claude_code_made_and_its_diff(
        runs: Runs) -> None:
    """Issue 29: the session file is read from the trial's private home before it is removed;
    `armbench show --transcript` prints its turns, the tool call with its command among them."""
    import subprocess

    from agents.conftest import WRONG
    from agents.world import ARMBENCH

    run = runs.get("claude")
    world = runs.world("claude")
    trial = run.trial("wrong")["step"].removesuffix(".prompt")
    shown = subprocess.run([str(ARMBENCH), "show", run.envelope["data"]["done"]["run"], trial,
                            "--transcript"], cwd=world.checkout, env=world.env,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "[tool call: Bash]" in shown.stdout
    assert json.dumps(WRONG)[1:-1] in shown.stdout  # the command, as its JSON argument
    assert "[user]" in shown.stdout and "[tool result]" in shown.stdout
    diff = subprocess.run([str(ARMBENCH), "show", run.envelope["data"]["done"]["run"], trial,
                           "--diff"], cwd=world.checkout, env=world.env, capture_output=True,
                          text=True, timeout=60)
    assert "-    return a - b\n+    return a * b\n" in diff.stdout
