"""A frozen team as the plan, the record and the Team column carry it. Pure."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from armbench.ledger.errors import Refusal
from armbench.ledger.events import (
    Agent,
    CheckRan,
    NoTeam,
    PlanFrozen,
    PlannedArm,
    PlannedTask,
    PlannedTrial,
    PulledTeam,
    RefTeam,
    RunStarted,
    StepReported,
    WithoutTeam,
)
from armbench.projections.record import record_team
from armbench.projections.results import fold_run
from armbench.projections.table import build_table, team_label
from armbench.suites.arms import resolve_arms
from armbench.suites.model import Arm, ArmValues, Suite, TeamWithout
from armbench.suites.plan import PlanInput, frozen_team

MAIN, BRANCH, MADE = "3f9c2ab" + "0" * 33, "81d0e4c" + "1" * 33, "c" * 40
WITHOUT = WithoutTeam(paths=["skills/release"], revision=MAIN, commit=MADE)


def test_the_team_column_reads_as_the_spec_shows_it() -> None:
    assert team_label(PulledTeam(revision=MAIN)) == "pulled 3f9c2ab"
    assert team_label(RefTeam(ref="bench/no-skill", revision=BRANCH)) == (
        "bench/no-skill 81d0e4c")
    assert team_label(WITHOUT) == "3f9c2ab without skills/release"
    assert team_label(NoTeam()) == "none"


def test_the_record_carries_the_team_as_written_and_not_the_plans_own_commit() -> None:
    assert msgspec.to_builtins(record_team(WITHOUT)) == {
        "kind": "without", "paths": ["skills/release"], "revision": MAIN}
    assert msgspec.to_builtins(record_team(NoTeam())) == {"kind": "none"}


def test_plan_freezes_pulled_and_none_itself_and_refuses_an_unresolved_ref() -> None:
    suite = Suite(schema_version="v1alpha1", name="s", repo="https://example.invalid/r",
                  defaults=ArmValues(tool="agent"), timeout="1h",
                  arms=(Arm(name="base"), Arm(name="bare", team="none"), Arm(name="ref", team="v2"),
                        Arm(name="cut", team=TeamWithout(without=("skills/release",)))))
    base, bare, ref, cut = resolve_arms(suite)
    inp = PlanInput(suite=suite, suite_hash="h", tasks=[], task_hashes={}, team_aliases=None,
                    team_revision=MAIN, arm_teams={"cut": WITHOUT})
    assert frozen_team(base, inp) == PulledTeam(revision=MAIN)
    assert frozen_team(bare, inp) == NoTeam()
    assert frozen_team(cut, inp) == WITHOUT
    with pytest.raises(Refusal) as refused:
        frozen_team(ref, inp)
    assert refused.value.code == "arm_team_unresolved" and 'Arm "ref"' in str(refused.value)


def test_a_trial_deviates_when_its_observed_team_is_not_its_arms_own() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    teams = {"base": PulledTeam(revision=MAIN),
             "ref": RefTeam(ref="bench/no-skill", revision=BRANCH),
             "cut": WITHOUT, "bare": NoTeam()}
    task = PlannedTask(id="t", title="T", source_hash="h", starting_commit="d" * 40, prompt="p",
                       check_run="c", protect=["test/**"])
    trials = [PlannedTrial(task="t", arm=arm, repetition=0, order=i, lane=1,
                           prompt_step=f"trials.r0.t.{arm}.prompt", check_step=f"trials.r0.t.{arm}.check")
              for i, arm in enumerate(teams)]
    plan = PlanFrozen(suite="s", suite_hash="sh", repo="https://x.invalid/r", repetitions=1, parallel=1,
                      timeout_s=60, baseline_team_revision=MAIN, tasks=[task], trials=trials,
                      arms=[PlannedArm(name=a, tool="tool", team=t) for a, t in teams.items()])
    observed = {"base": MAIN, "ref": BRANCH, "cut": MAIN, "bare": None}

    def table(seen: dict[str, str | None]) -> dict[str, int]:
        events: list = [RunStarted(run="r", workflow="w", source_hash="x", timeout_s=60, at=at), plan]
        for trial in trials:
            events += [StepReported(step=trial.prompt_step, lease="l", outcome="succeeded", at=at,
                                    agent=Agent(tool="tool", team_revision=seen[trial.arm])),
                       CheckRan(step=trial.check_step, task="t", kind="trial", result="passed")]
        return {row.arm: row.deviations for row in build_table(fold_run(events)).arms}

    assert table(observed) == {"base": 0, "ref": 0, "cut": 0, "bare": 0}
    assert table({"base": BRANCH, "ref": MAIN, "cut": MADE, "bare": MAIN}) == {
        "base": 1, "ref": 1, "cut": 1, "bare": 1}
