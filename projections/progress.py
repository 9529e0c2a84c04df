"""A run's progress while it works, folded from its log, and the text that shows it. Pure.

`evolve` takes the run's events in order (a watcher feeds it the new ones as they are appended);
`live_lines` is the terminal's block (redrawn in place), `plain_line` the one line a log gets.
Time comes in as `now`; the estimate of the rest is the median trial so far times the trials
left, over the lanes.
"""

from __future__ import annotations

import statistics
from datetime import datetime

import msgspec

from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    Event,
    PlanFrozen,
    RunStarted,
    StepLeased,
    StepReported,
    StepSkipped,
)
from armbench.projections.stopping import round_notes
from armbench.projections.text import plain

__all__ = ["Progress", "evolve", "is_step_line", "live_lines", "plain_line"]


class _Trial(msgspec.Struct, frozen=True):
    task: str
    arm: str
    repetition: int
    lane: int
    prompt: bool
    """The prompt step (else the check step)."""


class Progress(msgspec.Struct, kw_only=True):
    """What a run has done so far."""

    run: str = ""
    started: datetime | None = None
    planned: int = 0
    done: int = 0
    arms: list[str] = []
    passed: dict[str, int] = {}
    durations_s: list[float] = []
    lanes: dict[int, str] = {}
    steps: dict[str, _Trial] = {}
    leased_at: dict[tuple[str, str, int], datetime] = {}
    finished: set[tuple[str, str, int]] = set()
    plan: PlanFrozen | None = None
    outcomes: dict[tuple[str, str, int], bool] = {}
    """Each trial that ended: whether its check passed."""
    notes: list[str] = []
    """After each repetition round, whether each pair's interval already excludes zero or cannot
    any more at the planned size (`projections.stopping`); descriptive only."""
    rounds: int = 0
    """Repetition rounds every trial of which has ended."""


def evolve(state: Progress, event: Event) -> Progress:
    """The state after one more event (the state is updated in place and returned)."""
    if isinstance(event, RunStarted):
        state.run, state.started = event.run, event.at
    elif isinstance(event, PlanFrozen):
        state.planned, state.arms = len(event.trials), [a.name for a in event.arms]
        state.plan = event
        state.passed = {a: 0 for a in state.arms}
        for p in event.trials:
            state.steps[p.prompt_step] = _Trial(p.task, p.arm, p.repetition, p.lane, True)
            state.steps[p.check_step] = _Trial(p.task, p.arm, p.repetition, p.lane, False)
            state.lanes.setdefault(p.lane, "waiting")
    elif isinstance(event, StepLeased) and event.step in state.steps:
        t = state.steps[event.step]
        doing = "running the agent" if t.prompt else "running the check"
        state.lanes[t.lane] = f"{t.task} on {t.arm} (r{t.repetition}): {doing}"
        if t.prompt:
            state.leased_at[(t.task, t.arm, t.repetition)] = event.at
    elif isinstance(event, AttemptFailed) and event.step in state.steps:
        t = state.steps[event.step]
        state.lanes[t.lane] = (f"{t.task} on {t.arm} (r{t.repetition}): waiting to retry "
                               f"({event.cause})")
    elif isinstance(event, CheckRan) and event.kind == "trial" and event.step in state.steps:
        t = state.steps[event.step]
        state.passed[t.arm] = state.passed.get(t.arm, 0) + (event.result == "passed")
        state.outcomes[(t.task, t.arm, t.repetition)] = event.result == "passed"
    elif isinstance(event, StepReported | StepSkipped) and event.step in state.steps:
        t = state.steps[event.step]
        if t.prompt and not isinstance(event, StepSkipped):
            return state
        key = (t.task, t.arm, t.repetition)
        if key not in state.finished:
            state.finished.add(key)
            state.done += 1
            state.lanes[t.lane] = "between trials"
            started = state.leased_at.get(key)
            if isinstance(event, StepReported) and started is not None:
                state.durations_s.append((event.at - started).total_seconds())
            _round_ended(state)
    return state


def _round_ended(state: Progress) -> None:
    """Note each repetition round whose every trial has ended, in order."""
    plan = state.plan
    if plan is None or len(plan.arms) < 2:
        return
    per_round = len(plan.tasks) * len(plan.arms)
    while state.rounds < plan.repetitions and sum(
            1 for (_, _, rep) in state.finished if rep == state.rounds) >= per_round:
        state.rounds += 1
        if state.rounds < plan.repetitions:  # the last round is the table's
            state.notes += round_notes(plan, state.outcomes, state.rounds)


def is_step_line(state: Progress, message: str) -> bool:
    """Whether a progress message is about one of the run's trial steps (`<step>: ...`, a check
    named without its `.check`), which the display shows instead."""
    subject = message.split(":", 1)[0].strip()
    return subject in state.steps or f"{subject}.check" in state.steps


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _rest(state: Progress) -> str:
    if not state.durations_s:
        return "the rest: not known until a trial ends"
    left = state.planned - state.done
    lanes = max(1, len(state.lanes))
    return f"about {_clock(statistics.median(state.durations_s) * left / lanes)} left"


def plain_line(state: Progress, now: datetime) -> str:
    """One line: trials done of planned, passes so far per arm, elapsed time and the rest."""
    elapsed = (now - state.started).total_seconds() if state.started else 0.0
    passes = ", ".join(f"{arm} {state.passed.get(arm, 0)}" for arm in state.arms) or "none yet"
    return plain(f"Run {state.run}: {state.done}/{state.planned} trials done; passed so far: "
                 f"{passes}; {_clock(elapsed)} elapsed, {_rest(state)}.")


def live_lines(state: Progress, now: datetime) -> list[str]:
    """The terminal's block: the plain line, then what each lane is doing."""
    return [plain_line(state, now),
            *(plain(f"  lane {lane}: {doing}") for lane, doing in sorted(state.lanes.items()))]
