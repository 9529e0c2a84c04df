"""`trial: {setup: once}` (issue 25): setup runs once per task, in one clean clone, and every
trial of the task starts from a copy of the tree it left.

The suites' setup leaves what package managers leave (an ignored `node_modules/`), a link out of
the clone to a host folder holding a FIFO (followed on the host, it would refuse the tree or hang
a copy), and counts itself in a file outside the clone. The agent lists `node_modules/dep`, then
writes into it: no trial may see another's write. Run through the installed command, under
bubblewrap.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from armbench.benchmark.trials.workfolder import work_folder_name
from armbench.benchmark.trials.workspace import overlays_for
from armbench.edge.prepared import copy_method
from armbench.edge.sandbox import Sandbox
from e2e.conftest import (
    ARMBENCH,
    FIX_ADD,
    Result,
    World,
    hidden_task,
    make_world,
    parse_envelope,
    visible_task,
)

pytestmark = pytest.mark.e2e

SETUP = """echo "$(git rev-parse HEAD)" >> "$E2E_OUT/setups"
mkdir -p node_modules/dep "$E2E_OUT/outside"
echo built > node_modules/dep/index.js
[ -p "$E2E_OUT/outside/pipe" ] || mkfifo "$E2E_OUT/outside/pipe"
ln -sfn "$E2E_OUT/outside" node_modules/outside
"""

AGENT = """echo "$(ls -A node_modules/dep | tr '\\n' ' ')$(cat node_modules/dep/index.js)" >> "$E2E_OUT/seen"
if [ -L node_modules/outside ]; then readlink node_modules/outside >> "$E2E_OUT/links"; fi
echo mine > "node_modules/dep/written-$$"
echo mine >> node_modules/dep/index.js
if [ -e "$E2E_OUT/hold" ] && [ ! -e "$E2E_OUT/held" ]; then
  touch "$E2E_OUT/held"
  for _ in $(seq 600); do [ -e "$E2E_OUT/go" ] && break; sleep 0.1; done
fi
""" + FIX_ADD


@dataclass
class Ran:
    world: World
    result: Result
    record: dict

    @property
    def results(self) -> list[tuple[str, int, str, str]]:
        return sorted((t["task"], t["repetition"], t["arm"], t["result"]) for t in self.record["trials"])


def _world(root: Path, mode: str, *, parallel: int = 1) -> World:
    world = make_world(root)
    project, team = world.project, world.team
    team.tool("agent", AGENT)
    team.suite("deps", setup=SETUP, repetitions=3, parallel=parallel,
               trial={"timeout": "1m", "setup": mode})
    team.task("deps", "visible", **visible_task(project))
    team.task("deps", "hidden", **hidden_task(project))
    world.init_and_pull()
    return world


def _run(world: World) -> Ran:
    result = world.armbench("run", "deps", "--sandbox")
    assert result.code == 0 and result.envelope is not None, result
    return Ran(world, result, world.record(result.data["done"]["run"]))


@pytest.fixture(scope="module")
def once(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    return _run(_world(tmp_path_factory.mktemp("once"), "once", parallel=2))


@pytest.fixture(scope="module")
def each(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    return _run(_world(tmp_path_factory.mktemp("each"), "each"))


def test_once_and_each_give_the_same_results(once: Ran, each: Ran) -> None:
    assert once.results == each.results
    assert {r for *_, r in once.results} == {"passed"}
    assert once.record["baselines"] == each.record["baselines"]
    assert once.record["setup"] == "once" and each.record["setup"] == "each"
    assert "(setup: once)" in once.result.stderr and "(setup: each)" in each.result.stderr


def test_setup_runs_once_per_task_with_once_and_in_every_clone_with_each(once: Ran, each: Ran) -> None:
    commits = once.world.project.commits
    assert sorted(once.world.out_lines("setups")) == sorted([commits["test"], commits["start"]])
    assert len(each.world.out_lines("setups")) == 2 * (1 + 3)


def test_no_trial_sees_another_trials_writes(once: Ran) -> None:
    seen = once.world.out_lines("seen")
    assert seen == ["index.js built"] * 6, seen


def test_a_link_out_of_the_clone_is_copied_as_a_link(once: Ran) -> None:
    outside = str(once.world.out / "outside")
    assert once.world.out_lines("links") == [outside] * 6
    assert (once.world.out / "outside" / "pipe").is_fifo()


def test_explain_names_the_prepared_tree(once: Ran, each: Ran) -> None:
    run = once.result.data["done"]["run"]
    explained = once.world.armbench("explain", run, "r1.visible.base")
    assert explained.code == 0, explained
    prepared = [e for e in once.world.events("WorkspacePrepared")]
    keys = {e["prepared_tree"] for e in prepared}
    assert len(keys) == 2 and None not in keys, keys
    assert any(f"prepared_tree={k}" in explained.stdout + explained.stderr for k in keys), explained
    assert all(e.get("prepared_tree") is None for e in each.world.events("WorkspacePrepared"))


def test_without_overlays_once_copies_and_each_checks_out_with_the_same_results(
        tmp_path: Path, once: Ran) -> None:
    """`ARMBENCH_OVERLAYS=0` (and what a member who is not root gets by default): `once` copies
    the prepared tree, `each` checks a clone out of git; the results are those of the overlays
    (where they are on), and no trial sees another's writes."""
    ran = {}
    for mode in ("once", "each"):
        world = _world(tmp_path / mode, mode)
        world.env["ARMBENCH_OVERLAYS"] = "0"
        ran[mode] = _run(world)
        assert ran[mode].world.out_lines("seen") == ["index.js built"] * 6
    assert ran["once"].results == ran["each"].results == once.results
    assert {t["clone"] for t in ran["once"].record["trials"]} == {copy_method(tmp_path)}
    assert {t["clone"] for t in ran["each"].record["trials"]} == {"clone"}


def test_a_damaged_prepared_tree_is_rebuilt(tmp_path: Path) -> None:
    world = _world(tmp_path / "w", "once")
    (world.out / "hold").touch()  # the first trial waits until the tree is damaged
    proc = subprocess.Popen([str(ARMBENCH), "run", "deps", "--sandbox"], cwd=world.checkout,
                            env=world.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 120
    while not (world.out / "held").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    trees = list((world.root / "tmp" / work_folder_name()).glob("*/prepared/*/tree"))
    assert len(trees) == 2, trees  # both baselines ran first
    for tree in trees:
        with (tree / "node_modules" / "dep" / "index.js").open("a") as damaged:
            damaged.write("damaged\n")
    (world.out / "go").touch()
    stdout, stderr = proc.communicate(timeout=240)
    assert proc.returncode == 0, stderr
    envelope = parse_envelope(stdout)
    assert envelope is not None
    record = world.record(envelope["data"]["done"]["run"])
    assert {t["result"] for t in record["trials"]} == {"passed"}
    seen = world.out_lines("seen")
    assert len(seen) == 6 and set(seen) == {"index.js built"}, seen
    setups = world.out_lines("setups")
    commits = world.project.commits
    assert sorted(setups) == sorted([commits["test"], commits["start"]] * 2), setups  # rebuilt once


def test_a_fifo_in_the_prepared_tree_fails_the_baseline(tmp_path: Path) -> None:
    world = make_world(tmp_path / "w")
    world.team.tool("agent", AGENT)
    world.team.suite("pipes", setup="mkfifo left-pipe", trial={"setup": "once"})
    world.team.task("pipes", "visible", **visible_task(world.project))
    world.init_and_pull()
    result = world.armbench("run", "pipes", "--sandbox")
    assert result.envelope is not None, result
    record = world.record(result.data["done"]["run"])
    assert record["baselines"] == [{"task": "visible", "status": "could_not_run",
                                    "cause": "setup_failed"}]
    assert {t["result"] for t in record["trials"]} == {"not_run"}
    checked = world.events("CheckRan")
    assert "a FIFO at 'left-pipe'" in checked[0]["message"], checked
    assert world.out_lines("seen") == []


def test_the_log_explain_and_record_say_how_each_clone_was_made(once: Ran, each: Ran) -> None:
    """Where overlays are on and can be mounted, every trial's clone is one, over the prepared
    tree (`once`) or the commit's pristine tree (`each`); else `once` copies its prepared tree
    (blocks shared where the file system can: `reflink`, else `copy`) and `each` checks a clone
    out of git."""
    overlays = overlays_for(Sandbox())
    copied = "overlay" if overlays else copy_method(once.world.root)
    checked_out = "overlay" if overlays else "clone"
    assert {e["preparation"] for e in once.world.events("WorkspacePrepared")} == {copied}
    assert {e["preparation"] for e in each.world.events("WorkspacePrepared")} == {checked_out}
    assert {t["clone"] for t in once.record["trials"]} == {copied}
    assert {t["clone"] for t in each.record["trials"]} == {checked_out}
    explained = once.world.armbench("explain", once.result.data["done"]["run"], "r1.visible.base")
    assert f"preparation={copied}" in explained.stdout + explained.stderr, explained
