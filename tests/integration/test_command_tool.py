"""What a command tool (a team's tool.yaml `run:`) reports, launched for real by `CommandTool`.

Each test runs a bash command in a clone with a declared sandbox (tests/e2e runs them in
bubblewrap) and pins the whole Report apart from its duration: how the command ended, the usage
it wrote to `$ARMBENCH_USAGE_FILE`, and the agent. The message of a failed command names its
cause without the exit code (a built-in CLI's adds it: tests/agents/test_launch.py).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from armbench.benchmark.agents.command import CommandTool
from armbench.benchmark.trials.teaminstall import TeamInstall, install_team
from armbench.edge.sandbox import Room, Sandbox
from armbench.engine.protocol import Lease, Report
from armbench.ledger.events import Agent, Cost, Usage

DECLARED = Sandbox(isolation="declared")
REVISIONS = {"ARMBENCH_TEAM_REVISION": "not what the install holds", "ARMBENCH_PROJECT_COMMIT": "p" * 40}
USAGE = ('{"tokens": {"input": 10, "output": 2}, "cost": {"amount": 0.25, "unit": "USD"}, '
         '"model": "m-reported", "session_id": "s-1", "version": "1.2.3"}')


def lease(root: Path, **values: object) -> Lease:
    cwd = root / "clones" / "trial"
    cwd.mkdir(parents=True, exist_ok=True)
    fields = {"run": "r-command-tool", "step": "trials.r0.t.a.prompt", "lease": "l1", "kind": "prompt",
              "expires_at": datetime(2030, 1, 1, tzinfo=UTC), "cwd": str(cwd), "prompt": "Fix it.\n",
              "model": "m-asked", "effort": "high", "env": REVISIONS}
    return Lease(**{**fields, **values})  # type: ignore[arg-type]


def launched(tmp_path: Path, run: str, **values: object) -> Report:
    tool_dir = tmp_path / "tools" / "scripted"
    tool_dir.mkdir(parents=True, exist_ok=True)
    tool = CommandTool("scripted", run, tool_dir, DECLARED)
    given = lease(tmp_path, **values)
    install_team(Room.of(Path(given.cwd or "")).make(), TeamInstall(kind="pulled", revision="t" * 40),
                 {"rules/commits.md": b"Short subjects.\n"}, {})
    report = tool(given, cancel=threading.Event())
    assert report.duration_ms is not None and report.duration_ms >= 0
    return msgspec.structs.replace(report, duration_ms=None)


def agent(**values: object) -> Agent:
    fields = {"tool": "scripted", "model_requested": "m-asked", "effort": "high",
              "team_revision": "t" * 40, "project_commit": "p" * 40}
    return Agent(**{**fields, **values})  # type: ignore[arg-type]


def test_a_command_that_wrote_its_usage_and_exited_0_succeeded_with_that_usage(tmp_path: Path) -> None:
    got = launched(tmp_path, f"cat > $ARMBENCH_USAGE_FILE <<'EOF'\n{USAGE}\nEOF\n"
                             f'cmp -s - "$ARMBENCH_PROMPT_FILE" && test "$ARMBENCH_MODEL" = m-asked',
                   max_turns=3)
    assert got == Report(
        outcome="succeeded", cause="ok", exit_code=0,
        usage=Usage(tokens={"input": 10, "output": 2}, cost=Cost(amount=0.25, unit="USD")),
        agent=agent(tool_version="1.2.3", model_reported="m-reported", session_id="s-1",
                    unenforced=["max_turns"]))


def test_a_command_tool_reads_the_arms_tree_at_armbench_team_dir(tmp_path: Path) -> None:
    got = launched(tmp_path, 'grep -q "Short subjects" "$ARMBENCH_TEAM_DIR/rules/commits.md"')
    assert got.outcome == "succeeded" and got.agent is not None and got.agent.team_revision == "t" * 40


def test_a_command_that_exited_non_zero_is_an_error_named_by_its_cause_and_last_stderr_line(
        tmp_path: Path) -> None:
    got = launched(tmp_path, "echo first >&2; echo 'it broke' >&2; exit 3")
    assert got == Report(outcome="error", cause="exit", exit_code=3, message="scripted ended: exit. it broke",
                         agent=agent())


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_stopping_at_the_trials_own_timeout_is_a_limit_and_at_the_runs_an_error(tmp_path: Path) -> None:
    own = launched(tmp_path, "sleep 30", timeout_s=0.5, limit_s=0.5)
    assert own == Report(outcome="succeeded", cause="timeout", limit="timeout", timed_out=True,
                         signal=own.signal, agent=agent())
    run = launched(tmp_path, "sleep 30", timeout_s=0.5, limit_s=60)
    assert run == Report(outcome="error", cause="timeout", timed_out=True, signal=run.signal,
                         message="scripted ended: timeout. ", agent=agent())


@pytest.mark.parametrize(("written", "note"), [
    ('{"tokens": {"input": -1}, "model": "m"}',
     "$ARMBENCH_USAGE_FILE was not used: the token count `input` is below 0 (a count is a whole "
     "number from 0 to 1e12)."),
    ("not json", None),
])
def test_a_usage_file_out_of_bounds_or_unreadable_leaves_the_usage_not_verified(
        tmp_path: Path, written: str, note: str | None) -> None:
    got = launched(tmp_path, f"printf '%s' '{written}' > $ARMBENCH_USAGE_FILE")
    assert got.usage is not None and not got.usage.verified and got.usage.tokens == {}
    assert got.usage.note == note if note else (got.usage.note or "").startswith(
        "$ARMBENCH_USAGE_FILE could not be read: ")
    kept = "m" if note else None  # a model in bounds is kept beside usage out of bounds
    assert msgspec.structs.replace(got, usage=None) == Report(outcome="succeeded", cause="ok", exit_code=0,
                                                             agent=agent(model_reported=kept))
