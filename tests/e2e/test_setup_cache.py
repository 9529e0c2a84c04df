"""`workflows.setup_cache: true` (issue 25): `trial: {setup: once}` prepared trees kept between
runs in `$ARMBENCH_HOME/cache/prepared/`, checked by their manifest before use.

The suite is `test_setup_once.py`'s (setup counts itself in `$E2E_OUT/setups`, the agent writes
into the prepared `node_modules/`). A second run takes both tasks' trees from the cache and runs
no setup; a cached tree changed by hand is rebuilt, and the trials' results do not change; two
runs started at once build each tree once between them; without the setting nothing is shared.
Run through the installed command, under bubblewrap.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from armbench.benchmark.trials.workfolder import work_folder_name
from e2e.conftest import ARMBENCH, World, parse_envelope
from e2e.test_setup_once import Ran, _run, _world

pytestmark = pytest.mark.e2e


def _cached_world(root: Path, *, cache: bool = True) -> World:
    world = _world(root, "once")
    if cache:
        world.configure(setup_cache=True)
    return world


def _origins(ran: Ran) -> dict[str, set[str]]:
    """Each prepared tree's origins in the run's WorkspacePrepared events (a clone's path lies in
    its run's work folder), by the tree's key."""
    run = ran.result.data["done"]["run"]
    got: dict[str, set[str]] = {}
    for e in ran.world.events("WorkspacePrepared"):
        if f"/{work_folder_name()}/{run}/" in e["path"]:
            got.setdefault(e["prepared_tree"], set()).add(e.get("prepared_origin"))
    return got


def _cache(world: World) -> list[Path]:
    folder = world.home / "cache" / "prepared"
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


@dataclass
class Cached:
    world: World
    first: Ran
    second: Ran
    setups_after_first: list[str]
    setups_after_second: list[str]
    damaged: Path
    git_damaged: Path
    third: Ran


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> Cached:
    world = _cached_world(tmp_path_factory.mktemp("cached"))
    first = _run(world)
    after_first = world.out_lines("setups")
    second = _run(world)
    after_second = world.out_lines("setups")
    trees = _cache(world)
    assert len(trees) == 2, trees
    damaged = trees[0]
    with (damaged / "tree" / "node_modules" / "dep" / "index.js").open("a") as f:
        f.write("damaged by hand\n")
    git_damaged = trees[1]  # its git dir: no trial's copy would show it, the check before use does
    with (git_damaged / "git" / "HEAD").open("a") as f:
        f.write("\n")
    third = _run(world)
    return Cached(world, first, second, after_first, after_second, damaged, git_damaged, third)


@pytest.fixture(scope="module")
def uncached(tmp_path_factory: pytest.TempPathFactory) -> tuple[Ran, Ran]:
    world = _cached_world(tmp_path_factory.mktemp("uncached"), cache=False)
    return _run(world), _run(world)


def test_the_second_run_takes_both_trees_from_the_cache_and_runs_no_setup(cached: Cached) -> None:
    commits = cached.world.project.commits
    assert sorted(cached.setups_after_first) == sorted([commits["test"], commits["start"]])
    assert cached.setups_after_second == cached.setups_after_first
    first, second = _origins(cached.first), _origins(cached.second)
    assert first.keys() == second.keys() == {p.name for p in _cache(cached.world)}
    assert set(map(frozenset, first.values())) == {frozenset({"built"})}, first
    assert set(map(frozenset, second.values())) == {frozenset({"cached"})}, second
    assert cached.second.results == cached.first.results
    assert {r for *_, r in cached.first.results} == {"passed"}
    assert cached.second.record["baselines"] == cached.first.record["baselines"]


def test_no_trial_sees_another_runs_writes_in_the_cached_tree(cached: Cached) -> None:
    seen = cached.world.out_lines("seen")
    assert seen == ["index.js built"] * 18, seen
    for tree in _cache(cached.world):
        assert sorted(p.name for p in (tree / "tree" / "node_modules" / "dep").iterdir()) == ["index.js"]


def test_a_cached_tree_changed_by_hand_is_rebuilt_and_results_stay(cached: Cached) -> None:
    setups = cached.world.out_lines("setups")
    assert setups[:2] == cached.setups_after_second and len(setups) == 4, setups
    assert sorted(setups[2:]) == sorted(setups[:2])
    origins = _origins(cached.third)
    assert origins == {cached.damaged.name: {"rebuilt"}, cached.git_damaged.name: {"rebuilt"}}, origins
    assert cached.third.results == cached.first.results
    assert cached.third.record["baselines"] == cached.first.record["baselines"]
    for tree in (cached.damaged, cached.git_damaged):
        assert f"The prepared tree {tree.name} failed its manifest check" in cached.third.result.stderr
    index = cached.damaged / "tree" / "node_modules" / "dep" / "index.js"
    assert index.read_text() == "built\n"
    assert (cached.git_damaged / "git" / "HEAD").read_text().count("\n") == 1
    run = cached.third.result.data["done"]["run"]
    explained = cached.world.armbench("explain", run, "r1.visible.base")
    assert explained.code == 0, explained
    assert "prepared_origin=rebuilt" in explained.stdout + explained.stderr, explained


def test_without_setup_cache_nothing_is_shared_between_runs(uncached: tuple[Ran, Ran],
                                                           cached: Cached) -> None:
    first, second = uncached
    commits = first.world.project.commits
    assert sorted(first.world.out_lines("setups")) == sorted([commits["test"], commits["start"]] * 2)
    assert _cache(first.world) == []
    for ran in (first, second):
        origins = _origins(ran)
        assert set(map(frozenset, origins.values())) == {frozenset({"built"})}, origins
        assert not (first.world.root / "tmp" / work_folder_name() / ran.result.data["done"]["run"]).exists()
    assert second.results == first.results == cached.first.results
    # a tree kept between runs is keyed by the host's architecture and armbench's version too
    assert not set(_origins(first)) & set(_origins(cached.first))


def test_two_runs_at_once_build_each_tree_once(tmp_path: Path) -> None:
    world = _cached_world(tmp_path / "w")
    procs = [subprocess.Popen([str(ARMBENCH), "run", "deps", "--sandbox"], cwd=world.checkout,
                              env=world.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    for stdout, _ in outs:
        envelope = parse_envelope(stdout)
        assert envelope is not None
        record = world.record(envelope["data"]["done"]["run"])
        assert {t["result"] for t in record["trials"]} == {"passed"}
    commits = world.project.commits
    assert sorted(world.out_lines("setups")) == sorted([commits["test"], commits["start"]])
    assert world.out_lines("seen") == ["index.js built"] * 12
    origins = [e.get("prepared_origin") for e in world.events("WorkspacePrepared")]
    assert origins.count("built") >= 1 and set(origins) <= {"built", "cached"}, origins
    assert len(_cache(world)) == 2
    gc = world.armbench("gc", "--prepared")
    assert gc.code == 0 and gc.data["gc"]["preparedTrees"] == 2, gc
    assert gc.data["gc"]["preparedFreedBytes"] > 0 and _cache(world) == []
