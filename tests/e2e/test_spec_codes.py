"""The spec's error code where armbench's differed (issue 11, item 8): a check.add path that is not
a file at source.fix fails the check with trial_prepare_failed (it was add_missing)."""

from __future__ import annotations

import pytest

from e2e.conftest import FIX_ADD, World, hidden_task

pytestmark = pytest.mark.e2e


def test_a_missing_check_add_path_fails_the_baseline_with_trial_prepare_failed(world: World) -> None:
    task = hidden_task(world.project)
    task["check"]["add"] = ["tests/test_missing.py"]
    world.team.tool("agent", "cat > /dev/null\n" + FIX_ADD)
    world.team.suite("calc")
    world.team.task("calc", "add", **task)
    world.init_and_pull()

    got = world.armbench("run", "calc", "--sandbox")

    assert got.code == 0, got
    (checked,) = world.events("CheckRan")
    fix = world.project.commits["fix"]
    assert (checked["result"], checked["cause"]) == ("could_not_run", "trial_prepare_failed")
    assert checked["message"] == (
        f"Expected a file at tests/test_missing.py in commit {fix}, found nothing at that path. "
        f"check.add path tests/test_missing.py is not a file at {fix}: list files that commit has "
        "in check.add, or fix source.fix.")
    rid = got.data["done"]["run"]
    explained = world.armbench("explain", rid, "baseline:add").data["explain"]
    assert explained["rule"] == (
        "The check could not run at the starting commit: a check.add file is missing at the "
        "task's fix commit (trial_prepare_failed). A check that cannot run cannot judge a trial, "
        "so the task's trials do not run.")
