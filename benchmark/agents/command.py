"""Command tools: a team's `tools/<name>/tool.yaml`, launched by the local driver in a clone.

The command gets the prompt on stdin and in `$ARMBENCH_PROMPT_FILE`, the model and effort in
`$ARMBENCH_MODEL` and `$ARMBENCH_EFFORT`, a read-only copy of its tool folder at
`$ARMBENCH_TOOL_DIR`, and may write its usage to `$ARMBENCH_USAGE_FILE` (at most
`USAGE_LIMIT` bytes; counts, cost and names within `projections.usage`'s bounds, else the trial's
usage is not verified). It runs in the trial's sandbox (`benchmark.trials.toolstep`), launched and
reported like the built-in CLIs (`benchmark.agents.base.ToolAdapter`).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import shlex
import stat
from collections.abc import Sequence
from pathlib import Path

import msgspec

from armbench.benchmark.agents.base import Reading, ToolAdapter, budget_unenforced
from armbench.benchmark.agents.transient import EX_TEMPFAIL
from armbench.benchmark.trials.toolstep import ToolStep, read_capped
from armbench.edge.proc import ProcResult
from armbench.edge.sandbox import Sandbox
from armbench.engine.protocol import Lease, Report
from armbench.ledger.events import Cost, Usage
from armbench.projections.usage import text_problem, usage_problem

__all__ = ["FINAL_LIMIT", "USAGE_LIMIT", "CommandTool", "StdoutCommandTool", "UsageFile",
           "command_report", "export_tool_dir", "first_program", "read_usage_file",
           "take_usage_file", "tempfail", "usage_of", "usage_reading"]

USAGE_LIMIT = 1024 * 1024
"""The most bytes of `$ARMBENCH_USAGE_FILE` armbench reads."""
FINAL_LIMIT = 1024 * 1024
"""The most bytes of a command tool's stdout read as its final message."""


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
    transient: bool = False
    """The tool's failure was the provider's or the network's, not the agent's (as exit 75)."""


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


class CommandTool(ToolAdapter):
    """Runs one prompt with a tool.yaml `run:` command: an adapter whose command line is that
    string, whose extra variables name the files armbench hands it, and whose usage comes from
    `$ARMBENCH_USAGE_FILE` (the launch, the marker, the agent and the verdict are
    `ToolAdapter`'s)."""

    def __init__(self, name: str, run: str, tool_dir: Path, sandbox: Sandbox,
                 credentials: Sequence[str] = ()) -> None:
        self.name, self.run, self.tool_dir = name, run, tool_dir
        self.sandbox, self.credentials = sandbox, tuple(credentials)

    def start(self, lease: Lease) -> ToolStep:
        return ToolStep.start(self.sandbox, lease, tool_dir=self.tool_dir, credentials=self.credentials)

    def command(self, lease: Lease) -> str:
        return self.run

    def program(self, step: ToolStep) -> str | None:
        return first_program(self.run, step.tool_dir(self.tool_dir))

    def hand(self, step: ToolStep, lease: Lease) -> dict[str, str]:
        step.drop_file("usage.json")  # an earlier turn's, or one the tool planted, is not this one's
        prompt_seen = step.hand_file("prompt", (lease.prompt or "").encode())
        return {"ARMBENCH_PROMPT_FILE": prompt_seen, "ARMBENCH_MODEL": lease.model or "",
                "ARMBENCH_EFFORT": lease.effort or "", "ARMBENCH_TOOL_DIR": step.tool_dir(self.tool_dir),
                "ARMBENCH_USAGE_FILE": step.file("usage.json")[1]}

    def collect(self, step: ToolStep, proc: ProcResult, stdout: Path | None) -> Reading:
        reading = usage_reading(*take_usage_file(step))  # removed: the next turn writes its own
        step.drop_file("prompt")
        return tempfail(reading, proc)

    def unenforced(self, lease: Lease) -> list[str]:
        return (["max_turns"] if lease.max_turns is not None else []) + budget_unenforced(lease)

    def ended(self, proc: ProcResult) -> str:
        tail = proc.stderr_tail.decode(errors="replace").strip().splitlines()[-1:] or [""]
        return f"{self.name} ended: {proc.cause}. {tail[0]}"[:500]


class StdoutCommandTool(CommandTool):
    """A command tool whose stdout is its final message (as a judge, and as a turn of an arm's
    workflow whose output a later turn reads)."""

    def __init__(self, tool: CommandTool, scratch: Path) -> None:
        super().__init__(tool.name, tool.run, tool.tool_dir, tool.sandbox, tool.credentials)
        self.scratch = scratch

    def stdout_file(self, lease: Lease) -> Path:
        key = hashlib.sha1(f"{lease.step}:{lease.lease}".encode()).hexdigest()[:16]
        self.scratch.mkdir(parents=True, exist_ok=True)
        return self.scratch / f"{key}.judge.out"

    def collect(self, step: ToolStep, proc: ProcResult, stdout: Path | None) -> Reading:
        reading = super().collect(step, proc, stdout)
        try:
            final = read_capped(stdout, FINAL_LIMIT) if stdout is not None else None
        except ValueError:
            final = None
        text = final.decode(errors="replace") if final is not None else None
        return Reading(usage=reading.usage, model=reading.model, session_id=reading.session_id,
                       version=reading.version, final=text, transient=reading.transient)


_SHELL_WORDS = frozenset(
    ": . [ [[ ! { ( alias bg bind break builtin cd command continue declare echo eval exec exit "
    "export false for function if local printf pushd read readonly return set shift source test "
    "time trap true type typeset ulimit umask unset until wait while".split())
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.+-]+")
_TOOL_DIR_VARS = ("${ARMBENCH_TOOL_DIR}/", "$ARMBENCH_TOOL_DIR/")


def first_program(run: str, tool_dir: str) -> str | None:
    """The program a `run:` command starts first, when it is plain to see: an absolute path, a
    file of the tool's folder (`$ARMBENCH_TOOL_DIR/...`, as `tool_dir` the step sees), or a name
    looked up on PATH; None for anything else (a builtin, a relative path, shell syntax)."""
    try:
        words = shlex.split(run, comments=True)
    except ValueError:
        return None
    words = list(itertools.dropwhile(_ASSIGNMENT.match, words))
    if not words:
        return None
    first = words[0]
    for var in _TOOL_DIR_VARS:
        if first.startswith(var):
            first = f"{tool_dir}/{first[len(var):]}"
    if first.startswith("/") and not any(c in first for c in "$`*?[]{}()<>|&;\\"):
        return first
    return first if _PLAIN_NAME.fullmatch(first) and first not in _SHELL_WORDS else None


def read_usage_file(path: Path) -> tuple[Usage | None, UsageFile | None]:
    """A usage file at a host path (a driver's `--usage-file`) as `usage_of` reads it; the file
    is only read."""
    try:
        return usage_of(read_capped(path, USAGE_LIMIT))
    except ValueError as exc:
        return _unreadable(exc)


def take_usage_file(step: ToolStep) -> tuple[Usage | None, UsageFile | None]:
    """The usage file the tool wrote in its step's io folder (never read through a link), as
    `usage_of` reads it; removed."""
    try:
        return usage_of(step.take_file("usage.json", USAGE_LIMIT))
    except ValueError as exc:
        return _unreadable(exc)


def _unreadable(exc: ValueError) -> tuple[Usage, None]:
    return Usage(verified=False, note=f"$ARMBENCH_USAGE_FILE could not be read: {exc}"[:500]), None


def usage_of(data: bytes | None) -> tuple[Usage | None, UsageFile | None]:
    """The tool's usage file as the trial's usage, and what of it armbench keeps as reported
    (model, session id, version). An absent file gives (None, None); one that is unreadable,
    over USAGE_LIMIT or out of bounds gives unverified usage with a note."""
    if data is None:
        return None, None
    try:
        got = msgspec.json.decode(data, type=UsageFile)
    except ValueError as exc:
        return _unreadable(exc)
    texts = {"model": got.model, "session_id": got.session_id, "version": got.version}
    too_long = {k: p for k, v in texts.items() if (p := text_problem(k.replace("_", " "), v))}
    problem = usage_problem(got.tokens, (got.cost.amount, got.cost.unit) if got.cost else None) \
        or next(iter(too_long.values()), None)
    if problem is not None:  # nothing of it is summed; the names in bounds are still kept
        kept = msgspec.structs.replace(got, tokens={}, cost=None, **dict.fromkeys(too_long))
        return Usage(verified=False, note=f"$ARMBENCH_USAGE_FILE was not used: {problem}."), kept
    cost = Cost(amount=got.cost.amount, unit=got.cost.unit) if got.cost else None
    return Usage(tokens=got.tokens, cost=cost), got


def usage_reading(usage: Usage | None, reported: UsageFile | None) -> Reading:
    """What a command tool said, from its usage file as `read_usage_file` read it."""
    if reported is None:
        return Reading(usage=usage)
    return Reading(usage=usage, model=reported.model, session_id=reported.session_id,
                   version=reported.version, transient="tempfail" if reported.transient else None)


def command_report(name: str, lease: Lease, proc: ProcResult, usage: Usage | None,
                   reported: UsageFile | None) -> Report:
    """The report a command tool named `name` gives (`CommandTool.report`) from how its command
    ended and what its usage file said."""
    tool = CommandTool(name, "", Path(), Sandbox(isolation="declared"))
    return tool.report(lease, proc, tempfail(usage_reading(usage, reported), proc))


def tempfail(reading: Reading, proc: ProcResult) -> Reading:
    """The reading, transient (`tempfail`) when the command exited 75 (`EX_TEMPFAIL`)."""
    if proc.cause == "exit" and proc.exit_code == EX_TEMPFAIL:
        return msgspec.structs.replace(reading, transient="tempfail")
    return reading
