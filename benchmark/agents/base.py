"""What every agent tool shares: launch it in the trial's sandbox with the prompt, read what it
said, report how it ended.

`ToolAdapter` is the launch, the step's marker, the agent and the verdict (a limit the trial set
or the tool hit is not an error); a tool says only what differs through its hooks. `CliAdapter`
is a built-in agent CLI: an executable and its argv, usage read from its stdout. The team's
command tools (`benchmark.agents.command.CommandTool`) are the other kind.
"""

from __future__ import annotations

import copy
import hashlib
import shlex
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import ClassVar, Literal, Self

import msgspec

from armbench.benchmark.agents.once import tool_version
from armbench.benchmark.trials.evidence import write_tool_output
from armbench.benchmark.trials.leftovers import mark, unmark
from armbench.benchmark.trials.teaminstall import TeamInstall
from armbench.benchmark.trials.toolstep import ToolStep, executable_paths, read_capped
from armbench.edge.homelayout import HomeLayout
from armbench.edge.limits import Limits
from armbench.edge.proc import ProcResult, run_step
from armbench.edge.runtime import Missing
from armbench.edge.sandbox import Launch, Sandbox
from armbench.engine.protocol import Lease, Report
from armbench.ledger.events import Agent, Usage
from armbench.projections.usage import text_problem

__all__ = ["OUTPUT_LIMIT", "RUNTIME_MISSING", "CliAdapter", "Reading", "ToolAdapter",
           "budget_unenforced", "read_output", "skills_used"]

RUNTIME_MISSING = "environment_lacks_runtime"
"""A tool step's cause when its tool needs a file (a dynamic loader, a `#!` interpreter) that
the task's environment lacks: the step is not started."""


def budget_unenforced(lease: Lease, cost_units: frozenset[str] = frozenset()) -> list[str]:
    """The lease's per-trial budget a tool cannot hold (`trial.budget`): its token cap (no pinned
    built-in CLI has one) and its cost cap unless the tool has a limit in its unit."""
    found = ["budget_tokens"] if lease.max_tokens is not None else []
    if lease.max_cost is not None and lease.max_cost.unit not in cost_units:
        found.append("budget_cost")
    return found


OUTPUT_LIMIT = 32 * 1024 * 1024
"""The most bytes of a CLI's stdout armbench reads; a longer output leaves the usage unverified."""


class Reading(msgspec.Struct, frozen=True, kw_only=True):
    """What a tool said (a CLI on stdout, a command tool in its usage file): its usage, model,
    session and version, and an error or a limit it reported."""

    usage: Usage | None = None
    model: str | None = None
    session_id: str | None = None
    version: str | None = None
    """The version the tool stated itself (else the one `ToolAdapter.version` asked for)."""
    error: str | None = None
    limit: str | None = None
    final: str | None = None
    """The tool's final message, where it printed one (what a judge's answer is read from)."""
    skills: tuple[str, ...] | None = None
    """The skills the output shows the agent loaded (None: its output says nothing about skills)."""
    skills_unclear: bool = False
    """The output shows skills were loaded but not which."""
    transient: str | None = None
    """The provider's or the network's cause of the failure the tool reported (a key of
    `benchmark.agents.transient.TRANSIENT_CAUSES`), or None: the failure, if any, is the agent's."""


def _egress(launch: Launch | None) -> list[str]:
    """What a private network let the tool reach beyond its forwarded ports: the filter's
    hosts, or `*` (any) where it was not filtered."""
    return ["*"] if launch is None or launch.egress is None else list(launch.egress)


def read_output(tool: str, out: Path) -> tuple[str, str | None]:
    """What a CLI printed to `out` (at most OUTPUT_LIMIT bytes), and why it was not read, if not."""
    try:
        data = read_capped(out, OUTPUT_LIMIT)
    except ValueError as exc:
        return "", f"{tool}'s output was not read: {exc}."
    return (data or b"").decode(errors="replace"), None


def skills_used(install: TeamInstall | None,
                reading: Reading) -> dict[str, Literal["loaded", "unknown"]] | None:
    """The trial's `used`: each team skill its tool's output shows loaded, or `unknown` where the
    output shows a load it does not name; None when no team was installed or nothing was seen."""
    if install is None or reading.skills is None:
        return None
    used: dict[str, Literal["loaded", "unknown"]] = {
        s: "loaded" for s in sorted(set(reading.skills)) if s in install.skills}
    if reading.skills_unclear:
        used |= {s: "unknown" for s in sorted(install.skills) if s not in used}
    return used


class ToolAdapter(ABC):
    """Runs one prompt with an agent tool in the trial's sandbox and reports what it said."""

    name: str
    """The tool name arms use."""
    sandbox: Sandbox
    prompt_on_stdin: ClassVar[bool] = True
    """Whether the prompt goes on stdin (else the command line carries it)."""
    answer_only: bool = False
    """Whether this call only answers (a judge's): the tool runs with no tools, no file writes
    and no network but its model's, as far as it allows (`answer_gaps`)."""
    endpoints: ClassVar[tuple[str, ...]] = ()
    """The hosts this tool's provider answers on (its API, its login's token refresh): what a
    filtered private network lets it reach beside the hosts its endpoint variables name."""
    answer_gaps: ClassVar[tuple[str, ...]] = ("tools", "writes", "network")
    """What of an answer-only call this tool has no way to hold itself to (a team's command
    tool: all of it); recorded in the call's `unenforced` as `answer_only:<gap>`."""

    def answering(self) -> Self:
        """This tool for an answer-only call (a copy: the arms' own calls are untouched)."""
        other = copy.copy(self)
        other.answer_only = True
        return other

    @abstractmethod
    def start(self, lease: Lease) -> ToolStep:
        """The step's room and launch (what the sandbox exposes, the logins copied in)."""

    @abstractmethod
    def command(self, lease: Lease) -> str:
        """The shell command line that runs the tool."""

    @abstractmethod
    def collect(self, step: ToolStep, proc: ProcResult, stdout: Path | None) -> Reading:
        """What the tool said once it ended (`stdout`: where its stdout went, if kept); never
        raises on an unexpected shape."""

    def env(self, lease: Lease) -> dict[str, str]:
        """Variables this tool needs on top of the member's environment."""
        return {}

    def hand(self, step: ToolStep, lease: Lease) -> dict[str, str]:
        """Files armbench writes for the tool in its step, as the variables that name them."""
        return {}

    def stdout_file(self, lease: Lease) -> Path | None:
        """Where the tool's whole stdout goes for `collect` (None: only its tail is kept)."""
        return None

    def version(self) -> str | None:
        """The tool's version, asked before the launch (None: not known, or the tool states it)."""
        return None

    def program(self, step: ToolStep) -> str | None:
        """The file the tool's command starts first, as the step sees it, or a name looked up
        on PATH: checked against the task's environment before the step (None: not known)."""
        return None

    def unenforced(self, lease: Lease) -> list[str]:
        """The lease's limits this tool has no way to honour."""
        return budget_unenforced(lease)

    def prepare(self) -> None:
        """Anything this tool needs once per process before its first launch."""
        return None

    def ended(self, proc: ProcResult) -> str:
        """The report's message when the tool ended with an error of its process."""
        tail = proc.stderr_tail.decode(errors="replace").strip().splitlines()[-1:] or [""]
        code = f" (exit {proc.exit_code})" if proc.exit_code is not None else ""
        return f"{self.name} ended: {proc.cause}{code}. {tail[0]}"[:500]

    def __call__(self, lease: Lease, *, cancel: threading.Event) -> Report:
        return self.run_reading(lease, cancel=cancel)[0]

    def run_reading(self, lease: Lease, *, cancel: threading.Event) -> tuple[Report, Reading]:
        """Run the prompt; the report and what the tool said (its final message included)."""
        step = self.start(lease)
        search = step.env(lease, self.env(lease)).get("PATH", "")
        missing = step.lacking(self.program(step), search)
        if missing is not None:
            return self._cannot_start(lease, step, missing), Reading()
        env = step.env(lease, {**self.env(lease), **self.hand(step, lease),
                               "ARMBENCH_TEAM_DIR": step.team_dir})
        stdin = (lease.prompt or "").encode() if self.prompt_on_stdin else None
        version = self.version()
        self.prepare()
        out = self.stdout_file(lease)
        try:
            proc = run_step(self.command(lease), cwd=step.launch.cwd, env=env, stdin=stdin,
                            timeout_s=lease.timeout_s, cancel=cancel, stdout_file=out,
                            token=mark(lease.run, lease.lease), sandbox=step.launch.argv,
                            limits=step.launch.limits, net=step.launch.net,
                            enter=step.launch.enter)
            unmark(lease.run, lease.lease)
            write_tool_output(Path(lease.cwd), self.name, proc) if lease.cwd else None
            reading = self.collect(step, proc, out)
        finally:
            if out is not None:
                out.unlink(missing_ok=True)
        if reading.version is None:
            reading = msgspec.structs.replace(reading, version=version)
        return self.report(lease, proc, reading, step.install, step.logins, step.launch), reading

    def report(self, lease: Lease, proc: ProcResult, reading: Reading,
               install: TeamInstall | None = None, logins: tuple[str, ...] = (),
               launch: Launch | None = None) -> Report:
        """The step's report from how the tool's process ended and what the tool said."""
        net = launch.net if launch is not None else None
        network = None if launch is None or not launch.argv else lease.network
        model = None if text_problem("model", reading.model) else reading.model  # over MAX_TEXT
        session = None if text_problem("session id", reading.session_id) else reading.session_id
        agent = Agent(tool=self.name, tool_version=reading.version, model_requested=lease.model,
                      model_reported=model, effort=lease.effort,
                      team_revision=install.revision if install else None,
                      assets_hash=install.assets_hash if install else None,
                      roles=install.roles if install else None,
                      project_commit=lease.env.get("ARMBENCH_PROJECT_COMMIT"),
                      session_id=session, unenforced=self._unenforced(lease),
                      skills_used=skills_used(install, reading),
                      skill_changes=dict(install.changes) if install else {},
                      credentials=list(logins),
                      limits=proc.mechanism,  # type: ignore[arg-type]
                      disk=proc.disk,  # type: ignore[arg-type]
                      network=network, ports=list(net.ports) if net is not None else [],
                      egress=_egress(launch) if network == "private" else None)
        outcome, cause, limit, message = self._verdict(lease, proc, reading)
        transient = outcome == "error" and reading.transient is not None and cause == reading.transient
        cut = proc.cut()  # a tool that printed gigabytes: said where `explain` shows the step
        if cut is not None:
            message = f"{message} {self.name}: {cut}" if message else f"{self.name}: {cut}"
        return Report(outcome=outcome, cause=cause, limit=limit, message=message, exit_code=proc.exit_code,
                      signal=proc.signal, timed_out=proc.timed_out, duration_ms=proc.duration_ms,
                      usage=reading.usage, agent=agent, transient=transient)

    def _cannot_start(self, lease: Lease, step: ToolStep, missing: Missing) -> Report:
        """The report of a step not started: its tool needs a file the task's environment lacks."""
        said = (f"{self.name} cannot start in the task's environment ({step.environment}): "
                f"{missing.why}, neither in the environment's root nor bound in from the host. "
                f"Fix: run this task on the host's root (no `environment:`), use an image that "
                f"has {missing.path} (the runtime {missing.needed_by} needs, installed in the "
                f"image), or show the host's folder holding it with `workflows.sandbox_read`.")
        proc = ProcResult(exit_code=None, signal=None, timed_out=False, cancelled=False,
                          cause="start_failed", duration_ms=0, stdout_tail=b"",
                          stderr_tail=said.encode())
        report = self.report(lease, proc, Reading(), step.install, step.logins, step.launch)
        return msgspec.structs.replace(report, cause=RUNTIME_MISSING, message=said)

    def _unenforced(self, lease: Lease) -> list[str]:
        gaps = [f"answer_only:{gap}" for gap in self.answer_gaps] if self.answer_only else []
        return [*self.unenforced(lease), *gaps]

    def _verdict(self, lease: Lease, proc: ProcResult, reading: Reading) -> tuple[
            Literal["succeeded", "error"], str, str | None, str | None]:
        """Outcome, cause, limit and message: a limit the trial set or the tool hit is not an error."""
        if proc.timed_out and reading.transient is not None and not proc.cancelled:
            return "error", reading.transient, None, (  # its time went on waiting for the provider
                f"{self.name} was stopped while it waited for its provider: {reading.error}")[:500]
        if proc.timed_out and lease.limit_s is not None and lease.timeout_s is not None \
                and lease.limit_s <= lease.timeout_s:
            return "succeeded", "timeout", "timeout", None
        if proc.cause == "limit" and proc.limit is not None:
            limits = Limits.from_context(lease.context.get("limits"))
            return "succeeded", "limit", proc.limit, (f"{self.name} was stopped by its "
                                                      f"{limits.describe(proc.limit)} limit.")
        if proc.cause not in ("ok", "exit"):
            return "error", proc.cause, None, self.ended(proc)
        if reading.limit:
            return "succeeded", "limit", reading.limit, f"{self.name} stopped at its {reading.limit} limit."
        if reading.transient is not None:  # the provider's or the network's, not the agent's
            said = f"{self.name} reported an error: {reading.error}" if reading.error else \
                f"{self.ended(proc)} It said the failure was transient ({reading.transient})."
            return "error", reading.transient, None, said[:500]
        if reading.error:
            return "error", "tool_error", None, f"{self.name} reported an error: {reading.error}"[:500]
        if proc.cause == "exit":
            return "error", "exit", None, self.ended(proc)
        return "succeeded", "ok", None, None


class CliAdapter(ToolAdapter):
    """A built-in agent CLI in its unattended mode: an executable and its argv, its usage read
    from what it prints on stdout."""

    name: str
    """The tool name arms use, which is also the binary looked up on PATH."""
    layout: ClassVar[HomeLayout]
    """Its places in a home: where the team's assets are delivered, its login files (copied
    read-only into a trial's private home; nothing else of the member's home is), its session
    transcripts, every user-level place it loads."""
    home_vars: ClassVar[dict[str, str]] = {}
    """Variables that move the CLI's user-level folders, pinned in the sandbox to the trial's
    private home (a path relative to it; empty: unset), so a member's own folder elsewhere is
    never read."""

    def __init__(self, executable: str, scratch: Path, sandbox: Sandbox) -> None:
        self.executable, self.scratch, self.sandbox = executable, scratch, sandbox

    @abstractmethod
    def argv(self, lease: Lease) -> list[str]:
        """The command line, after the executable."""

    @abstractmethod
    def read(self, stdout: str, stderr: str) -> Reading:
        """What the CLI printed, as a Reading; never raises on an unexpected shape."""

    def start(self, lease: Lease) -> ToolStep:
        return ToolStep.start(self.sandbox, lease, expose=executable_paths(self.executable),
                              endpoints=self.endpoints,
                              credentials=self.layout.logins)

    def command(self, lease: Lease) -> str:
        return shlex.join([self.executable, *self.argv(lease)])

    def hand(self, step: ToolStep, lease: Lease) -> dict[str, str]:
        home = step.launch.env.get("HOME")
        if not step.launch.argv or home is None:
            return {}  # declared: the member's own home and folders, as they are
        return {var: f"{home}/{rel}" if rel else "" for var, rel in self.home_vars.items()}

    def version(self) -> str | None:
        return tool_version(self.executable)

    def program(self, step: ToolStep) -> str | None:
        return self.executable  # shown at its own path (`executable_paths`)

    def stdout_file(self, lease: Lease) -> Path:
        key = hashlib.sha1(f"{lease.step}:{lease.lease}".encode()).hexdigest()[:16]
        self.scratch.mkdir(parents=True, exist_ok=True)
        return self.scratch / f"{key}.{self.name}.out"

    def collect(self, step: ToolStep, proc: ProcResult, stdout: Path | None) -> Reading:
        printed, unread = read_output(self.name, stdout) if stdout is not None else ("", None)
        reading = self.read(printed, proc.stderr_tail.decode(errors="replace"))
        if unread is not None:
            reading = msgspec.structs.replace(reading, usage=Usage(verified=False, note=unread))
        return reading
