"""How an adapter launches its CLI, with a fake binary: the command line, the prompt, the limits."""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.benchmark.agents.claude import ClaudeCode
from armbench.benchmark.agents.codex import Codex
from armbench.benchmark.agents.gemini import Gemini
from armbench.benchmark.agents.opencode import OpenCode, config_content
from armbench.benchmark.trials.teaminstall import TeamInstall, install_team, team_dir
from armbench.edge.sandbox import Room, Sandbox
from armbench.engine.protocol import Lease

pytestmark = pytest.mark.agents

COUNTS = {"inputTokens": 1, "outputTokens": 2, "cacheReadInputTokens": 3, "cacheCreationInputTokens": 4}
RESULT = {"type": "result", "subtype": "success", "is_error": False, "session_id": "s-1",
          "total_cost_usd": 0.5, "modelUsage": {"m-1": COUNTS}}


DECLARED = Sandbox(isolation="declared")
"""These tests read what the fake CLI wrote outside its clone: no sandbox (tests/e2e has those)."""


def lease(root: Path, **values: object) -> Lease:
    cwd = root / "clones" / "trial"
    cwd.mkdir(parents=True, exist_ok=True)
    fields = {"run": "r1", "step": "trials.r0.t.a.prompt", "lease": "l1", "kind": "prompt",
              "expires_at": datetime(2030, 1, 1, tzinfo=UTC), "cwd": str(cwd), "prompt": "Fix it.\n",
              "env": {"ARMBENCH_TEAM_REVISION": "t" * 40, "ARMBENCH_PROJECT_COMMIT": "p" * 40},
              "withhold": ["GITHUB_TOKEN"]}
    return Lease(**{**fields, **values})  # type: ignore[arg-type]


RESULT_EVENT = {"type": "assistant", "session_id": "s-1"}


def fake_claude(tmp_path: Path, *, sleep: float = 0, code: int = 0, result: dict | None = None,
                before: list[dict] | None = None) -> Path:
    """A `claude` that records its arguments, stdin, GITHUB_TOKEN and team folder, then prints
    its events (`before`) and a result object, one a line."""
    events = "".join(f"echo '{json.dumps(e)}'\n" for e in before or [])
    exe = tmp_path / "claude"
    exe.write_text(f"""#!/bin/bash
[ "$1" = "--version" ] && {{ echo "2.1.197 (Claude Code)"; exit 0; }}
printf '%s\\n' "$@" > {tmp_path}/args
cat > {tmp_path}/stdin
echo "${{GITHUB_TOKEN-unset}} ${{IS_SANDBOX-unset}}" > {tmp_path}/env
echo "$ARMBENCH_TEAM_DIR" > {tmp_path}/teamdir
sleep {sleep}
{events}echo '{json.dumps(result or RESULT)}'
exit {code}
""")
    exe.chmod(0o755)
    return exe


def test_claude_gets_its_print_mode_the_lease_values_as_given_and_the_prompt_on_stdin(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "secret")
    tool = ClaudeCode(str(fake_claude(tmp_path)), tmp_path / "scratch", DECLARED)
    report = tool(lease(tmp_path, model="opus", effort="max", max_turns=7), cancel=threading.Event())
    assert (tmp_path / "args").read_text().split() == [
        "-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions",
        "--model", "opus", "--effort", "max", "--max-turns", "7"]
    assert (tmp_path / "stdin").read_text() == "Fix it.\n"
    sandbox = "1" if os.geteuid() == 0 else "unset"
    assert (tmp_path / "env").read_text().split() == ["unset", sandbox]
    assert report.outcome == "succeeded" and report.cause == "ok" and report.usage is not None
    assert report.usage.tokens == {"input": 1, "output": 2, "cache_read": 3, "cache_write": 4}
    agent = report.agent
    assert agent is not None and (agent.tool, agent.tool_version) == ("claude", "2.1.197")
    assert (agent.model_requested, agent.model_reported, agent.effort) == ("opus", "m-1", "max")
    assert (agent.team_revision, agent.project_commit, agent.session_id) == (None, "p" * 40, "s-1")
    assert agent.unenforced == [] and list((tmp_path / "scratch").iterdir()) == []


def test_the_team_revision_a_trial_records_is_the_one_its_install_holds_not_the_leases(
        tmp_path: Path) -> None:
    given = lease(tmp_path)
    room = Room.of(Path(given.cwd or "")).make()
    install_team(room, TeamInstall(kind="ref", revision="r" * 40, skills={"release": "d"}),
                 {"skills/release/SKILL.md": b"x"}, {".claude/skills/release/SKILL.md": b"x"})
    loaded = {**RESULT_EVENT, "message": {"content": [
        {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": "release"}}]}}
    exe = fake_claude(tmp_path, before=[loaded])
    report = ClaudeCode(str(exe), tmp_path / "scratch", DECLARED)(given, cancel=threading.Event())
    assert report.agent is not None and report.agent.team_revision == "r" * 40
    assert given.env["ARMBENCH_TEAM_REVISION"] == "t" * 40
    assert report.agent.skills_used == {"release": "loaded"}
    assert (tmp_path / "teamdir").read_text().strip() == str(team_dir(room))


def test_stopping_at_the_trials_own_timeout_is_a_limit_and_at_the_runs_an_error(tmp_path: Path) -> None:
    tool = ClaudeCode(str(fake_claude(tmp_path, sleep=30)), tmp_path / "scratch", DECLARED)
    own = tool(lease(tmp_path, timeout_s=0.5, limit_s=0.5), cancel=threading.Event())
    assert (own.outcome, own.cause, own.limit, own.timed_out) == ("succeeded", "timeout", "timeout", True)
    assert own.usage is not None and not own.usage.verified and own.usage.tokens == {}
    run = tool(lease(tmp_path, timeout_s=0.5, limit_s=60), cancel=threading.Event())
    assert (run.outcome, run.cause, run.limit) == ("error", "timeout", None)


def test_an_exit_with_no_error_in_the_output_is_an_error_with_stderr(tmp_path: Path) -> None:
    tool = ClaudeCode(str(fake_claude(tmp_path, code=3, result={"unexpected": True})), tmp_path / "s",
                      DECLARED)
    report = tool(lease(tmp_path), cancel=threading.Event())
    assert (report.outcome, report.cause, report.exit_code) == ("error", "exit", 3)
    assert report.message is not None and report.message.startswith("claude ended: exit (exit 3).")


def test_codex_opencode_and_gemini_command_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    one = lease(tmp_path, model="m", effort="high", max_turns=3, prompt="Fix 'it'.")
    assert Codex("codex", tmp_path, DECLARED).argv(one) == [
        "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check",
        "--model", "m", "-c", 'model_reasoning_effort="high"', "-"]
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gw/v1")
    assert Codex("codex", tmp_path, DECLARED).argv(lease(tmp_path))[4:] == [
        "-c", 'model_providers.armbench.name="armbench"', "-c", 'model_providers.armbench.base_url="http://gw/v1"',
        "-c", 'model_providers.armbench.wire_api="responses"',
        "-c", 'model_providers.armbench.env_key="OPENAI_API_KEY"', "-c", 'model_provider="armbench"', "-"]
    assert OpenCode("opencode", tmp_path, DECLARED).argv(one) == [
        "run", "--format", "json", "--auto", "--model", "m", "--variant", "high"]
    assert Gemini("gemini", tmp_path, DECLARED).argv(one) == [
        "--output-format", "json", "--yolo", "--skip-trust", "--model", "m", "--prompt=Fix 'it'."]
    assert [t(x, tmp_path, DECLARED).unenforced(one) for t, x in ((Codex, "codex"), (OpenCode, "opencode"),
                                                          (Gemini, "gemini"), (ClaudeCode, "claude"))] == [
        ["max_turns"], ["max_turns"], ["max_turns", "effort"], []]
    assert Gemini("gemini", tmp_path, DECLARED).unenforced(lease(tmp_path)) == []


def test_opencode_is_pointed_at_the_base_urls_armbench_runs_with() -> None:
    assert config_content({}) is None
    got = json.loads(config_content({"ANTHROPIC_BASE_URL": "http://gw:1/", "OPENAI_BASE_URL": "http://gw:2/v1",
                                     "OPENCODE_CONFIG_CONTENT": '{"share": "disabled"}'}) or "")
    assert got == {"share": "disabled", "provider": {
        "anthropic": {"options": {"baseURL": "http://gw:1/v1"}}, "openai": {"options": {"baseURL": "http://gw:2/v1"}}}}
