"""Logs the engine could write: the real pure decider, driven by a driver's generated choices.

`simulate(choose)` asks `choose(options)` at every turn (hypothesis's `data.draw` or a seeded
`random.choice`) what the driver does next: ask for a step, report one it holds (any outcome),
renew, die holding it, let time pass (leases lapse, the deadline passes) or cancel. The plan
step adds the PlanFrozen a host would, and check steps the CheckRan. Every event comes from
`decide_next` / `decide_report` / `decide_renew` / `decide_cancel`, so no impossible order is
ever written by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import msgspec

from armbench.aggregates.workflow import (
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
from armbench.benchmark.run import DEFAULT_WORKFLOW
from armbench.ledger.errors import DomainError
from armbench.ledger.events import (
    Agent,
    CheckRan,
    Cost,
    Event,
    PlanFrozen,
    PlannedArm,
    PlannedTask,
    PlannedTrial,
    PulledTeam,
    RecordWritten,
    RunStarted,
    StepLeased,
    StepReported,
    StepsPlanned,
    Usage,
    WorkspacePrepared,
)
from armbench.suites.plan import trial_steps

__all__ = ["RUN", "Choose", "make_plan", "simulate"]

T = TypeVar("T")
Choose = Callable[[Sequence[Any]], Any]
RUN = "rsim"
TTL = timedelta(seconds=30)
START = datetime(2026, 1, 1, tzinfo=UTC)
ACTIONS = ("next", "next", "next", "report", "report", "renew", "die", "wait", "cancel")


def make_plan(choose: Choose) -> PlanFrozen:
    """A small plan: 1-3 tasks (some judged, without a check), 1-3 arms, 1-2 repetitions."""
    tasks = [PlannedTask(id=f"t{i}", title=f"task {i}", source_hash="h" * 64,
                         starting_commit=f"{i}" * 40, prompt=f"do t{i}",
                         check_run=choose(["check", "check", "check", None]), protect=["tests/**"])
             for i in range(choose([1, 2, 3]))]
    arms = [PlannedArm(name=f"a{i}", tool=choose(["tool", "tool", "ghost"]), model=f"m{i}",
                       team=PulledTeam(revision="r" * 40))
            for i in range(choose([1, 2, 3]))]
    reps, lanes = choose([1, 2]), choose([1, 2, 3])
    trials: list[PlannedTrial] = []
    for rep in range(reps):
        for task in tasks:
            for arm in [*arms[rep % len(arms):], *arms[:rep % len(arms)]]:
                lane = len(trials) % lanes + 1
                base = f"trials.{'' if lanes == 1 else f'lane{lane}.'}r{rep}.{task.id}.{arm.name}"
                trials.append(PlannedTrial(
                    task=task.id, arm=arm.name, repetition=rep, order=len(trials), lane=lane,
                    prompt_step=f"{base}.prompt",
                    check_step=f"{base}.check" if task.check_run else ""))
    return PlanFrozen(suite="sim", suite_hash="s" * 64, repo="https://example.invalid/sim",
                      repetitions=reps, parallel=lanes, timeout_s=3600,
                      baseline_team_revision="r" * 40, tasks=tasks, arms=arms, trials=trials,
                      trial_retries=choose([0, 1, 2]), trial_retry_backoff_s=choose([5, 30]))


class _Sim:
    """One run, its events so far, and the leases the simulated driver holds."""

    def __init__(self, choose: Choose) -> None:
        self.choose = choose
        self.state: RunState = initial_state()
        self.events: list[Event] = []
        self.now = START
        self.held: list[str] = []
        self.ids = 0
        timeout = choose([3600, 3600, 3600, 240])
        self.apply([RunStarted(run=RUN, workflow=DEFAULT_WORKFLOW.name,
                               source_hash=DEFAULT_WORKFLOW.source_hash(), timeout_s=timeout,
                               inputs={"suite": "sim"}, at=self.now, sandbox=True),
                    StepsPlanned(parent=None, steps=DEFAULT_WORKFLOW.steps)])

    def apply(self, events: list[Event]) -> None:
        for e in events:
            evolve(self.state, e)
        self.events.extend(events)

    def tick(self, seconds: float = 1.0) -> None:
        self.now += timedelta(seconds=seconds)

    def next(self) -> None:
        self.ids += 1
        cmd = LeaseStep(caps=Caps(driver="sim", tools=frozenset({"tool"})), lease=f"l{self.ids}",
                        now=self.now, ttl=TTL)
        events = decide_next(self.state, cmd)
        self.apply(events)
        if events and isinstance(events[-1], StepLeased):
            self.leased(events[-1])

    def leased(self, e: StepLeased) -> None:
        spec = self.state.steps[e.step].spec
        if spec.kind == "prompt":
            if self.choose([True, True, True, False]):
                self.apply([WorkspacePrepared(step=e.step, lease=e.lease, path=f"/w/{e.lease}",
                                              commit="c" * 40, duration_ms=5)])
                self.held.append(e.lease)
            else:
                self.report(e.lease, StepReported(step=e.step, lease=e.lease, at=self.now,
                                                  outcome="error", cause="prepare_failed"))
            return
        if self.choose([True] * 5 + [False]):  # the host runs it; or its driver dies mid-step
            self.host_step(e.step, e.lease)

    def host_step(self, step: str, lease: str) -> None:
        self.tick(2)
        spec = self.state.steps[step].spec
        extra: list[Event] = []
        outputs: dict[str, Any] = {}
        outcome = "succeeded"
        if step == "plan":
            plan = make_plan(self.choose)
            extra = [plan]
            outputs = {"definition": msgspec.to_builtins(trial_steps(plan))}
        elif step == "report":
            extra = [RecordWritten(sha256="0" * 64, at=self.now)]
        elif spec.tags.get("task"):
            kind = "baseline" if step.startswith("trials.baselines.") else "trial"
            result = self.choose(["passed", "failed", "failed", "could_not_run"])
            check = CheckRan(step=step, task=spec.tags["task"], kind=kind, result=result,
                             exit_code={"passed": 0, "failed": 1}.get(result),
                             cause="timeout" if result == "could_not_run" else None,
                             duration_ms=self.choose([10, 20, 30]))
            extra = [check]
            ok = result == "failed" if kind == "baseline" else result != "could_not_run"
            outcome = "succeeded" if ok else ("failed" if kind == "baseline" else "error")
            said = {"cause": check.cause or result} if kind == "baseline" else {
                "cause": check.cause, "exit_code": check.exit_code}  # as benchmark.host says it
            outputs = {**outputs, **said, "duration_ms": check.duration_ms}
        fields = {k: outputs.pop(k) for k in ("cause", "exit_code", "duration_ms") if k in outputs}
        report = StepReported(step=step, lease=lease, at=self.now, outcome=outcome,
                              outputs=outputs, **fields)
        self.report(lease, report, extra)

    def report(self, lease: str, report: StepReported, extra: Sequence[Event] = ()) -> None:
        try:
            events = decide_report(self.state, ReportStep(lease=lease, now=self.now, report=report,
                                                          facts=tuple(extra),
                                                          jitter=self.choose([0.0, 0.5, 0.99])))
        except DomainError:  # the lease lapsed and went elsewhere: the driver is told no
            return
        self.apply(events)

    def report_held(self) -> None:
        lease = self.choose(self.held)
        self.held.remove(lease)
        step = self.state.leases.get(lease, "gone")
        outcome = self.choose(["succeeded", "succeeded", "error", "failed"])
        transient = outcome == "error" and self.choose([False, True])  # a provider's failure
        tokens = self.choose([{}, {"input": 10, "output": 5}, {"input": 7}])
        cost = self.choose([None, Cost(amount=0.25, unit="USD")])
        self.tick(self.choose([1, 5, 40]))
        self.report(lease, StepReported(
            step=step, lease=lease, at=self.now, outcome=outcome,
            cause="ok" if outcome == "succeeded" else "overloaded" if transient else
            self.choose(["exit", "timeout", "signal"]), transient=transient,
            limit=self.choose([None, None, "timeout"]), duration_ms=self.choose([None, 100, 900]),
            usage=Usage(tokens=tokens, cost=cost, verified=self.choose([True, True, False])),
            agent=Agent(tool=self.choose(["tool", "other"]), model_requested="m0",
                        model_reported=self.choose([None, "m0", "m-9"]),
                        team_revision=self.choose(["r" * 40, "x" * 40]))))

    def turn(self) -> None:
        action = self.choose(ACTIONS)
        if action == "next":
            self.next()
        elif action in ("report", "renew", "die") and self.held:
            if action == "report":
                self.report_held()
            elif action == "renew":
                lease = self.choose(self.held)
                try:
                    self.apply(decide_renew(self.state, RenewLease(lease=lease, expires_at=self.now + TTL)))
                except DomainError:
                    self.held.remove(lease)
            else:
                self.held.remove(self.choose(self.held))
        elif action == "wait":
            self.tick(self.choose([1, 31, 300]))
        elif action == "cancel" and self.choose([False] * 19 + [True]):
            self.apply(decide_cancel(self.state, CancelRun(now=self.now)))

    def finish(self) -> None:
        """Report what is held, let lapsed leases expire, until the run ends."""
        for _ in range(10_000):
            if self.state.ended is not None:
                return
            if self.held:
                self.report_held()
                continue
            before = len(self.events)
            self.next()
            if len(self.events) == before:
                self.tick(31)
        raise AssertionError("the simulated run never ended")


def simulate(choose: Choose, *, turns: int = 60) -> list[Event]:
    """A whole run's log: `turns` generated driver choices, then driven to its end."""
    sim = _Sim(choose)
    for _ in range(turns):
        if sim.state.ended is not None:
            break
        sim.turn()
    sim.finish()
    return sim.events
