"""Codex CLI for real, against the mock: a pass, a fail, a model error, its usage, no turn limit."""

from __future__ import annotations

import json

import pytest

from agents.clis import Clis
from agents.conftest import MODELS, Runs
from agents.evidence import expected_tokens, leaked, printed, prompt_report, seen_env, version_of

pytestmark = pytest.mark.agents
PLAN = "codex"


def test_a_fix_passes_the_hidden_check_as_the_agent_codex_said_it_ran(runs: Runs, clis: Clis) -> None:
    trial = runs.get("codex").trial("fix")
    assert trial["result"] == "passed"
    agent = trial["agent"]
    assert agent["tool"] == {"name": "codex", "version": version_of(clis, "codex")}
    assert agent["model"] == {"requested": MODELS["codex"]}  # Codex prints no model
    events = [json.loads(line) for line in printed(clis, "codex", agent["sessionId"]).splitlines()]
    assert events[0] == {"type": "thread.started", "thread_id": agent["sessionId"]}
    usage = next(e["usage"] for e in events if e["type"] == "turn.completed")
    assert trial["tokens"] == {"input": usage["input_tokens"] - usage["cached_input_tokens"],
                               "cache_read": usage["cached_input_tokens"],
                               "cache_write": usage["cache_write_input_tokens"],
                               "output": usage["output_tokens"],
                               "reasoning": usage["reasoning_output_tokens"]}
    assert trial["tokens"] == {**expected_tokens(3, ("input", "cache_read", "output", "reasoning")),
                               "cache_write": 0}  # the Responses API has no cache writes
    assert "cost" not in trial and trial["usageVerified"] is True


def test_the_effort_reaches_the_model_and_the_missing_turn_limit_is_listed(runs: Runs, mock) -> None:
    trial = runs.get("codex").trial("fix")
    assert trial["agent"]["effort"] == "high"
    sent = [r["body"] for r in mock.requests if "[script: codex-fix]" in json.dumps(r["body"])]
    assert sent and all(b["model"] == MODELS["codex"] and b["reasoning"]["effort"] == "high" for b in sent)
    assert trial["unenforced"] == ["max_turns"] and trial["deviation"] is True


def test_an_edit_that_fails_the_hidden_check_fails(runs: Runs) -> None:
    trial = runs.get("codex").trial("wrong")
    assert trial["result"] == "failed" and trial["checkExit"] != 0


def test_a_model_500_ends_the_trial_as_a_transient_error_with_the_tools_message(runs: Runs) -> None:
    trial = runs.get("codex").trial("error")
    assert trial["result"] == "error"
    report = prompt_report(runs.world("codex").checkout, trial["step"])
    assert report["outcome"] == "error" and report["cause"] == "overloaded"
    assert report["transient"] is True and trial["transient"] is True  # the provider's 500
    assert report["message"].startswith("codex reported an error: ")
    assert report["usage"]["verified"] is False and "turn.completed" in report["usage"]["note"]


def test_no_withheld_variable_reaches_codexs_shell(runs: Runs) -> None:
    runs.get("codex")
    assert leaked(seen_env(runs.out, "codex")) == []


def test_the_kept_transcript_shows_the_shell_call_codex_made(runs: Runs) -> None:
    """Issue 29: Codex's rollout file is read from the trial's private home before it is
    removed; `armbench show --transcript` prints its turns, the shell call among them."""
    import subprocess

    from agents.world import ARMBENCH

    run = runs.get("codex")
    world = runs.world("codex")
    trial = run.trial("wrong")["step"].removesuffix(".prompt")
    shown = subprocess.run([str(ARMBENCH), "show", run.envelope["data"]["done"]["run"], trial,
                            "--transcript"], cwd=world.checkout, env=world.env,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "[tool call: " in shown.stdout and "return a * b" in shown.stdout, shown.stdout
    assert "[tool result]" in shown.stdout
