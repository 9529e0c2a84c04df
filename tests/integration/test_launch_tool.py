"""The run's tools every driver launches (`benchmark.runtools.RunTools`, one per run and
process): the team's command tool of that name, exported once per run and revision and reused
under bubblewrap (where no step can write it), a fresh copy per process under declared
isolation, and the agent CLI on PATH when the team has no such tool."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from armbench.benchmark.agents.base import ToolAdapter
from armbench.benchmark.agents.command import CommandTool
from armbench.benchmark.runtools import RunTools
from armbench.edge.config import Checkout, PullRecord
from armbench.edge.sandbox import Sandbox

TOOL_YAML = ("schemaVersion: v1alpha1\nname: scripted\ndescription: A stand-in.\n"
             "run: bash \"$ARMBENCH_TOOL_DIR/agent.sh\"\n")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def launch_tool(checkout: Checkout, revision: str, run: str, sandbox: Sandbox,
                name: str) -> ToolAdapter | None:
    """The tool one process (a `workflow launch`) gets of the run's tools."""
    def plan() -> None:
        return None
    checkout.pull_file.parent.mkdir(parents=True, exist_ok=True)
    checkout.pull_file.write_bytes(msgspec.json.encode(
        PullRecord(team="team", revision=revision, at=datetime.now(UTC))))
    return RunTools(checkout, run, sandbox, plan).get(name)


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Checkout, str]:
    """A checkout whose team mirror holds tools/scripted at one revision; TMPDIR in tmp_path."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    checkout = Checkout(root=tmp_path / "project")
    work = tmp_path / "team"
    (work / "tools" / "scripted").mkdir(parents=True)
    (work / "tools" / "scripted" / "tool.yaml").write_text(TOOL_YAML)
    (work / "tools" / "scripted" / "agent.sh").write_text("echo hi\n")
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "tool")
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(checkout.mirror))
    return checkout, _git(work, "rev-parse", "HEAD")


def test_under_bubblewrap_every_launch_of_a_run_reuses_one_read_only_copy(
        team: tuple[Checkout, str]) -> None:
    checkout, revision = team
    sandbox = Sandbox(isolation="bubblewrap")
    first = launch_tool(checkout, revision, "r1", sandbox, "scripted")
    second = launch_tool(checkout, revision, "r1", sandbox, "scripted")
    assert isinstance(first, CommandTool) and isinstance(second, CommandTool)
    assert first.tool_dir == second.tool_dir and first.run == 'bash "$ARMBENCH_TOOL_DIR/agent.sh"'
    assert (first.tool_dir / "agent.sh").read_text() == "echo hi\n"
    assert not (first.tool_dir / "agent.sh").stat().st_mode & 0o222  # read-only
    other_run = launch_tool(checkout, revision, "r2", sandbox, "scripted")
    assert isinstance(other_run, CommandTool) and other_run.tool_dir != first.tool_dir


def test_under_declared_isolation_each_process_gets_its_own_copy(team: tuple[Checkout, str]) -> None:
    checkout, revision = team
    sandbox = Sandbox(isolation="declared")
    first = launch_tool(checkout, revision, "r1", sandbox, "scripted")
    second = launch_tool(checkout, revision, "r1", sandbox, "scripted")
    assert isinstance(first, CommandTool) and isinstance(second, CommandTool)
    assert first.tool_dir != second.tool_dir


def test_a_name_the_team_has_no_tool_of_is_the_cli_on_path_or_none(
        team: tuple[Checkout, str], monkeypatch: pytest.MonkeyPatch) -> None:
    checkout, revision = team
    monkeypatch.setenv("PATH", "")
    for _ in range(2):  # the second launch reads what the first kept
        assert launch_tool(checkout, revision, "r1", Sandbox(isolation="bubblewrap"),
                           "claude") is None
