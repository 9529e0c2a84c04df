"""Criterion 6: each check is tried first, on a clean clone at startingCommit.

One suite, one arm, one task per case. The suite's setup fails only at the `start` commit, which
only the `setup-fails` task starts from. `slow-after-prompt`'s check fails quickly at the
baseline and sleeps past its `check.timeout: 2s` once the agent has left its marker file. A second
suite, which has a scorer, has one task, invalid, so none of its trials runs (nor its judge).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import pytest

from e2e.conftest import (
    TIDY_JUDGE as JUDGE,
)
from e2e.conftest import (
    TIDY_SCORER as SCORER,
)
from e2e.conftest import (
    Result,
    World,
    baseline_rows,
    hidden_task,
    make_world,
    visible_task,
)

pytestmark = pytest.mark.e2e

AGENT = """
cat > /dev/null
echo "$(basename "$PWD")" >> "$E2E_OUT/prompts"
touch agent-was-here
"""


COULD_NOT_RUN = {"no-such-command": "not_found", "times-out": "timeout", "killed": "signal",
                 "exit-137": "signal", "setup-fails": "setup_failed"}


@dataclass
class Ran:
    world: World
    result: Result
    record: dict


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    world = make_world(tmp_path_factory.mktemp("baselines"))
    project, team = world.project, world.team
    team.tool("agent", AGENT)
    team.suite("checks", setup=f'test "$(git rev-parse HEAD)" != {project.commits["start"]}')
    team.task("checks", "already-passes", **{**visible_task(project),
                                             "startingCommit": project.commits["fix"]})
    team.task("checks", "no-such-command", **visible_task(project, run="no-such-command"))
    team.task("checks", "times-out", **visible_task(project, run="sleep 30", timeout="2s"))
    team.task("checks", "killed", **visible_task(project, run="kill -9 $$"))
    team.task("checks", "exit-137", **visible_task(project, run="exit 137"))
    team.task("checks", "setup-fails", **hidden_task(project))
    team.task("checks", "slow-after-prompt", **visible_task(
        project, run="if [ -e agent-was-here ]; then sleep 30; fi; exit 1", timeout="2s"))
    team.tool("judge", JUDGE)
    team.write("scorers/tidy.md", SCORER)
    team.suite("nothing-runs", arms=[{"name": "base"}, {"name": "other", "model": "m-other"}],
               repetitions=2, scorers=["tidy"], judge={"tool": "judge"})
    team.task("nothing-runs", "already-passes", **{**visible_task(project),
                                                   "startingCommit": project.commits["fix"]})
    world.init_and_pull()
    result = world.armbench("run", "checks", "--sandbox")
    assert result.envelope is not None, result
    return Ran(world, result, world.record(result.data["done"]["run"]))


@pytest.fixture(scope="module")
def nothing_ran(ran: Ran) -> Ran:
    """A second run in the same checkout, of a suite whose only task is invalid."""
    result = ran.world.armbench("run", "nothing-runs", "--sandbox")
    assert result.envelope is not None, result
    return Ran(ran.world, result, ran.world.record(result.data["done"]["run"]))


def trials_of(ran: Ran, task: str) -> list[dict]:
    return [t for t in ran.record["trials"] if t["task"] == task]


def test_the_run_succeeds(ran: Ran) -> None:
    assert ran.result.code == 0, ran.result
    assert ran.record["outcome"] == "succeeded"


def test_a_task_whose_check_passes_without_changes_is_invalid_and_its_trials_do_not_run(
        ran: Ran) -> None:
    assert baseline_rows(ran.result.stderr)["already-passes"] == "invalid: check passes without changes"
    baseline = next(b for b in ran.record["baselines"] if b["task"] == "already-passes")
    assert baseline["status"] == "invalid"
    assert [t["result"] for t in trials_of(ran, "already-passes")] == ["not_run"]


@pytest.mark.parametrize("task", sorted(COULD_NOT_RUN))
def test_a_baseline_that_could_not_run_leaves_its_trials_not_run(ran: Ran, task: str) -> None:
    assert baseline_rows(ran.result.stderr)[task].startswith("check could not run")
    baseline = next(b for b in ran.record["baselines"] if b["task"] == task)
    assert baseline["status"] == "could_not_run"
    assert baseline.get("cause") == COULD_NOT_RUN[task]
    assert [t["result"] for t in trials_of(ran, task)] == ["not_run"]


def test_only_the_valid_task_reached_the_agent(ran: Ran) -> None:
    assert len(ran.world.out_lines("prompts")) == 1


def test_a_check_that_times_out_after_a_successful_prompt_is_an_error_not_a_failure(ran: Ran) -> None:
    baseline = next(b for b in ran.record["baselines"] if b["task"] == "slow-after-prompt")
    assert baseline["status"] == "valid"
    (trial,) = trials_of(ran, "slow-after-prompt")
    assert trial["result"] == "error"
    checked = [e for e in ran.world.events("CheckRan") if e["kind"] == "trial"]
    assert [(e["task"], e["result"], e["cause"]) for e in checked] == [
        ("slow-after-prompt", "could_not_run", "timeout")]


def test_the_record_keeps_the_baseline_team_revision_and_scorer_hashes_when_every_trial_is_not_run(
        nothing_ran: Ran) -> None:
    assert nothing_ran.result.code == 0, nothing_ran.result
    record = nothing_ran.record
    assert [t["result"] for t in record["trials"]] == ["not_run"] * 4
    pulled = json.loads((nothing_ran.world.checkout / ".armbench" / "pull.json").read_text())
    assert record["baselineTeamRevision"] == pulled["revision"]
    assert record["scorers"] == [
        {"name": "tidy", "rubric": {"sourceHash": hashlib.sha256(SCORER.encode()).hexdigest()}}]
    assert nothing_ran.world.out_lines("judged") == []  # nothing was judged
    assert [a["name"] for a in record["arms"]] == ["base", "other"]
