"""Command tools: a team's `tools/<name>/tool.yaml`, launched by the local driver in a clone.

The command gets the prompt on stdin and in `$ARMBENCH_PROMPT_FILE`, the model and effort in
`$ARMBENCH_MODEL` and `$ARMBENCH_EFFORT`, a read-only copy of its tool folder at
`$ARMBENCH_TOOL_DIR`, and may write its usage to `$ARMBENCH_USAGE_FILE` (at most
`USAGE_LIMIT` bytes; counts, cost and names within `projections.usage`'s bounds, else the trial's
usage is not verified). It runs in the trial's sandbox (`benchmark.toolstep`).
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

import msgspec

from benchmark.leftovers import mark, unmark
from benchmark.toolstep import ToolStep, read_capped
from edge.proc import ProcResult, run_step
from edge.sandbox import Sandbox
from engine.protocol import Lease, Report
from ledger.events import Agent, Cost, Usage
from projections.usage import text_problem, usage_problem

__all__ = ["USAGE_LIMIT", "CommandTool", "UsageFile", "command_report", "export_tool_dir",
           "read_usage_file"]

USAGE_LIMIT = 1024 * 1024
"""The most bytes of `$ARMBENCH_USAGE_FILE` armbench reads."""


class _UsageCost(msgspec.Struct, forbid_unknown_fields=True):
    amount: float
    unit: str


class UsageFile(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """What a command tool may write to `$ARMBENCH_USAGE_FILE`."""

    tokens: dict[str, int] = {}
    cost: _UsageCost | None = None
    model: str | None = None
    session_id: str | None = None
    version: str | None = None


def export_tool_dir(files: dict[str, bytes], name: str, dest_root: Path) -> Path:
    """Write `tools/<name>/` from the team revision to a read-only folder outside any clone."""
    dest = dest_root / name
    prefix = f"tools/{name}/"
    for path, data in files.items():
        if path.startswith(prefix):
            target = dest / path[len(prefix):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    for folder, _dirs, names in os.walk(dest, topdown=False):
        for n in names:
            (Path(folder) / n).chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH | stat.S_IXUSR)
        Path(folder).chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    return dest


class CommandTool:
    """Runs one prompt with a tool.yaml `run:` command."""

    def __init__(self, name: str, run: str, tool_dir: Path, sandbox: Sandbox,
                 credentials: Sequence[str] = ()) -> None:
        self.name, self.run, self.tool_dir = name, run, tool_dir
        self.sandbox, self.credentials = sandbox, tuple(credentials)

    def __call__(self, lease: Lease, *, cancel: threading.Event) -> Report:
        step = ToolStep.start(self.sandbox, lease, tool_dir=self.tool_dir, credentials=self.credentials)
        prompt_file, prompt_seen = step.file("prompt")
        usage_file, usage_seen = step.file("usage.json")
        prompt = (lease.prompt or "").encode()
        prompt_file.write_bytes(prompt)
        env = step.env(lease, {
            "ARMBENCH_PROMPT_FILE": prompt_seen, "ARMBENCH_MODEL": lease.model or "",
            "ARMBENCH_EFFORT": lease.effort or "", "ARMBENCH_TOOL_DIR": step.tool_dir(self.tool_dir),
            "ARMBENCH_USAGE_FILE": usage_seen,
        })
        proc = run_step(self.run, cwd=step.launch.cwd, env=env, stdin=prompt,
                        timeout_s=lease.timeout_s, cancel=cancel,
                        token=mark(lease.run, lease.lease), sandbox=step.launch.argv)
        unmark(lease.run, lease.lease)
        usage, reported = read_usage_file(usage_file)
        prompt_file.unlink(missing_ok=True)
        return command_report(self.name, lease, proc, usage, reported)


def read_usage_file(path: Path) -> tuple[Usage | None, UsageFile | None]:
    """The tool's usage file as the trial's usage, and what of it armbench keeps as reported
    (model, session id, version); removes the file. An absent file gives (None, None); one that is
    unreadable, over USAGE_LIMIT or out of bounds gives unverified usage with a note."""
    try:
        data = read_capped(path, USAGE_LIMIT)
        if data is None:
            return None, None
        got = msgspec.json.decode(data, type=UsageFile)
    except ValueError as exc:
        return Usage(verified=False, note=f"$ARMBENCH_USAGE_FILE could not be read: {exc}"[:500]), None
    finally:
        path.unlink(missing_ok=True)
    texts = {"model": got.model, "session_id": got.session_id, "version": got.version}
    too_long = {k: p for k, v in texts.items() if (p := text_problem(k.replace("_", " "), v))}
    problem = usage_problem(got.tokens, (got.cost.amount, got.cost.unit) if got.cost else None) \
        or next(iter(too_long.values()), None)
    if problem is not None:  # nothing of it is summed; the names in bounds are still kept
        kept = msgspec.structs.replace(got, tokens={}, cost=None, **dict.fromkeys(too_long))
        return Usage(verified=False, note=f"$ARMBENCH_USAGE_FILE was not used: {problem}."), kept
    cost = Cost(amount=got.cost.amount, unit=got.cost.unit) if got.cost else None
    return Usage(tokens=got.tokens, cost=cost), got


def command_report(name: str, lease: Lease, proc: ProcResult, usage: Usage | None,
                   reported: UsageFile | None) -> Report:
    """The step's report from how the command ended and what its usage file said."""
    agent = Agent(tool=name, tool_version=reported.version if reported else None,
                  model_requested=lease.model, model_reported=reported.model if reported else None,
                  effort=lease.effort, team_revision=lease.env.get("ARMBENCH_TEAM_REVISION"),
                  project_commit=lease.env.get("ARMBENCH_PROJECT_COMMIT"),
                  session_id=reported.session_id if reported else None,
                  unenforced=["max_turns"] if lease.max_turns is not None else [])
    common = dict(exit_code=proc.exit_code, signal=proc.signal, timed_out=proc.timed_out,
                  duration_ms=proc.duration_ms, usage=usage, agent=agent)
    if proc.cause == "ok":
        return Report(outcome="succeeded", cause="ok", **common)  # type: ignore[arg-type]
    at_limit = (proc.timed_out and lease.limit_s is not None and lease.timeout_s is not None
                and lease.limit_s <= lease.timeout_s)
    if at_limit:
        return Report(outcome="succeeded", cause="timeout", limit="timeout", **common)  # type: ignore[arg-type]
    tail = proc.stderr_tail.decode(errors="replace").strip().splitlines()[-1:] or [""]
    return Report(outcome="error", cause=proc.cause, message=f"{name} ended: {proc.cause}. {tail[0]}"[:500],
                  **common)  # type: ignore[arg-type]
