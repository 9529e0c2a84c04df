"""Given a run's events, then its progress text: the pure fold and both renderings, and the
watcher's plain mode writing to something that is not a terminal."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

from test_results_projection import AT, plan, started

from armbench.cli.live import Live, mode_for
from armbench.ledger.events import CheckRan, StepLeased, StepReported, StepSkipped
from armbench.ledger.store import EventStore
from armbench.projections.progress import Progress, evolve, is_step_line, live_lines, plain_line


def fold(*events) -> Progress:
    state = Progress()
    for e in (started(), plan(trials=2, arms=("a", "b")), *events):
        evolve(state, e)
    return state


def lease(step: str, at_s: float = 0) -> StepLeased:
    at = AT + timedelta(seconds=at_s)
    return StepLeased(step=step, lease="l", driver="local", at=at, expires_at=at + timedelta(minutes=1))


def done(step: str, at_s: float) -> StepReported:
    return StepReported(step=step, lease="l", outcome="succeeded", at=AT + timedelta(seconds=at_s))


def trial(r: int, arm: str, start: float, end: float, result: str) -> list:
    p, c = f"trials.r{r}.t.{arm}.prompt", f"trials.r{r}.t.{arm}.check"
    return [lease(p, start), done(p, end - 1), lease(c, end - 1),
            CheckRan(step=c, task="t", kind="trial", result=result), done(c, end)]


def test_given_no_trial_yet_then_nothing_is_estimated() -> None:
    state = fold()
    assert plain_line(state, AT + timedelta(seconds=5)) == (
        "Run r1: 0/4 trials done; passed so far: a 0, b 0; 0:05 elapsed, the rest: not known "
        "until a trial ends.")


def test_given_trials_done_then_passes_per_arm_and_the_median_estimate() -> None:
    state = fold(*trial(0, "a", 0, 10, "passed"), *trial(0, "b", 10, 40, "failed"),
                 *trial(1, "a", 40, 60, "passed"), lease("trials.r1.t.b.prompt", 60))
    # median of 10, 30 and 20 s is 20 s; one trial left on one lane
    assert plain_line(state, AT + timedelta(seconds=65)) == (
        "Run r1: 3/4 trials done; passed so far: a 2, b 0; 1:05 elapsed, about 0:20 left.")
    assert live_lines(state, AT + timedelta(seconds=65))[1:] == [
        "  lane 1: t on b (r1): running the agent"]


def test_given_a_skipped_trial_then_it_is_done_and_not_timed() -> None:
    state = fold(StepSkipped(step="trials.r0.t.a.prompt", reason="needs_unmet", at=AT),
                 StepSkipped(step="trials.r0.t.a.check", reason="needs_unmet", at=AT))
    assert state.done == 1 and state.durations_s == []


def test_a_step_line_is_told_from_any_other_message() -> None:
    state = fold()
    assert is_step_line(state, "trials.r0.t.a.prompt: running")
    assert is_step_line(state, "trials.r0.t.a: check passed")
    assert not is_step_line(state, "Task t: trying the check at abc1234")


def test_a_tools_control_characters_never_reach_the_terminal() -> None:
    state = fold(lease("trials.r0.t.a.prompt"))
    state.lanes[1] = "t\x1b[2J on a"
    assert "\x1b" not in "".join(live_lines(state, AT))


def test_off_a_terminal_the_watcher_writes_plain_lines_and_keeps_other_messages(
        tmp_path: Path) -> None:
    store = EventStore(tmp_path / "ledger.db")
    store.append("r1", [started(), plan(trials=2, arms=("a", "b")),
                        *trial(0, "a", 0, 10, "passed")], expected_version=0)
    out = io.StringIO()
    assert mode_for(out, quiet=False) == "plain" and mode_for(out, quiet=True) == "quiet"
    live = Live(store, lambda: AT + timedelta(seconds=12), "plain", stream=out)
    live.watch("r1")
    live.say("trials.r0.t.a.prompt: running")
    live.say("Task t: trying the check at abc1234")
    live.stop()
    text = out.getvalue()
    assert "\x1b" not in text
    assert text.splitlines() == [
        "Task t: trying the check at abc1234",
        "Run r1: 1/4 trials done; passed so far: a 1, b 0; 0:12 elapsed, about 0:30 left."]


def test_quiet_shows_no_progress_and_no_step_lines(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "ledger.db")
    store.append("r1", [started(), plan()], expected_version=0)
    out = io.StringIO()
    live = Live(store, lambda: AT, "quiet", stream=out)
    live.watch("r1")
    live.say("trials.r0.t.a.prompt: running")
    live.say("Task t: trying the check at abc1234")
    live.stop()
    assert out.getvalue() == "Task t: trying the check at abc1234\n"
