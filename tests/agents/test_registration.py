"""Which tools the local driver gets: the CLIs found on PATH, and a team's tool of the same name over one."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from agents.clis import agent_env
from agents.world import ARMBENCH, Suite, World
from armbench.benchmark.agents import ADAPTERS, builtin_tools
from armbench.benchmark.agents.claude import ClaudeCode
from armbench.benchmark.agents.codex import Codex
from armbench.benchmark.agents.command import CommandTool
from armbench.benchmark.runtools import RunTools
from armbench.benchmark.trials.workspace import remove_tree, work_root
from armbench.edge.config import find_checkout
from armbench.edge.sandbox import Sandbox

pytestmark = pytest.mark.agents

TEAM_CLAUDE = {"tools/claude/tool.yaml": yaml.safe_dump({
    "schemaVersion": "v1alpha1", "name": "claude", "description": "The team's own claude.",
    "run": "true"})}


def _bin(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("#!/bin/sh\necho 9.9.9\n")
        (folder / name).chmod(0o755)
    return folder


def test_only_the_clis_on_path_are_registered(tmp_path: Path) -> None:
    found = builtin_tools(tmp_path / "scratch", Sandbox(),
                          path=str(_bin(tmp_path / "bin", "claude", "gemini")))
    assert sorted(found) == ["claude", "gemini"]
    assert isinstance(found["claude"], ClaudeCode)
    assert found["claude"].executable == str(tmp_path / "bin" / "claude")
    assert builtin_tools(tmp_path / "scratch", Sandbox(), path=str(tmp_path / "empty")) == {}
    assert [a.name for a in ADAPTERS] == ["claude", "codex", "opencode", "gemini"]


def test_a_team_tool_named_like_a_built_in_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = agent_env(tmp_path / "home", "http://127.0.0.1:9", tmp_path / "no-wrappers", ARMBENCH)
    world = World(tmp_path / "world", [], env, team_files=TEAM_CLAUDE)
    monkeypatch.setenv("PATH", str(_bin(tmp_path / "bin", "claude", "codex")))
    checkout = find_checkout(world.checkout)
    try:
        tools = dict(RunTools(checkout, "ragentsregistration", Sandbox(), lambda: None))
    finally:
        remove_tree(work_root("ragentsregistration"))
    assert isinstance(tools["claude"], CommandTool) and isinstance(tools["codex"], Codex)


def test_an_arm_whose_cli_is_not_installed_does_not_run_and_the_table_says_so(tmp_path: Path) -> None:
    suite = Suite("absent", {"defaults": {"tool": "codex"}, "arms": [{"name": "codex"}], "repetitions": 1,
                             "timeout": "5m"}, {"fix": "add() subtracts. Fix it."})
    env = agent_env(tmp_path / "home", "http://127.0.0.1:9", tmp_path / "no-wrappers", ARMBENCH)
    env["PATH"] = os.pathsep.join(d for d in env["PATH"].split(os.pathsep)
                                  if d and not shutil.which("codex", path=d))
    world = World(tmp_path / "world", [suite], env)
    run = world.finish(world.start_run("absent"))
    assert run.code == 0 and run.trial("fix")["result"] == "not_run"
    line = 'Arm "codex" uses codex, which the local driver cannot run, so its trials did not run.'
    assert line in run.envelope["data"]["done"]["outputs"]["text"]
