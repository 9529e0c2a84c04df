"""A corrupted commit cache is rebuilt, and a commit nobody has is named: issue 10, part 6.

The suite's repo is `upstream.git`, a bare copy of the project plus one commit the member's
checkout lacks (`task`: the failing test plus a README line), so every run clones from the commit
cache in `$ARMBENCH_HOME/cache/commits/`. Once a process running as the member garbled a blob in
that cache's pack; the commit still read, every clone failed, and every later run's baselines were
"could not run" with exit 0.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from e2e.conftest import FIX_ADD, Result, World, baseline_rows, git, visible_task

pytestmark = pytest.mark.e2e

MISSING = "1234567890abcdef" * 2 + "12345678"


def upstream_with_a_task_commit(world: World) -> tuple[Path, str]:
    """`upstream.git` (the project and a commit on `task` the checkout does not have) and that commit."""
    upstream, work = world.root / "upstream.git", world.root / "upstream-work"
    git(world.root, "clone", "-q", "--bare", str(world.checkout), str(upstream))
    git(world.root, "clone", "-q", str(upstream), str(work))
    git(work, "checkout", "-q", "-b", "task", world.project.commits["test"])
    (work / "README.md").write_text("# calc\n\nOnly upstream has this line.\n")
    git(work, "commit", "-q", "-am", "README: a line only upstream has")
    git(work, "push", "-q", "origin", "task")
    return upstream, git(work, "rev-parse", "HEAD")


def garble_a_blob(cache: Path) -> None:
    """Flip the bytes of one blob in the cache's pack: its commits still read, no clone works."""
    pack_dir = cache / "objects" / "pack"
    (index,) = pack_dir.glob("*.idx")
    listing = subprocess.run(["git", "verify-pack", "-v", str(index)], capture_output=True, text=True,
                             check=True).stdout
    _, _, _, size, offset = next(line.split()[:5] for line in listing.splitlines() if " blob " in line)
    (pack,) = pack_dir.glob("*.pack")
    data = bytearray(pack.read_bytes())
    for i in range(int(offset) + 3, int(offset) + int(size)):
        data[i] ^= 0x55
    pack.chmod(0o644)
    pack.write_bytes(bytes(data))


@pytest.fixture
def suite(world: World) -> tuple[World, Path, str]:
    upstream, start = upstream_with_a_task_commit(world)
    world.team.tool("agent", "cat > /dev/null\n" + FIX_ADD)
    world.team.suite("calc", repo=str(upstream))
    world.team.task("calc", "add", **{**visible_task(world.project), "startingCommit": start})
    world.init_and_pull()
    return world, upstream, start


def baselines(world: World) -> list[str]:
    """Each baseline check's result, every run in order: `failed` is a valid baseline."""
    return [e["result"] for e in world.events("CheckRan") if e["kind"] == "baseline"]


def run(world: World) -> Result:
    got = world.armbench("run", "calc", "--sandbox")
    assert got.code == 0, got
    return got


def test_a_garbled_commit_cache_is_rebuilt_and_the_next_runs_baselines_are_valid(
        suite: tuple[World, Path, str]) -> None:
    world, _, start = suite
    first = run(world)
    assert baselines(world) == ["failed"] and baseline_rows(first.stderr) == {}, first.stderr
    (cache,) = (world.home / "cache" / "commits").glob("*.git")
    assert git(world.checkout, "cat-file", "-t", start, check=False) == ""  # the checkout lacks it

    garble_a_blob(cache)
    second = run(world)

    assert baselines(world) == ["failed", "failed"] and baseline_rows(second.stderr) == {}, second.stderr
    record = world.record(second.data["done"]["run"])
    assert [t["result"] for t in record["trials"]] == ["passed"], record["trials"]
    assert f"The commit cache {cache} failed its integrity check (git fsck: " in second.stderr
    assert "rebuilt it from the checkout and the suite's repo." in second.stderr
    assert git(cache, "fsck", "--no-dangling", "--no-progress") == ""


def test_a_commit_the_suites_repo_does_not_have_is_refused_before_the_run(
        suite: tuple[World, Path, str]) -> None:
    world, upstream, _ = suite
    world.team.task("calc", "add", **{**visible_task(world.project), "startingCommit": MISSING})
    world.team.publish("calc: a commit nobody pushed")
    assert world.armbench("pull").code == 0

    got = world.armbench("run", "calc", "--sandbox")

    assert (got.code, got.error["code"]) == (2, "commit_unreachable"), got
    assert got.error["message"] == (
        f"Commit {MISSING} is in neither this checkout nor the suite's repo {upstream} (it does not "
        'have it, or does not serve it by SHA). Task "add" (benchmarks/calc/tasks/add.yaml) has it '
        f"as startingCommit. Push the commit to {upstream}, or fix startingCommit in the task "
        "file, push the team repo and pull. No run was started.")
    assert world.events("RunStarted") == []


def test_a_baseline_whose_clone_cannot_be_prepared_is_explained_as_such(
        suite: tuple[World, Path, str]) -> None:
    """The commit is in the commit cache, so plan passes; the cache turns out garbled and the
    suite's repo is gone, so the baseline's clone cannot be made."""
    world, upstream, start = suite
    run(world)
    (cache,) = (world.home / "cache" / "commits").glob("*.git")
    garble_a_blob(cache)
    upstream.rename(upstream.with_name("gone.git"))

    got = run(world)

    rid = got.data["done"]["run"]
    base = world.armbench("explain", rid, "baseline:add")
    assert base.code == 0, base
    rule = base.data["explain"]["rule"]
    assert rule.startswith("The baseline's clone could not be prepared at the starting commit, so "
                           f"its check never ran: Expected to fetch commit {start} from {upstream}, "
                           "found the commit cache failed its integrity check (git fsck: "), rule
    assert rule.endswith("(remote_unreachable). A check that cannot run cannot judge a trial, so "
                         "the task's trials do not run."), rule
    assert "never ran (the run ended first)" not in rule
    trial = world.armbench("explain", rid, "r0.add.base")
    assert trial.data["explain"]["result"] == "not_run"
    assert "Baseline add is not_run: the baseline's clone could not be prepared" in \
        trial.data["explain"]["rule"], trial.data
