"""Criterion 14: `armbench run` exits as the spec's table says, and a stopped run still reports.

A succeeded run exits 0 (see test_trials.py). Here: a run cancelled with SIGINT while its first
trial's tool sleeps, and a run that outlives its suite `timeout: 3s` (4 trials of 2 s each).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from armbench.benchmark.trials.workfolder import work_folder_name
from e2e.conftest import Result, World, arm_rows, hidden_task, interrupted, make_world

pytestmark = pytest.mark.e2e

SLEEPER = """
cat > /dev/null
echo "$ARMBENCH_MODEL $(date +%s.%N)" >> "$E2E_OUT/started-$E2E_SUITE"
sleep "$E2E_SLEEP"
"""


@dataclass
class Stopped:
    world: World
    result: Result
    record: dict


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = make_world(tmp_path_factory.mktemp("exits"))
    world.team.tool("agent", SLEEPER)
    world.team.suite("cancel", repetitions=3)
    world.team.task("cancel", "hidden", **hidden_task(world.project))
    world.team.suite("late", repetitions=4, timeout="3s")
    world.team.task("late", "hidden", **hidden_task(world.project))
    world.init_and_pull()
    return world


@pytest.fixture(scope="module")
def cancelled(world: World) -> Stopped:
    env = {**world.env, "E2E_SUITE": "cancel", "E2E_SLEEP": "60"}
    result = interrupted(["run", "cancel", "--sandbox"], world.checkout, env,
                         once=world.out / "started-cancel")
    started = re.search(r"^Run (r[0-9a-f]+):", result.stderr, re.MULTILINE)
    assert started is not None, result
    path = world.record_path(started.group(1))
    return Stopped(world, result, json.loads(path.read_text()) if path.exists() else {})


@pytest.fixture(scope="module")
def timed_out(world: World) -> Stopped:
    result = world.armbench("run", "late", "--sandbox", env={"E2E_SUITE": "late", "E2E_SLEEP": "2"})
    assert result.envelope is not None, result
    return Stopped(world, result, world.record(result.data["done"]["run"]))


def test_a_run_cancelled_during_its_trials_exits_1(cancelled: Stopped) -> None:
    assert cancelled.result.code == 1, cancelled.result
    assert cancelled.result.data["done"]["state"] == "cancelled"


def test_a_cancelled_run_still_prints_its_table_and_writes_its_record(cancelled: Stopped) -> None:
    assert cancelled.result.envelope is not None, cancelled.result
    row = arm_rows(cancelled.result.stderr)["base"]
    assert row["Planned"] == "3" and row["Not run"] == "2"
    assert cancelled.record["outcome"] == "cancelled"
    assert len(cancelled.record["trials"]) == 3
    run = cancelled.result.data["done"]["run"]
    assert not (cancelled.world.root / "tmp" / work_folder_name() / run).exists()  # clones removed


def test_the_trials_a_cancelled_run_never_reached_are_not_run(cancelled: Stopped) -> None:
    assert cancelled.record, cancelled.result
    by_order = sorted(cancelled.record["trials"], key=lambda t: t["order"])
    assert by_order[0]["result"] == "error"  # stopped in the middle of its prompt
    assert [t["result"] for t in by_order[1:]] == ["not_run", "not_run"]
    assert len(cancelled.world.out_lines("started-cancel")) == 1


def test_a_run_past_its_suite_timeout_exits_1_as_timed_out(timed_out: Stopped) -> None:
    assert timed_out.result.code == 1, timed_out.result
    assert timed_out.result.data["done"]["state"] == "timed_out"


def test_a_timed_out_run_still_prints_its_table_and_writes_its_record(timed_out: Stopped) -> None:
    row = arm_rows(timed_out.result.stderr)["base"]
    assert row["Planned"] == "4"
    assert timed_out.record["outcome"] == "timed_out"
    results = [t["result"] for t in sorted(timed_out.record["trials"], key=lambda t: t["order"])]
    assert "not_run" in results and "passed" not in results
    assert int(row["Not run"]) == results.count("not_run") >= 2
    assert len(timed_out.world.out_lines("started-late")) < 4
    done = json.loads(timed_out.result.stdout)["data"]["done"]
    assert done["outputs"]["text"] in timed_out.result.stderr
