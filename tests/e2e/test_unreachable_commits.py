"""A task commit nobody has is refused by plan and run before any run exists (issue 11, item 6).

The checkout has every commit of the project; a task that names another one must get it from the
suite's repo. `upstream.git` is a bare copy of the checkout (reachable, but without the commit);
the default repo, on example.invalid, cannot be reached at all.
"""

from __future__ import annotations

import pytest

from e2e.conftest import FIX_ADD, World, git, hidden_task, visible_task

pytestmark = pytest.mark.e2e

MISSING = "feedc0de" * 5


@pytest.fixture
def upstream(world: World):
    path = world.root / "upstream.git"
    git(world.root, "clone", "-q", "--bare", str(world.checkout), str(path))
    return path


def planned(world: World, **task) -> None:
    world.team.tool("agent", "cat > /dev/null\n" + FIX_ADD)
    world.team.task("calc", "add", **task)
    world.init_and_pull()


def refused(world: World, *args: str) -> str:
    got = world.armbench(*args)
    assert (got.code, got.error["code"]) == (2, "commit_unreachable"), got
    assert world.events("RunStarted") == [] and not (world.checkout / ".armbench" / "runs").exists()
    return got.error["message"]


def test_a_source_fix_the_suites_repo_lacks_is_refused_by_plan_and_run(world: World, upstream) -> None:
    world.team.suite("calc", repo=str(upstream))
    planned(world, **{**hidden_task(world.project), "source": {"fix": MISSING}})
    expected = (
        f"Commit {MISSING} is in neither this checkout nor the suite's repo {upstream} (it does "
        'not have it, or does not serve it by SHA). Task "add" (benchmarks/calc/tasks/add.yaml) '
        f"has it as source.fix. Push the commit to {upstream}, or fix source.fix in the task file, "
        "push the team repo and pull. No run was started.")
    assert refused(world, "plan", "calc") == expected
    assert refused(world, "run", "calc", "--sandbox") == expected


def test_a_starting_commit_two_tasks_share_names_both(world: World, upstream) -> None:
    world.team.suite("calc", repo=str(upstream))
    world.team.task("calc", "mul", **{**visible_task(world.project), "startingCommit": MISSING})
    planned(world, **{**visible_task(world.project), "startingCommit": MISSING})
    assert 'Task "add" (benchmarks/calc/tasks/add.yaml) has it as startingCommit; task "mul" ' \
           "(benchmarks/calc/tasks/mul.yaml) has it as startingCommit. Push the commit to " \
        in refused(world, "plan", "calc")


def test_a_commit_whose_repo_cannot_be_reached_is_refused_and_says_so(world: World) -> None:
    world.team.suite("calc")  # repo: https://example.invalid/e2e/calc
    planned(world, **{**visible_task(world.project), "startingCommit": MISSING})
    message = refused(world, "run", "calc", "--sandbox")
    assert message.startswith(
        f"Commit {MISSING} is not in this checkout, and the suite's repo could not be reached to "
        "fetch it (https://example.invalid/e2e/calc could not be reached: "), message
    assert message.endswith(
        '). Task "add" (benchmarks/calc/tasks/add.yaml) has it as startingCommit. Check the '
        "suite's repo, the network and your git credentials for it, or plan in a checkout that "
        "has the commit. No run was started."), message


def test_a_suite_whose_commits_are_all_in_the_checkout_plans_without_the_commit_cache(
        world: World) -> None:
    world.team.suite("calc")  # unreachable: nothing may be fetched
    planned(world, **hidden_task(world.project))
    got = world.armbench("plan", "calc")
    assert got.code == 0, got
    assert not (world.home / "cache" / "commits").exists() or not any(
        (world.home / "cache" / "commits").glob("*.git"))
