"""Know when to stop: after each repetition round the run's progress says whether each pair's
interval already excludes zero or cannot any more at the planned size. Descriptive only."""

from __future__ import annotations

from compare.builders import AT, arm, plan, run_events, task

from armbench.ledger.events import CheckRan, StepReported
from armbench.projections.progress import Progress, evolve
from armbench.projections.stopping import separations

ARMS = [arm("steady", model="m-steady"), arm("shaky", model="m-shaky")]
TASKS = [task(f"t{i}") for i in range(10)]


def passed(outcome: dict[str, bool], reps: int) -> dict[tuple[str, str, int], bool]:
    return {(t.id, a, r): outcome[a] for t in TASKS for a in outcome for r in range(reps)}


def test_an_interval_that_excludes_zero_after_a_round_is_separated() -> None:
    the_plan = plan(ARMS, TASKS, 3)
    [pair] = separations(the_plan, passed({"steady": True, "shaky": False}, 1), 1)
    assert (pair.key, pair.measured_from, pair.measured_to, pair.pairs) == ("model", "steady",
                                                                            "shaky", 10)
    assert pair.verdict == "separated" and pair.upper < 0


def test_an_interval_the_rest_cannot_move_off_zero_is_cannot() -> None:
    tasks = [task(f"t{i}") for i in range(5)]
    the_plan = plan(ARMS, tasks, 4)

    def balanced(rounds: int) -> dict[tuple[str, str, int], bool]:
        """Each task once steady-only, once shaky-only, once both, over three rounds."""
        return {(t.id, a, r): (i + r) % 3 == 2 or (i + r) % 3 == (0 if a == "steady" else 1)
                for i, t in enumerate(tasks) for a in ("steady", "shaky") for r in range(rounds)}

    [early] = separations(the_plan, balanced(1), 1)
    assert early.verdict == "open"  # 15 pairs left could still go one way
    [late] = separations(the_plan, balanced(3), 3)
    assert late.verdict == "cannot" and late.estimate == 0  # 5 pairs left cannot undo 5 each way


def test_the_progress_notes_each_round_but_the_last_and_never_changes_a_count() -> None:
    the_plan = plan(ARMS, TASKS, 3)
    state = Progress()
    for e in run_events(the_plan, lambda _t, a, _r: "passed" if a == "steady" else "failed"):
        evolve(state, e)
        if isinstance(e, CheckRan):  # the check step's own report ends the trial
            evolve(state, StepReported(step=e.step, lease="l", outcome="succeeded", at=AT))
    assert state.rounds == 3 and len(state.notes) == 2
    assert state.notes[0] == (
        "After repetition 1 of 3, model: shaky against steady, 10 paired trials: -100 points "
        f"(95% interval {state.notes[0].split('interval ')[1].split(')')[0]}): the interval "
        "already excludes zero. Descriptive only: the run goes on to its planned size.")
    assert state.passed == {"steady": 30, "shaky": 0}
