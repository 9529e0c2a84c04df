"""A judge's call is answer-only (issue 22, point 7): each built-in CLI is started with no tool
that runs a command, writes a file or reaches the network, and what a tool cannot hold itself to
is named (`answer_gaps`, recorded as `answer_only:<gap>`). The CLIs themselves are driven in
`tests/agents/test_judge.py` (claude, codex); what each flag does was measured against the mock
model (`tests/agents/mock_model.py`): claude and gemini then offer no tool, codex no shell."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.benchmark.agents.claude import ClaudeCode
from armbench.benchmark.agents.codex import Codex
from armbench.benchmark.agents.command import CommandTool
from armbench.benchmark.agents.gemini import DENY_ALL, Gemini
from armbench.benchmark.agents.opencode import OpenCode
from armbench.benchmark.trials.toolstep import ToolStep
from armbench.edge.sandbox import Sandbox
from armbench.engine.protocol import Lease


def lease(tmp_path: Path) -> Lease:
    clone = tmp_path / "clones" / "c1"
    clone.mkdir(parents=True, exist_ok=True)
    return Lease(run="r", step="s", lease="l", kind="prompt", tool="x", model="m", cwd=str(clone),
                 prompt="judge this", expires_at=datetime.now(UTC))


@pytest.fixture
def sandbox() -> Sandbox:
    return Sandbox(isolation="declared")


def test_claude_answers_with_no_tool_no_settings_and_no_mcp(tmp_path: Path, sandbox: Sandbox) -> None:
    tool = ClaudeCode("claude", tmp_path, sandbox)
    judge = tool.answering()
    args = judge.argv(lease(tmp_path))
    assert args[args.index("--tools") + 1] == "" and args[args.index("--setting-sources") + 1] == ""
    assert "--strict-mcp-config" in args and "--dangerously-skip-permissions" not in args
    assert "--dangerously-skip-permissions" in tool.argv(lease(tmp_path))  # the arm's call is untouched
    assert not tool.answer_only and judge._unenforced(lease(tmp_path)) == []


def test_codex_answers_without_a_shell_in_its_read_only_sandbox(tmp_path: Path, sandbox: Sandbox) -> None:
    judge = Codex("codex", tmp_path, sandbox).answering()
    args = judge.argv(lease(tmp_path))
    assert args[args.index("-s") + 1] == "read-only" and "shell_tool" in args
    assert "--dangerously-bypass-approvals-and-sandbox" not in args
    assert judge._unenforced(lease(tmp_path)) == ["answer_only:tools"]


def test_gemini_answers_in_plan_mode_under_a_policy_that_denies_every_tool(
        tmp_path: Path, sandbox: Sandbox) -> None:
    judge = Gemini("gemini", tmp_path, sandbox).answering()
    got = lease(tmp_path)
    step = ToolStep.start(sandbox, got)
    judge.hand(step, got)
    args = judge.argv(got)
    assert "--yolo" not in args and args[args.index("--approval-mode") + 1] == "plan"
    assert Path(args[args.index("--policy") + 1]).read_text() == DENY_ALL
    assert judge._unenforced(got) == []


def test_opencode_answers_with_every_tool_off_and_every_permission_denied(
        tmp_path: Path, sandbox: Sandbox) -> None:
    judge = OpenCode("opencode", tmp_path, sandbox).answering()
    assert "--auto" not in judge.argv(lease(tmp_path))
    config = json.loads(judge.env(lease(tmp_path))["OPENCODE_CONFIG_CONTENT"])
    assert config["tools"] == {"*": False} and config["permission"] == {"*": "deny"}
    assert "OPENCODE_CONFIG_CONTENT" not in OpenCode("opencode", tmp_path, sandbox).env(lease(tmp_path))


def test_a_command_tool_cannot_be_held_to_any_of_it(tmp_path: Path, sandbox: Sandbox) -> None:
    judge = CommandTool("judge", "cat", tmp_path, sandbox).answering()
    assert judge._unenforced(lease(tmp_path)) == [
        "answer_only:tools", "answer_only:writes", "answer_only:network"]
