"""The workflow's own verbs as the specification gives them (benchmark-suites.md, "Command"):
`armbench check --baseline|--trial` prints `{"result": "passed"|"failed"|"could_not_run"}` and
exits 0, or 1 when it could not set the check up; `armbench report` prints `{ text, table }`.

`workflow next` runs these steps in armbench's own process, so no driver is handed them today;
each test holds the step's lease as a driver would (taken from the run's decider, not run) and
runs the verb with the lease's variables, as a driver that is handed it would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.conftest import FIX_ADD, World, make_world, visible_task

pytestmark = pytest.mark.e2e

AGENT = "set -eu\ncat >/dev/null\n" + FIX_ADD
LEASE = """
import functools, json, sys
from armbench.aggregates.workflow import Caps
from armbench.cli.compose import compose
from armbench.ledger.events import StepLeased

engine = compose(access="run").engine
run, wanted = sys.argv[1], sys.argv[2]
caps = Caps(driver="verbs", tools=frozenset(), sole=False, prepares=False)
while True:  # the decider's next lease; every host step before the wanted one runs here
    events = engine._decide(run, functools.partial(engine._next_events, caps, engine.new_id("l")))
    assert events, engine.state(run).steps.keys()
    leased = [e for e in events if isinstance(e, StepLeased)]
    if not leased:  # steps settled (a cancelled run's skipped ones): decide again
        continue
    spec = engine.state(run).steps[leased[-1].step].spec
    if spec.command and wanted in spec.command:
        print(json.dumps({"lease": leased[-1].lease, "step": spec.id}))
        break
    engine.execute_leased(run, leased[-1].lease)
"""


def _world(tmp_path: Path, **suite: object) -> World:
    world = make_world(tmp_path / "w")
    world.team.tool("agent", AGENT)
    world.team.suite("s", **suite)
    world.team.task("s", "a", **visible_task(world.project))
    world.init_and_pull()
    return world


def _leased(world: World, run: str, verb: str) -> dict[str, str]:
    done = subprocess.run([sys.executable, "-c", LEASE, run, verb], cwd=world.checkout,
                          env=world.env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    got: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return got


def _started(world: World) -> str:
    started = world.armbench("run", "s", "--sandbox", "--driver", "none")
    assert started.code == 0, started
    run: str = started.data["started"]["run"]
    return run


def test_check_baseline_prints_the_result_and_exits_0(tmp_path: Path) -> None:
    world = _world(tmp_path)
    run = _started(world)
    held = _leased(world, run, "check --baseline")
    got = world.armbench("check", "--baseline", env={"ARMBENCH_RUN": run, "ARMBENCH_LEASE": held["lease"]})
    assert got.code == 0, got
    envelope = json.loads(got.stdout)
    assert envelope["result"] == "failed"  # a valid task's check fails at its start
    assert envelope["data"]["report"]["outcome"] == "succeeded"


def test_check_that_could_not_be_set_up_exits_1(tmp_path: Path) -> None:
    world = _world(tmp_path, setup="exit 3")
    run = _started(world)
    held = _leased(world, run, "check --baseline")
    got = world.armbench("check", "--baseline", env={"ARMBENCH_RUN": run, "ARMBENCH_LEASE": held["lease"]})
    assert got.code == 1, got
    assert json.loads(got.stdout)["result"] == "could_not_run"


def test_report_prints_text_and_table(tmp_path: Path) -> None:
    world = _world(tmp_path)
    run = _started(world)
    worked = world.armbench("workflow", "cancel", run)
    assert worked.code == 0, worked
    held = _leased(world, run, "armbench report")
    got = world.armbench("report", env={"ARMBENCH_RUN": run, "ARMBENCH_LEASE": held["lease"]})
    assert got.code == 0, got
    envelope = json.loads(got.stdout)
    assert "Suite s" in envelope["text"] or "| Arm |" in envelope["text"], envelope["text"]
    assert isinstance(envelope["table"], dict) and envelope["table"]
    assert world.record(run)["run"] == run
