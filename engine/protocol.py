"""What a driver sees: leases it works and reports it gives back. Generic: no benchmark here."""

from __future__ import annotations

import errno
from datetime import datetime
from typing import Any, Literal, Protocol

import msgspec

from armbench.ledger.events import Agent, Cost, Preparation, StepSpec, Usage

__all__ = ["FAULTS", "Done", "Host", "HostOutcome", "Lease", "Prepared", "Report", "Wait",
           "fault_report", "host_error_report"]

FAULTS = frozenset({"disk_full"})
"""Report causes that stop the whole run, which then ends failed: no later step could do better."""


class Lease(msgspec.Struct, frozen=True, kw_only=True):
    """A step handed to a driver: everything it needs to run it, and nothing it must look up."""

    run: str
    """The run id."""
    step: str
    """The step id."""
    lease: str
    """The lease id to report under."""
    kind: Literal["command", "prompt"]
    """What to run."""
    command: str | None = None
    """For a command step."""
    tool: str | None = None
    """For a prompt step: the tool to launch."""
    model: str | None = None
    """The model, passed as given (never re-resolved)."""
    effort: str | None = None
    """The effort, passed as given."""
    prompt: str | None = None
    """The prompt."""
    cwd: str | None = None
    """The prepared workspace, where the host prepared one."""
    env: dict[str, str] = {}
    """Variables to set for the step; `ARMBENCH_WORKFLOW_ATTEMPT` is always there: the step's
    attempt, 1 for its first lease and one more each time a lapsed or retried step is leased
    again."""
    withhold: list[str] = []
    """Variables to remove from every process the step starts."""
    timeout_s: float | None = None
    """Seconds the step may take (its own limit or what is left of the run's)."""
    limit_s: float | None = None
    """The step's own limit; stopping there ends the turn, it is not an error."""
    max_turns: int | None = None
    """A turn limit for tools that support one."""
    max_tokens: int | None = None
    """A token cap for tools that support one."""
    max_cost: Cost | None = None
    """A cost cap for tools that support one (Claude Code, in USD)."""
    network: Literal["host", "none", "private"] = "host"
    """Whether the step keeps the host's network (`host`), has none, or a private one."""
    egress: list[str] = []
    """What a private network's tool may reach beyond its loopback ports, on top of its model
    endpoints (`trial.egress`): more hosts, or `*` for any host (unfiltered)."""
    expires_at: datetime
    """Renew before this, or the step goes to another driver."""
    tags: dict[str, str] = {}
    """Opaque labels from the plan."""
    context: dict[str, Any] = {}
    """What the host says about the step to whoever runs it (for a trial: its frozen arm);
    the engine never reads it."""


class Report(msgspec.Struct, frozen=True, kw_only=True):
    """A driver's account of a step it ran."""

    outcome: Literal["succeeded", "failed", "error"]
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    cause: str | None = None
    limit: str | None = None
    duration_ms: int | None = None
    usage: Usage | None = None
    agent: Agent | None = None
    outputs: dict[str, Any] = {}
    message: str | None = None
    transient: bool = False
    """The error's cause is the provider's or the network's, not the agent's: the step may be
    tried again (`StepSpec.retries`)."""


class Done(msgspec.Struct, frozen=True, kw_only=True):
    """The run has ended."""

    state: str
    outputs: dict[str, Any] = {}


class Wait(msgspec.Struct, frozen=True, kw_only=True):
    """Nothing is ready for this driver now; ask again shortly."""

    retry_after_s: float = 0.05


class Prepared(msgspec.Struct, frozen=True, kw_only=True):
    """The host made a workspace for a leased step."""

    path: str
    commit: str
    duration_ms: int
    env: dict[str, str] = {}
    withhold: list[str] = []
    context: dict[str, Any] = {}
    """Handed on in the lease's `context`."""
    prepared_tree: str | None = None
    """The key of the prepared tree the workspace was copied from, when it was."""
    prepared_origin: Literal["built", "cached", "rebuilt"] | None = None
    """Where that tree came from: `built` in this run, `cached` (kept from an earlier run), or
    `rebuilt` in this run because the one found failed its check."""
    preparation: Preparation | None = None
    """How the workspace was made (`overlay`, `reflink`, `copy` or `clone`), when the host says."""


class HostOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """What the host did with a step it runs itself, or why it could not prepare one."""

    report: Report
    events: list[Any] = []
    """Domain events to append with the report (the engine never reads them)."""


class Host(Protocol):
    """The application that owns the steps' meaning; the engine only schedules."""

    def runs_itself(self, spec: StepSpec) -> bool:
        """True for command steps the host executes in process."""

    def execute(self, run: str, spec: StepSpec, *, workspace: str | None,
                run_state: str) -> HostOutcome:
        """Run a host command step."""

    def prepare(self, run: str, spec: StepSpec, lease: str) -> Prepared | HostOutcome:
        """Make the workspace of a step that asks for a clone."""

    def release(self, run: str, workspace: str) -> None:
        """Remove a workspace no later step continues."""

    def abandoned(self, run: str, lease: str, workspace: str | None) -> None:
        """A lease lapsed (its driver is gone): stop what it left running, remove its workspace."""

    def finished(self, run: str) -> None:
        """The run ended: remove anything left behind."""

    def cancel(self, run: str) -> None:
        """The run is stopping: stop the processes the host's own steps run (setup, checks)."""


def fault_report(exc: OSError, doing: str) -> Report:
    """A step an OSError stopped, as an error with its cause (`disk_full` for ENOSPC, else
    `host_error`) and a message naming the file."""
    cause = "disk_full" if exc.errno == errno.ENOSPC else "host_error"
    where = f" ({exc.filename})" if exc.filename else ""
    return Report(outcome="error", cause=cause,
                  message=f"{doing} failed: {exc.strerror or exc}{where}")


def host_error_report(exc: Exception, doing: str) -> Report:
    """A step an unforeseen exception of armbench's own stopped (a shape of the trial's files no
    code path expected), as an error with cause `host_error` and a message naming the exception:
    the step settles and the run goes on."""
    said = str(exc).strip().splitlines()[:1] or [""]
    return Report(outcome="error", cause="host_error",
                  message=f"{doing} failed in armbench: {type(exc).__name__}: {said[0]}"[:500])
