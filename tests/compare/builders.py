"""Given events: a run's plan and how each trial went, as the ledger would hold them.

`run_events(plan, outcome)` gives RunStarted, PlanFrozen, per trial the events its outcome leaves
(`outcome(task, arm, rep)` returns passed, failed, error or not_run), and RunEnded. `record_of`
projects them into the record, as `armbench report` writes it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from armbench.benchmark.records.reporting import project
from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    Cost,
    Event,
    PlanFrozen,
    PlannedArm,
    PlannedTask,
    PlannedTeam,
    PlannedTrial,
    PulledTeam,
    RunEnded,
    RunStarted,
    StepLeased,
    StepReported,
    StepSkipped,
    Usage,
)

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
REVISION = "a" * 40


def arm(name: str, tool: str = "agent", model: str | None = None, *, effort: str | None = None,
        alias: str | None = None, team: PlannedTeam | None = None) -> PlannedArm:
    """A frozen arm; team defaults to the pulled revision."""
    return PlannedArm(name=name, tool=tool, model=model, effort=effort, alias=alias,
                      team=team or PulledTeam(revision=REVISION))


def task(task_id: str, source_hash: str | None = None) -> PlannedTask:
    """A checked task."""
    return PlannedTask(id=task_id, title=task_id, source_hash=source_hash or f"hash-{task_id}",
                       starting_commit="b" * 40, prompt="fix it", check_run="true")


def plan(arms: Sequence[PlannedArm], tasks: Sequence[PlannedTask], reps: int,
         suite: str = "s") -> PlanFrozen:
    """A plan with trials ordered by repetition, task, arm."""
    trials = []
    for rep in range(reps):
        for t in tasks:
            for a in arms:
                base = f"trials.r{rep}.{t.id}.{a.name}"
                trials.append(PlannedTrial(task=t.id, arm=a.name, repetition=rep,
                                           order=len(trials), lane=1, prompt_step=f"{base}.prompt",
                                           check_step=f"{base}.check"))
    return PlanFrozen(suite=suite, suite_hash=f"hash-{suite}", repo="https://example.invalid/p",
                      repetitions=reps, parallel=1, timeout_s=600, baseline_team_revision=REVISION,
                      tasks=list(tasks), arms=list(arms), trials=trials)


def trial_events(trial: PlannedTrial, outcome: str, *, tokens: int = 100,
                 duration_ms: int = 1000, cost: float | None = None) -> list[Event]:
    """The events one trial's outcome leaves in the log."""
    if outcome == "not_run":
        return [StepSkipped(step=trial.prompt_step, reason="needs_unmet", at=AT)]
    usage = Usage(tokens={"input": tokens, "output": 10},
                  cost=Cost(amount=cost, unit="USD") if cost is not None else None)
    if outcome == "error":
        return [StepReported(step=trial.prompt_step, lease="l", outcome="error", cause="exit",
                             at=AT, duration_ms=duration_ms, usage=usage)]
    if outcome == "transient":  # a provider's overload, retried once and again on the last attempt
        return [AttemptFailed(step=trial.prompt_step, lease="l0", attempt=1, cause="overloaded",
                              usage=usage, duration_ms=duration_ms, retry_at=AT, at=AT),
                StepReported(step=trial.prompt_step, lease="l", outcome="error", cause="overloaded",
                             at=AT, duration_ms=duration_ms, usage=usage, transient=True)]
    prompt = StepReported(step=trial.prompt_step, lease="l", outcome="succeeded", at=AT,
                          duration_ms=duration_ms, usage=usage)
    return [prompt, CheckRan(step=trial.check_step, task=trial.task, kind="trial", result=outcome,
                             exit_code=0 if outcome == "passed" else 1)]


def run_events(the_plan: PlanFrozen, outcome: Callable[[str, str, int], str], *,
               run: str = "r1", at: datetime = AT, state: str = "succeeded",
               usage: Callable[[PlannedTrial], dict[str, Any]] | None = None) -> list[Event]:
    """A whole run: started, planned, every trial as `outcome` says, ended."""
    events: list[Event] = [RunStarted(run=run, workflow="armbench-benchmark", source_hash="w",
                                      inputs={"suite": the_plan.suite}, timeout_s=600, at=at,
                                      isolation="bubblewrap"),
                           the_plan]
    for t in the_plan.trials:
        events += trial_events(t, outcome(t.task, t.arm, t.repetition), **(usage(t) if usage else {}))
    events.append(RunEnded(state=state, at=at + timedelta(minutes=5)))  # type: ignore[arg-type]
    return events


def leased(events: list[Event]) -> list[Event]:
    """The same log with a `StepLeased` before each report or check whose step no lease holds,
    as the engine writes it (a real store refuses a report that no lease holds)."""
    held: set[str] = set()
    out: list[Event] = []
    for e in events:
        if isinstance(e, StepReported | AttemptFailed | CheckRan) and e.step not in held:
            out.append(StepLeased(step=e.step, lease=getattr(e, "lease", "l"), driver="test",
                                  at=AT, expires_at=AT + timedelta(minutes=1)))
            held.add(e.step)
        if isinstance(e, StepReported | AttemptFailed):
            held.discard(e.step)
        out.append(e)
    return out


def record_of(events: list[Event], run: str = "r1") -> dict[str, Any]:
    """The record `armbench report` writes for these events, as its JSON's data."""
    return msgspec.to_builtins(project(run, events, None).record)


def all_pass(_task: str, _arm: str, _rep: int) -> str:
    """Every trial passes."""
    return "passed"
