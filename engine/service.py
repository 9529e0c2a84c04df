"""The workflow engine: start, next and report over the ledger. It schedules; the host acts."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import random
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, Literal

import msgspec

from armbench.aggregates.workflow import (
    MAX_ATTEMPTS,
    CancelRun,
    Caps,
    LeaseStep,
    RenewLease,
    ReportStep,
    RunState,
    decide_cancel,
    decide_next,
    decide_renew,
    decide_report,
    evolve,
    initial_state,
)
from armbench.aggregates.workflow import outcome as outcome_of
from armbench.engine import snapshots
from armbench.engine.protocol import (
    FAULTS,
    Done,
    Host,
    HostOutcome,
    Lease,
    Prepared,
    Report,
    Wait,
    fault_report,
    host_error_report,
)
from armbench.ledger.collector import collector_paused
from armbench.ledger.errors import ConcurrencyConflict, DomainError, LedgerError, UnknownLease
from armbench.ledger.events import (
    Event,
    LeaseExpired,
    RunEnded,
    RunStarted,
    StepLeased,
    StepReported,
    StepSpec,
    StepsPlanned,
    WorkspacePrepared,
    escaped,
)
from armbench.ledger.store import EventStore

__all__ = ["Engine", "Workflow"]

_RETRIES = 50
_DROPPED = -1


class Workflow(msgspec.Struct, frozen=True, kw_only=True):
    """A workflow definition: named steps, some of them `finally`."""

    name: str
    steps: list[StepSpec]
    origin: str = "default"

    def source_hash(self) -> str:
        """sha256 of the definition."""
        return hashlib.sha256(msgspec.json.encode(self)).hexdigest()


class Engine:
    """Runs workflows whose whole state is the run's stream in the ledger."""

    def __init__(self, store: EventStore, host: Host, *, clock: Callable[[], datetime],
                 new_id: Callable[[str], str], ttl: timedelta = timedelta(seconds=60),
                 snapshot_every: int = snapshots.EVERY, max_attempts: int = MAX_ATTEMPTS,
                 jitter: Callable[[], float] = random.random) -> None:
        """`jitter` draws where in its window a transient failure's retry falls (in [0, 1))."""
        self.store, self.host, self.clock, self.new_id, self.ttl = store, host, clock, new_id, ttl
        self.jitter = jitter
        self.snapshot_every, self.max_attempts = snapshot_every, max_attempts
        self._states: dict[str, RunState] = {}
        self._snapshot_at: dict[str, int] = {}
        self._lock = threading.RLock()

    # ---------------------------------------------------------------- reading

    def state(self, run: str) -> RunState:
        """The run's state, caught up with the ledger (from its snapshot, in a fresh process)."""
        with self._lock:
            state = self._states.get(run)
            if state is None:
                state = self._states[run] = self._restore(run)
            with collector_paused():
                for rec in self.store.read(run, after=state.version):
                    evolve(state, rec.event)
            return state

    def _restore(self, run: str) -> RunState:
        data = self.store.snapshot(run, snapshots.snapshot_format())
        with collector_paused():
            state = snapshots.decode_state(data) if data is not None else None
        if state is None:
            return initial_state()
        self._snapshot_at[run] = state.version
        return state

    def _append(self, run: str, events: list[Event]) -> RunState:
        state = self._states[run]
        self.store.append(run, events, expected_version=state.version)
        for e in events:
            evolve(state, e)
        self._keep_snapshot(run, state)
        return state

    def _keep_snapshot(self, run: str, state: RunState) -> None:
        """A snapshot every `snapshot_every` events while the run goes on; none once it ended."""
        last = self._snapshot_at.get(run, 0)
        if state.ended is not None:
            if last != _DROPPED:  # whichever process wrote it, the run needs it no more
                self.store.drop_snapshot(run)
                self._snapshot_at[run] = _DROPPED
        elif state.version - last >= self.snapshot_every and self.store.save_snapshot(
                run, state.version, snapshots.snapshot_format(), snapshots.encode_state(state)):
            self._snapshot_at[run] = state.version

    def _decide(self, run: str, decide: Callable[[RunState], list[Event]]) -> list[Event]:
        for _ in range(_RETRIES):
            with self._lock:
                state = self.state(run)
                events = [escaped(e) for e in decide(state)]  # a name that is not UTF-8 included
                try:
                    self._append(run, events)
                    return events
                except ConcurrencyConflict:
                    continue
        raise ConcurrencyConflict(f"Run {run} kept changing under this process; try again.")

    # ---------------------------------------------------------------- commands

    def start(self, workflow: Workflow, *, inputs: dict[str, str], timeout_s: int,
              sandbox: bool, run: str | None = None,
              isolation: Literal["bubblewrap", "declared"] = "declared",
              shared: list[str] | None = None, enforced: bool = True) -> str:
        """Start a run of the workflow; returns its id (`enforced`: False for a best-effort run)."""
        run = run or self.new_id("r")
        started = RunStarted(run=run, workflow=workflow.name, origin=workflow.origin,  # type: ignore[arg-type]
                             source_hash=workflow.source_hash(), inputs=inputs,
                             timeout_s=timeout_s, at=self.clock(), sandbox=sandbox,
                             isolation=isolation, shared=shared or [], enforced=enforced)
        with self._lock:
            self._states[run] = initial_state()
            self._append(run, [started, StepsPlanned(parent=None, steps=workflow.steps)])
        return run

    def next(self, run: str, caps: Caps, *, prepare: bool = True,
             host_steps: int | None = None) -> Lease | Done | Wait:
        """Lease the driver its next step; host steps run here and are reported here (after
        `host_steps` of them, if given, this returns a Wait rather than go on)."""
        if prepare:  # a driver that asks for preparation gets the host's own steps run for it
            caps = dataclasses.replace(caps, runs_commands=True)
        caps = dataclasses.replace(caps, prepares=prepare)
        ran = 0
        while host_steps is None or ran < host_steps:
            events = self._decide(run, functools.partial(self._next_events, caps,
                                                         self.new_id("l")))
            if not events:
                state = self.state(run)
                ended = state.ended
                if ended:
                    return Done(state=ended.state, outputs=ended.outputs)
                return Wait(retry_after_s=_wait_for_retry(state, self.clock()))
            self._release_expired(run, events)
            last = events[-1]
            if isinstance(last, RunEnded):
                self.host.finished(run)
                return Done(state=last.state, outputs=last.outputs)
            if isinstance(last, StepLeased):
                lease = self._work(run, last, prepare)
                if lease is not None:
                    return lease
                ran += 1
        return Wait(retry_after_s=0.0)

    def lease_holder(self, run: str, lease: str) -> str:
        """The step a lease holds, or UnknownLease (it lapsed, or was never given)."""
        state = self.state(run)
        step = state.leases.get(lease)
        if step is None:
            raise UnknownLease(
                f"Lease {lease} holds no step of run {run}: it expired and the step went back "
                "to pending (or to another driver), or it was never given. Ask for the next "
                "step again.")
        return step

    def lease_of(self, run: str, lease: str) -> Lease:
        """A held lease as the engine knows it (its step, cwd and limits; not what the host
        added at preparation), for a process other than the one that leased it."""
        state = self.state(run)
        step = state.steps[self.lease_holder(run, lease)]
        workspace = step.workspace if step.spec.workspace == "clone" else \
            self._continued_workspace(state, step.spec)
        leased = StepLeased(step=step.spec.id, lease=lease, driver="", attempt=step.attempt,
                            at=self.clock(), expires_at=step.expires_at or self.clock())
        return self._lease(run, step.spec, leased, None, workspace)

    def execute_leased(self, run: str, lease: str) -> Report:
        """Run a leased host step (`armbench check`, `armbench report` run by a driver) and
        report it under that lease."""
        state = self.state(run)
        spec = state.steps[self.lease_holder(run, lease)].spec
        if not self.host.runs_itself(spec):
            raise DomainError(f"Step {spec.id!r} of run {run} is not one armbench runs itself; "
                              "launch it as its lease says and report it.")
        workspace = self._continued_workspace(state, spec)
        with self.renewing(run, lease):
            outcome: HostOutcome = self._host_step(spec, lambda: self.host.execute(
                run, spec, workspace=workspace, run_state=outcome_of(self.state(run))))
        self._report(run, lease, spec.id, outcome.report, outcome.events)
        return outcome.report

    def _next_events(self, caps: Caps, lease: str, state: RunState) -> list[Event]:
        return decide_next(state, LeaseStep(caps=caps, lease=lease, now=self.clock(),
                                            ttl=self.ttl, max_attempts=self.max_attempts))

    def _release_expired(self, run: str, events: list[Event]) -> None:
        """A lapsed lease's clone is left behind by a driver that is gone: remove it."""
        state = self.state(run)
        for e in events:
            if isinstance(e, LeaseExpired):
                step = state.steps[e.step]
                own = step.workspace if step.spec.workspace == "clone" else None
                self.host.abandoned(run, e.lease, own)

    def _work(self, run: str, leased: StepLeased, prepare: bool) -> Lease | None:
        state = self.state(run)
        spec = state.steps[leased.step].spec
        workspace = self._continued_workspace(state, spec)
        if self.host.runs_itself(spec):
            with self.renewing(run, leased.lease):
                outcome = self._host_step(spec, lambda: self.host.execute(
                    run, spec, workspace=workspace, run_state=outcome_of(self.state(run))))
            self._report(run, leased.lease, spec.id, outcome.report, outcome.events)
            return None
        prepared: Prepared | None = None
        if spec.workspace == "clone" and prepare:
            with self.renewing(run, leased.lease):
                got = self._host_step(spec, lambda: self.host.prepare(run, spec, leased.lease))
            if isinstance(got, HostOutcome):
                self._report(run, leased.lease, spec.id, got.report, got.events)
                return None
            prepared = got
            self._decide(run, lambda s: [WorkspacePrepared(
                step=spec.id, lease=leased.lease, path=got.path, commit=got.commit,
                duration_ms=got.duration_ms, prepared_tree=got.prepared_tree,
                prepared_origin=got.prepared_origin, preparation=got.preparation)])
        return self._lease(run, spec, leased, prepared, workspace)

    @staticmethod
    def _host_step(spec: StepSpec, call: Callable[[], Any]) -> Any:
        """The host's work on a step; an OSError (a full disk, a clone gone) settles the step as
        an error with its cause, and any other exception of the host's (a trial left a shape it
        did not foresee) as an error with cause `host_error`, instead of leaving it leased for
        ever and the run `running`. The ledger's own errors still stop the driver."""
        try:
            return call()
        except OSError as exc:
            return HostOutcome(report=fault_report(exc, f"step {spec.id}"))
        except LedgerError:
            raise
        except Exception as exc:  # the step settles; the run goes on
            return HostOutcome(report=host_error_report(exc, f"step {spec.id}"))

    def _lease(self, run: str, spec: StepSpec, leased: StepLeased, prepared: Prepared | None,
               workspace: str | None) -> Lease:
        deadline = self.state(run).deadline
        left = (deadline - self.clock()).total_seconds() if deadline else None
        limits = [x for x in (spec.timeout_s, left) if x is not None]
        return Lease(
            run=run, step=spec.id, lease=leased.lease, kind=spec.kind,  # type: ignore[arg-type]
            command=spec.command, tool=spec.tool, model=spec.model, effort=spec.effort,
            prompt=spec.prompt, cwd=prepared.path if prepared else workspace,
            env={**spec.env, **(prepared.env if prepared else {}),
                 "ARMBENCH_WORKFLOW_ATTEMPT": str(leased.attempt)},
            withhold=list(prepared.withhold) if prepared else [],
            timeout_s=max(0.0, min(limits)) if limits else None, limit_s=spec.timeout_s,
            max_turns=spec.max_turns, max_tokens=spec.max_tokens, max_cost=spec.max_cost,
            network=spec.network or "host",
            egress=["*"] if spec.egress is None else list(spec.egress),
            expires_at=leased.expires_at, tags=spec.tags,
            context=dict(prepared.context) if prepared else {},
        )

    @staticmethod
    def _continued_workspace(state: RunState, spec: StepSpec) -> str | None:
        if spec.workspace != "continue" or not spec.needs:
            return None
        return state.steps[spec.needs[0]].workspace

    def report(self, run: str, lease: str, step: str, report: Report) -> None:
        """Record a driver's report of a leased step."""
        self._report(run, lease, step, report, [])

    def _report(self, run: str, lease: str, step: str, report: Report,
                extra: list[Any]) -> None:
        reported = StepReported(step=step, lease=lease, at=self.clock(),
                                **msgspec.structs.asdict(report))
        jitter = self.jitter()
        self._decide(run, lambda s: decide_report(
            s, ReportStep(lease=lease, now=self.clock(), report=reported, facts=tuple(extra),
                          jitter=jitter)))
        state = self.state(run)
        if report.cause in FAULTS:
            self.cancel(run, fault=report.cause)
        owner = self._workspace_owner(state, step)
        ws = state.steps[owner].workspace if owner else None
        if owner and ws and (report.outcome != "succeeded" or not state.continued(owner)):
            self.host.release(run, ws)

    @staticmethod
    def _workspace_owner(state: RunState, step: str) -> str | None:
        """The step whose clone this step works in: its own, or the one it continues. The clone
        goes only once the last step in it is reported, so a driver killed before that report
        leaves the clone for the step to run again in."""
        spec = state.steps[step].spec
        if spec.workspace == "continue" and spec.needs:
            return spec.needs[0]
        return step if spec.workspace == "clone" else None

    def renew(self, run: str, lease: str) -> None:
        """Extend a held lease by the engine's time to live."""
        self._decide(run, lambda s: decide_renew(
            s, RenewLease(lease=lease, expires_at=self.clock() + self.ttl)))

    def cancel(self, run: str, fault: str | None = None) -> None:
        """Ask the run to stop (a `fault`, when one stopped it, makes it end failed); its finally
        steps still run, and the host stops the processes of its own steps now."""
        self._decide(run, lambda s: decide_cancel(s, CancelRun(now=self.clock(), fault=fault)))
        self.host.cancel(run)

    def renewing(self, run: str, lease: str) -> _Renewer:
        """While the `with` block runs, the lease is renewed every third of its time to live."""
        return _Renewer(lambda: self.renew(run, lease), self.ttl.total_seconds() / 3)


def _wait_for_retry(state: RunState, now: datetime) -> float:
    """How long a driver with nothing to do waits before asking again: the usual moment, or,
    while a step waits out a transient failure's backoff, until the first such step is due (at
    most a second, so a step another driver settles meanwhile is not kept waiting long)."""
    due = [s.not_before for s in state.steps.values()
           if s.status == "pending" and s.not_before is not None and s.not_before > now]
    if not due:
        return Wait().retry_after_s
    return min(max((min(due) - now).total_seconds(), Wait().retry_after_s), 1.0)


class _Renewer:
    """Renews a lease in the background while a long step runs."""

    def __init__(self, renew: Callable[[], None], every: float) -> None:
        self._renew, self._every = renew, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self._renew()
            except DomainError:
                return

    def __enter__(self) -> _Renewer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
