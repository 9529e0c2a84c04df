"""Plan reads the suite cache as pull left it, or refuses: issue 10's mirror-and-cache attack.

A trial agent running as the member once added a commit to the team mirror
(`.armbench/team.git`) that changed a task's check, and pointed the suite cache
(`.armbench/cache/suites.json`) at it, so a run checked trials with the attacker's check while its
record named the genuine team revision. `armbench plan` and `armbench run` now refuse that, and any
edit of the cache, before a run exists; `armbench pull` rewrites the cache and plan works again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import Result, World, dump, git, visible_task

pytestmark = pytest.mark.e2e

TASK = "benchmarks/calc/tasks/add.yaml"
AGAIN = "Run `armbench pull` again to rewrite it from the team repo, and start again."


def make_pulled(world: World) -> World:
    world.team.tool("agent", "cat > /dev/null\n")
    world.team.suite("calc")
    world.team.task("calc", "add", **visible_task(world.project))
    world.init_and_pull()
    return world


@pytest.fixture
def pulled(world: World) -> World:
    return make_pulled(world)


def cache_path(world: World) -> Path:
    return world.checkout / ".armbench" / "cache" / "suites.json"


def read_cache(world: World) -> dict[str, Any]:
    return json.loads(cache_path(world).read_text())


def write_cache(world: World, cache: dict[str, Any]) -> None:
    cache_path(world).write_text(json.dumps(cache))


def pulled_revision(world: World) -> str:
    return json.loads((world.checkout / ".armbench" / "pull.json").read_text())["revision"]


def refused(world: World, code: str, message: str) -> None:
    """`armbench plan calc` and `armbench run calc` both refuse so, and no run exists."""
    for args in (["plan", "calc"], ["run", "calc", "--sandbox"]):
        got: Result = world.armbench(*args)
        assert got.code == 2, (args, str(got))
        assert got.envelope == {"error": {"code": code, "message": message}}, (args, str(got))
    assert world.events("RunStarted") == []
    assert not (world.checkout / ".armbench" / "runs").exists()


def plans(world: World) -> dict[str, Any]:
    got = world.armbench("plan", "calc")
    assert got.code == 0, got
    return got.data["plan"]["plan"]


def plant_commit(world: World) -> str:
    """The attack: a commit on the mirror's main whose check always passes; the cache names it,
    with the hash of every file at it, as a careful attacker would write them."""
    mirror, work = world.checkout / ".armbench" / "team.git", world.root / "attacker"
    git(world.root, "clone", "-q", "-b", "main", str(mirror), str(work))
    task = visible_task(world.project, run="true")
    (work / TASK).write_text(dump({"schemaVersion": "v1alpha1", "title": "Task add",
                                   "prompt": "Task add: add() in calc.py subtracts. Fix it.\n", **task}))
    git(work, "commit", "-q", "-am", "calc: a check that passes")
    git(work, "push", "-q", "--force", "origin", "HEAD:main")
    evil = git(work, "rev-parse", "HEAD")
    cache = read_cache(world)
    cache["suites"]["calc"] = evil
    cache["files"]["calc"] = {
        path: hashlib.sha256((work / path).read_bytes()).hexdigest()
        for path in git(work, "ls-files", "benchmarks/calc").splitlines()}
    write_cache(world, cache)
    return evil


def test_a_mirror_commit_the_cache_names_is_refused_at_plan_and_run_and_pull_mends_it(
        pulled: World) -> None:
    genuine = plans(pulled)
    evil = plant_commit(pulled)

    refused(pulled, "team_revision_unreachable",
            f'Expected suite "calc" in the suite cache .armbench/cache/suites.json at a team revision '
            f"the team repo has; found {evil}, which is on no branch or tag of the team repo. It is a "
            "commit of this checkout's mirror (.armbench/team.git) only, so the team never published "
            f"it. {AGAIN}")

    assert pulled.armbench("pull").code == 0
    assert read_cache(pulled)["suites"]["calc"] == pulled_revision(pulled) != evil
    assert plans(pulled)["tasks"] == genuine["tasks"]


def test_an_edited_hash_in_the_cache_is_refused_naming_the_file(pulled: World) -> None:
    revision = pulled_revision(pulled)
    cache = read_cache(pulled)
    real = cache["files"]["calc"][TASK]
    cache["files"]["calc"][TASK] = "0" * 64
    write_cache(pulled, cache)

    refused(pulled, "suite_cache_mismatch",
            f"Expected {TASK} at team revision {revision[:12]} to be the file armbench pull cached "
            f"(sha256 {'0' * 64} in .armbench/cache/suites.json); found sha256 {real} in the team "
            f"mirror (.armbench/team.git). The cache or the mirror was changed after the pull. {AGAIN}")


def test_a_cache_without_file_hashes_is_refused(pulled: World) -> None:
    cache = read_cache(pulled)
    del cache["files"]
    write_cache(pulled, cache)

    refused(pulled, "suite_cache_mismatch",
            'Expected the suite cache .armbench/cache/suites.json to hold the sha256 of every file of '
            'suite "calc"; found none (a cache written by an older armbench, or edited). ' + AGAIN)


def test_a_cache_at_a_revision_published_but_not_pulled_is_refused(pulled: World) -> None:
    pulled.team.task("calc", "add", **visible_task(pulled.project, run="python3 -m unittest -q"))
    newer = pulled.team.publish("calc: run every test")
    cache = read_cache(pulled)
    cache["suites"]["calc"] = newer
    write_cache(pulled, cache)

    refused(pulled, "suite_cache_mismatch",
            'Expected suite "calc" in the suite cache .armbench/cache/suites.json at the pulled team '
            f"revision {pulled_revision(pulled)} (.armbench/pull.json), or at an ancestor of it where "
            f"pull kept a suite's last valid version; found {newer}. The cache was changed after the "
            f"pull. {AGAIN}")


def test_an_older_revision_in_the_cache_must_hash_as_pulled(pulled: World) -> None:
    older = pulled_revision(pulled)
    pulled.team.task("calc", "add", **visible_task(pulled.project, run="python3 -m unittest -q"))
    pulled.team.publish("calc: run every test")
    assert pulled.armbench("pull").code == 0
    cache = read_cache(pulled)
    now = cache["files"]["calc"][TASK]
    cache["suites"]["calc"] = older  # an ancestor, as a suite pull kept would be, with today's hashes
    write_cache(pulled, cache)
    at_older = hashlib.sha256(git(pulled.root, "--git-dir", str(pulled.team.bare), "show",
                                  f"{older}:{TASK}").encode() + b"\n").hexdigest()

    refused(pulled, "suite_cache_mismatch",
            f"Expected {TASK} at team revision {older[:12]} to be the file armbench pull cached "
            f"(sha256 {now} in .armbench/cache/suites.json); found sha256 {at_older} in the team "
            f"mirror (.armbench/team.git). The cache or the mirror was changed after the pull. {AGAIN}")
