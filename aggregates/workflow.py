"""The workflow run decider: pure state, `evolve` (total, never validates) and `decide_*`.

The engine loads a run's events, folds them with `evolve`, asks a `decide_*` function for the
next events, and appends them; nothing here does I/O, reads a clock or makes an id: time, ids
and the driver's capabilities come in with the command.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

import msgspec

from armbench.ledger.errors import DomainError, UnknownLease
from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    Event,
    LeaseExpired,
    LeaseRenewed,
    RunCancelRequested,
    RunEnded,
    RunStarted,
    StepLeased,
    StepReported,
    StepSkipped,
    StepSpec,
    StepsPlanned,
    Usage,
    WorkspacePrepared,
)

__all__ = [
    "CancelRun",
    "Caps",
    "Command",
    "LeaseStep",
    "RenewLease",
    "ReportStep",
    "RunState",
    "StepState",
    "decide_cancel",
    "decide_next",
    "decide_renew",
    "decide_report",
    "evolve",
    "fold",
    "initial_state",
    "outcome",
    "retry_delay",
]

SETTLED = frozenset({"succeeded", "failed", "error", "skipped"})
MAX_ATTEMPTS = 3
"""How many times a step is handed out before, its leases having lapsed each time, it settles."""


class StepState(msgspec.Struct, gc=False):
    """Where one step stands. A msgspec Struct, not a dataclass: a resume decodes a snapshot of
    every step (20,000 in a 10,000-trial run) and a plan makes them all, which a Struct does in
    a fraction of the time; `gc=False` keeps those objects out of the cycle collector (a step
    state holds no reference back to itself or its run)."""

    spec: StepSpec
    parent: str | None
    status: str = "pending"
    lease: str | None = None
    expires_at: datetime | None = None
    attempt: int = 0
    workspace: str | None = None
    commit: str | None = None
    """The commit its prepared clone was checked out at (`WorkspacePrepared`)."""
    driver: str | None = None
    """The driver of the step's last lease (whose machine holds the clone it prepared)."""
    reported_at: datetime | None = None
    """When the step was reported."""
    outputs: dict[str, Any] = msgspec.field(default_factory=dict)
    checked: str | None = None
    """The lease under which a check's result (`CheckRan`) was recorded for this step."""
    open_children: int = 0
    failed_children: int = 0
    index: int = 0
    retried: int = 0
    """Attempts that failed for a transient cause and were handed back (`AttemptFailed`)."""
    not_before: datetime | None = None
    """A step handed back waits until then before it is leased again."""

    @property
    def settled(self) -> bool:
        """It will not run again."""
        return self.status in SETTLED


class RunState(msgspec.Struct):
    """A run folded from its events."""

    run: str | None = None
    started: RunStarted | None = None
    deadline: datetime | None = None
    steps: dict[str, StepState] = msgspec.field(default_factory=dict)
    loose: list[str] = msgspec.field(default_factory=list)
    lanes: dict[int, list[str]] = msgspec.field(default_factory=dict)
    lane_heads: dict[int, int] = msgspec.field(default_factory=dict)
    leases: dict[str, str] = msgspec.field(default_factory=dict)
    cancel_requested: bool = False
    fault: str | None = None
    """What fault stopped the run (a `RunCancelRequested` with a fault), if one did."""
    timed_out: bool = False
    ended: RunEnded | None = None
    version: int = 0
    open_steps: dict[bool, int] = msgspec.field(default_factory=lambda: {False: 0, True: 0})
    continued_by: dict[str, list[str]] = msgspec.field(default_factory=dict)
    filled_by: dict[str, list[str]] = msgspec.field(default_factory=dict)
    """Step id -> the workflow steps its output fills (so a report never scans every step)."""
    spent: dict[str, float] = msgspec.field(default_factory=dict)
    """Unit -> the cost the prompt steps' reports and failed attempts stated (a step's budget,
    `StepSpec.budget`, is weighed against it)."""

    def continued(self, step: str) -> bool:
        """Some unsettled step will continue this step's workspace."""
        return any(not self.steps[c].settled for c in self.continued_by.get(step, ()))

    def unsettled(self, final: bool) -> list[StepState]:
        """Steps not yet settled, final or not."""
        return [s for s in self.steps.values() if not s.settled and s.spec.final == final]


@dataclass(frozen=True)
class Caps:
    """What the asking driver can do."""

    driver: str
    tools: frozenset[str] | None = None
    sole: bool = True
    runs_commands: bool = True
    prepares: bool = True
    """It asks the host to prepare clones (`next --prepare`); a step that wants a fresh clone
    goes only to such a driver."""


@dataclass(frozen=True)
class LeaseStep:
    """Command: give the asking driver a step, if one is ready."""

    caps: Caps
    lease: str
    now: datetime
    ttl: timedelta
    max_attempts: int = MAX_ATTEMPTS
    """A step leased this many times, each lease lapsed, settles `attempts_exhausted`."""


@dataclass(frozen=True)
class ReportStep:
    """Command: record a leased step's outcome."""

    lease: str
    now: datetime
    report: StepReported
    facts: tuple[Event, ...] = ()
    """Events the host recorded while running the step (a check's `CheckRan`), written first."""
    jitter: float = 0.5
    """A number in [0, 1) drawn at the edge: where in its window a retry's backoff falls."""


@dataclass(frozen=True)
class RenewLease:
    """Command: extend a lease the caller still holds, to `expires_at`."""

    lease: str
    expires_at: datetime


@dataclass(frozen=True)
class CancelRun:
    """Command: ask the run to stop; `fault` names what stopped it when no person did."""

    now: datetime
    fault: str | None = None


Command = LeaseStep | ReportStep | RenewLease | CancelRun
"""Every command a run's deciders take: one decider per command."""


def initial_state() -> RunState:
    """A run with no events."""
    return RunState()


def fold(events: list[Event], state: RunState | None = None) -> RunState:
    """Fold events into a state (a fresh one unless given)."""
    state = state or initial_state()
    for e in events:
        evolve(state, e)
    return state


# ------------------------------------------------------------------------------ evolve


def evolve(state: RunState, event: Event) -> RunState:
    """Apply one event; total: any event in any order leaves a usable state."""
    state.version += 1
    handler = _EVOLVERS.get(type(event))
    if handler is not None:
        handler(state, event)
    return state


def _started(state: RunState, e: RunStarted) -> None:
    state.run = e.run
    state.started = e
    state.deadline = e.at + timedelta(seconds=e.timeout_s)


def _planned(state: RunState, e: StepsPlanned) -> None:
    parent = state.steps.get(e.parent) if e.parent else None
    for spec in e.steps:
        if spec.id in state.steps:
            continue
        state.steps[spec.id] = StepState(spec=spec, parent=e.parent, index=len(state.steps))
        state.open_steps[spec.final] += 1
        if spec.workspace == "continue" and spec.needs:
            state.continued_by.setdefault(spec.needs[0], []).append(spec.id)
        if spec.kind == "workflow" and spec.from_step:
            state.filled_by.setdefault(spec.from_step, []).append(spec.id)
        if parent is not None:
            parent.open_children += 1
        if spec.lane is not None:
            state.lanes.setdefault(spec.lane, []).append(spec.id)
            state.lane_heads.setdefault(spec.lane, 0)
        else:
            state.loose.append(spec.id)
    if parent is not None and parent.open_children == 0:
        parent.status = "succeeded"


def _leased(state: RunState, e: StepLeased) -> None:
    step = state.steps.get(e.step)
    if step is None:
        return
    if step.lease:
        state.leases.pop(step.lease, None)
    step.status, step.lease, step.expires_at, step.attempt = "leased", e.lease, e.expires_at, e.attempt
    step.driver = e.driver
    state.leases[e.lease] = e.step


def _renewed(state: RunState, e: LeaseRenewed) -> None:
    step = state.steps.get(e.step)
    if step is not None and step.lease == e.lease:
        step.expires_at = e.expires_at


def _expired(state: RunState, e: LeaseExpired) -> None:
    step = state.steps.get(e.step)
    state.leases.pop(e.lease, None)
    if step is not None and step.lease == e.lease and not step.settled:
        step.status, step.lease, step.expires_at = "pending", None, None


def _prepared(state: RunState, e: WorkspacePrepared) -> None:
    step = state.steps.get(e.step)
    if step is not None:
        step.workspace, step.commit = e.path, e.commit


def _settle(state: RunState, step_id: str, status: str) -> None:
    step = state.steps.get(step_id)
    if step is None or step.settled:
        return
    if step.lease:
        state.leases.pop(step.lease, None)
    step.status = status
    state.open_steps[step.spec.final] -= 1
    if step.parent is not None:
        parent = state.steps.get(step.parent)
        if parent is not None:
            parent.open_children -= 1
            parent.failed_children += status != "succeeded"
            if parent.open_children == 0 and not parent.settled:
                ok = parent.spec.independent or parent.failed_children == 0
                _settle(state, parent.spec.id, "succeeded" if ok else "failed")
    if step.spec.lane is not None:
        _advance_lane(state, step.spec.lane)


def _advance_lane(state: RunState, lane: int) -> None:
    ids = state.lanes[lane]
    i = state.lane_heads[lane]
    while i < len(ids) and state.steps[ids[i]].settled:
        i += 1
    state.lane_heads[lane] = i


def _spend(state: RunState, step: StepState | None, usage: Usage | None) -> None:
    """Count a prompt step's stated cost toward the run's spend; a cost not stated, negative or
    not a number counts nothing (never as zero spent: the report says how many stated none)."""
    if step is None or step.spec.kind != "prompt" or usage is None or usage.cost is None:
        return
    amount = usage.cost.amount
    if math.isfinite(amount) and amount >= 0:
        state.spent[usage.cost.unit] = state.spent.get(usage.cost.unit, 0.0) + amount


def _reported(state: RunState, e: StepReported) -> None:
    step = state.steps.get(e.step)
    if step is not None:
        step.outputs = dict(e.outputs)
        step.reported_at = e.at
        if not step.settled:
            _spend(state, step, e.usage)
    _settle(state, e.step, e.outcome)


def _attempt_failed(state: RunState, e: AttemptFailed) -> None:
    step = state.steps.get(e.step)
    if step is not None and step.lease == e.lease and not step.settled:
        _spend(state, step, e.usage)
    state.leases.pop(e.lease, None)
    if step is not None and step.lease == e.lease and not step.settled:
        step.status, step.lease, step.expires_at = "pending", None, None
        step.retried += 1
        step.not_before = e.retry_at


def _skipped(state: RunState, e: StepSkipped) -> None:
    if e.reason == "timed_out":
        state.timed_out = True
    _settle(state, e.step, "skipped")


def _checked(state: RunState, e: CheckRan) -> None:
    step = state.steps.get(e.step)
    if step is not None and step.lease is not None and not step.settled:
        step.checked = step.lease


def _cancel(state: RunState, e: RunCancelRequested) -> None:
    state.cancel_requested = True
    state.fault = state.fault or e.fault


def _ended(state: RunState, e: RunEnded) -> None:
    state.ended = e


_EVOLVERS: dict[type, Any] = {
    RunStarted: _started,
    StepsPlanned: _planned,
    StepLeased: _leased,
    LeaseRenewed: _renewed,
    LeaseExpired: _expired,
    WorkspacePrepared: _prepared,
    StepReported: _reported,
    AttemptFailed: _attempt_failed,
    StepSkipped: _skipped,
    RunCancelRequested: _cancel,
    RunEnded: _ended,
    CheckRan: _checked,
}


# ------------------------------------------------------------------------------ decide


def decide_next(state: RunState, cmd: LeaseStep) -> list[Event]:
    """The next events toward handing the driver a step: expiries, skips, a lease, or the end.

    Returns [] when nothing can happen now (wait for other leases). The engine applies what
    it gets and asks again until it gets a lease, the end, or [].
    """
    if state.started is None:
        raise DomainError("This run has not started: there is no RunStarted event in its log.")
    if state.ended is not None:
        return []
    expired = _expire(state, cmd.now)
    if expired:
        return expired
    stopping = _stop_pending(state, cmd.now)
    if stopping:
        return stopping
    final = state.open_steps[False] == 0
    skips: list[Event] = []
    for step in _own_first(state, _candidates(state, final), cmd):
        blocked = _unmet_need(state, step)
        if blocked is not None:
            skips.append(StepSkipped(step=step.spec.id, reason="needs_unmet", detail=blocked,
                                     at=cmd.now))
            continue
        if blocked is None and any(not state.steps[n].settled for n in step.spec.needs
                                   if n in state.steps):
            continue
        if step.not_before is not None and cmd.now < step.not_before:
            continue  # a transient failure's backoff: wait
        reached = _budget_reached(state, step)
        if reached is not None:
            skips.append(StepSkipped(step=step.spec.id, reason="budget", detail=reached,
                                     at=cmd.now))
            continue
        if step.attempt - step.retried >= cmd.max_attempts:
            skips.append(StepSkipped(step=step.spec.id, reason="attempts_exhausted",
                                     detail=str(step.attempt), at=cmd.now))
            continue
        if _held_elsewhere(state, step, cmd):
            continue
        if not _driver_can_take(step, cmd.caps):
            if cmd.caps.sole:
                skips.append(StepSkipped(step=step.spec.id, reason="tool_unavailable",
                                         detail=step.spec.tool, at=cmd.now))
            continue
        if skips:
            return skips
        return [StepLeased(step=step.spec.id, lease=cmd.lease, driver=cmd.caps.driver,
                           attempt=step.attempt + 1, at=cmd.now, expires_at=cmd.now + cmd.ttl)]
    if skips:
        return skips
    if final and state.open_steps[True] == 0 and not state.leases:
        return [_end(state, cmd.now)]
    return []


def _budget_reached(state: RunState, step: StepState) -> str | None:
    """The step's budget (`25 USD`) when the run's stated spend has reached it: the step is not
    leased; None when it may be."""
    cap = step.spec.budget
    if cap is None or state.spent.get(cap.unit, 0.0) < cap.amount:
        return None
    return f"{cap.amount:g} {cap.unit}"


def _expire(state: RunState, now: datetime) -> list[Event]:
    return [
        LeaseExpired(step=sid, lease=lease, at=now)
        for lease, sid in state.leases.items()
        if (exp := state.steps[sid].expires_at) is not None and exp <= now
    ]


def _stop_pending(state: RunState, now: datetime) -> list[Event]:
    past = state.deadline is not None and now >= state.deadline
    if not (past or state.cancel_requested):
        return []
    reason: Literal["cancelled", "timed_out"] = (
        "cancelled" if state.cancel_requested else "timed_out")
    return [
        StepSkipped(step=s.spec.id, reason=reason, at=now)
        for s in state.unsettled(final=False)
        if s.status == "pending" and (s.spec.kind != "workflow" or s.open_children == 0)
    ]


def _candidates(state: RunState, final: bool) -> list[StepState]:
    out = [state.steps[i] for i in state.loose]
    out = [s for s in out if s.status == "pending" and s.spec.final == final
           and s.spec.kind != "workflow"]
    for lane, ids in state.lanes.items():
        head = state.lane_heads[lane]
        if head < len(ids):
            s = state.steps[ids[head]]
            if s.status == "pending" and s.spec.final == final:
                out.append(s)
    return sorted(out, key=lambda s: s.index)


def _clone_driver(state: RunState, step: StepState) -> StepState | None:
    """The step whose clone a `continue` step works in, when it was prepared and reported."""
    if step.spec.workspace != "continue" or not step.spec.needs:
        return None
    owner = state.steps.get(step.spec.needs[0])
    if owner is None or owner.workspace is None or owner.reported_at is None:
        return None
    return owner


def _last_worked(state: RunState, owner: StepState) -> datetime | None:
    """When a step last reported work in `owner`'s clone: the clone's own step or one that
    continues it (a trial's judge step runs in the clone before its check)."""
    times = [s.reported_at for i in (owner.spec.id, *state.continued_by.get(owner.spec.id, ()))
             if (s := state.steps.get(i)) is not None and s.reported_at is not None]
    return max(times, default=None)


def _held_elsewhere(state: RunState, step: StepState, cmd: LeaseStep) -> bool:
    """A step that continues another driver's clone is that driver's for one lease time after
    the last step working in the clone was reported: the clone is on that driver's machine.
    After that the driver is taken for gone and any driver may take the step (on another
    machine it finds no clone and reports the trial an error)."""
    owner = _clone_driver(state, step)
    if owner is None or owner.driver == cmd.caps.driver:
        return False
    last = _last_worked(state, owner)
    return last is not None and cmd.now < last + cmd.ttl


def _own_first(state: RunState, steps: list[StepState], cmd: LeaseStep) -> list[StepState]:
    """Steps that continue this driver's own clones come first (in their order), so a clone's
    check follows its agent on the machine that holds it."""
    own = [s for s in steps if (o := _clone_driver(state, s)) is not None
           and o.driver == cmd.caps.driver]
    return own + [s for s in steps if s not in own] if own else steps


def _unmet_need(state: RunState, step: StepState) -> str | None:
    for need in step.spec.needs:
        other = state.steps.get(need)
        if other is None:
            return need
        if other.settled and other.status != "succeeded":
            return need
    return None


def _driver_can_take(step: StepState, caps: Caps) -> bool:
    if step.spec.workspace == "clone" and not caps.prepares:
        return False
    if step.spec.kind == "prompt":
        return caps.tools is None or (step.spec.tool or "") in caps.tools
    return caps.runs_commands


def outcome(state: RunState) -> Literal["succeeded", "failed", "timed_out", "cancelled"]:
    """How the run ends (or is ending): what its finally steps are told, and RunEnded says."""
    top = [s for s in state.steps.values() if s.parent is None and not s.spec.final]
    if state.fault is not None:
        return "failed"
    if state.cancel_requested:
        return "cancelled"
    if state.timed_out:
        return "timed_out"
    if any(s.status != "succeeded" for s in top):
        return "failed"
    return "succeeded"


def _end(state: RunState, now: datetime) -> RunEnded:
    end = outcome(state)
    if end == "succeeded" and any(s.status != "succeeded" for s in state.steps.values()
                                  if s.spec.final and s.parent is None):
        end = "failed"  # a finally step (the report) that failed fails the run
    outputs: dict[str, Any] = {}
    for s in state.steps.values():
        if s.spec.final:
            outputs.update(s.outputs)
    return RunEnded(state=end, at=now, outputs=outputs)


def decide_report(state: RunState, cmd: ReportStep) -> list[Event]:
    """Record a leased step's outcome (after the facts the host recorded with it); fill a
    sub-workflow that waited on its output. An attempt that failed for a transient cause, with
    retries left, is handed back instead (`AttemptFailed`): leased again after its backoff.

    Only the lease that holds the step reports it, once; a check's result (`CheckRan`) comes
    only with its own step's report, once per lease.
    """
    step_id = state.leases.get(cmd.lease)
    if step_id is None or step_id != cmd.report.step:
        raise UnknownLease(
            f"Lease {cmd.lease} does not hold step {cmd.report.step!r} in run {state.run}: "
            "it expired and the step went to another driver, or it was never given. "
            "Ask for the next step again."
        )
    _check_facts(state, cmd, step_id)
    retry = _retry(state, state.steps[step_id], cmd)
    if retry is not None:
        return [retry]
    report = cmd.report
    events: list[Event] = list(cmd.facts)
    definition = report.outputs.get("definition") if report.outcome == "succeeded" else None
    if definition is not None:
        report = msgspec.structs.replace(
            report, outputs={k: v for k, v in report.outputs.items() if k != "definition"}
        )
    events.append(report)
    for container in state.filled_by.get(step_id, ()):
        events.append(_fill(state.steps[container], definition, cmd.now))
    return events


def retry_delay(backoff_s: float, retried: int, jitter: float) -> float:
    """Seconds before the next attempt once `retried` attempts were handed back before this
    one: `backoff_s` doubled for each, then put anywhere from 3/4 to 5/4 of that by `jitter` in
    [0, 1), so drivers that failed together do not come back together."""
    return float(backoff_s * 2.0 ** retried * (0.75 + 0.5 * min(max(jitter, 0.0), 1.0)))


def _retry(state: RunState, step: StepState, cmd: ReportStep) -> AttemptFailed | None:
    """The report's attempt handed back for another, when it failed for a transient cause, the
    step has retries left, and the retry could start before the run's deadline."""
    report = cmd.report
    if report.outcome != "error" or not report.transient or step.retried >= step.spec.retries:
        return None
    retry_at = cmd.now + timedelta(seconds=retry_delay(step.spec.retry_backoff_s, step.retried,
                                                       cmd.jitter))
    if state.cancel_requested or (state.deadline is not None and retry_at >= state.deadline):
        return None
    return AttemptFailed(step=report.step, lease=report.lease, attempt=step.retried + 1,
                         cause=report.cause or "transient", message=report.message,
                         exit_code=report.exit_code, signal=report.signal,
                         duration_ms=report.duration_ms, usage=report.usage, agent=report.agent,
                         retry_at=retry_at, at=report.at)


def _check_facts(state: RunState, cmd: ReportStep, step_id: str) -> None:
    checks = [f for f in cmd.facts if isinstance(f, CheckRan)]
    stray = [c.step for c in checks if c.step != step_id]
    if stray:
        raise DomainError(
            f"A check's result for step {stray[0]!r} came with the report of step {step_id!r} "
            f"in run {state.run}: expected only the reported step's own check. Nothing was "
            "recorded.")
    if len(checks) > 1 or (checks and state.steps[step_id].checked == cmd.lease):
        raise DomainError(
            f"Step {step_id!r} of run {state.run} already has a check's result under lease "
            f"{cmd.lease}: expected at most one. Nothing was recorded.")


def _fill(container: StepState, definition: Any, now: datetime) -> Event:
    if definition is None:
        return StepSkipped(step=container.spec.id, reason="needs_unmet",
                           detail=container.spec.from_step, at=now)
    steps = msgspec.convert(definition, list[StepSpec])
    return StepsPlanned(parent=container.spec.id, steps=steps)


def decide_renew(state: RunState, cmd: RenewLease) -> list[Event]:
    """Extend a lease the caller still holds."""
    step_id = state.leases.get(cmd.lease)
    if step_id is None:
        raise UnknownLease(
            f"Lease {cmd.lease} is not held in run {state.run}; it cannot be renewed.")
    return [LeaseRenewed(step=step_id, lease=cmd.lease, expires_at=cmd.expires_at)]


def decide_cancel(state: RunState, cmd: CancelRun) -> list[Event]:
    """Ask the run to stop: pending steps settle not run, finally steps still run. A `fault`
    (what stopped it, when no person did) makes the run end failed, even after a cancel."""
    fault = cmd.fault
    if state.ended is not None or (state.cancel_requested and (fault is None or state.fault)):
        return []
    if fault is not None:
        return [RunCancelRequested(at=cmd.now, by="armbench", fault=fault)]
    return [RunCancelRequested(at=cmd.now)]
