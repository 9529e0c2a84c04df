"""One judged suite through every driver, on both stores (issues 23 and 24): the local driver
(`armbench run`), an external driver's one-shot verbs (`workflow next --prepare`, `launch`,
`report`, each a process), one `workflow serve` process, and `armbench work`, on SQLite and on
PostgreSQL. Every one labels the trials as `run` does (a correct change passed, a wrong one
failed, a judge's nonsense unscored) and no judge step is `tool_unavailable`; the records are
the same but for run ids and times.

Before the composition root handed every process the run's tools, the judge step in an
external driver's `next --prepare` process found no tool and every trial came out unscored.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from armbench.ledger.store import EventStore
from e2e.conftest import ARMBENCH, FIX_ADD, World, make_world

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PY_DRIVER = Path(__file__).resolve().parents[2] / "examples" / "drivers" / "driver.py"
DRIVERS = ("local", "external", "serve", "work")
STORES = ("sqlite", "postgresql")

AGENT = r"""
set -eu
prompt=$(cat)
case "$prompt" in *"Please fix"*) """ + FIX_ADD.strip() + """ ;; esac
"""

JUDGE = r"""
set -u
prompt=$(cat)
case "$prompt" in *"JUDGE-NONSENSE"*) echo "I like turtles"; exit 0 ;; esac
case "$prompt" in
  *"+    return a + b"*) echo '{"label": "correct", "reason": "fixed"}' ;;
  *) echo '{"label": "incorrect", "reason": "not fixed"}' ;;
esac
"""

TASKS = {
    "correct": ("Please fix add() in calc.py: it subtracts.", "add() returns the sum."),
    "wrong": ("Look at add() in calc.py, change nothing.", "add() returns the sum."),
    "garbled": ("Please fix add() in calc.py.", "add() returns the sum. JUDGE-NONSENSE"),
}
WANT = {"correct": "passed", "wrong": "failed", "garbled": "unscored"}
VARYING = {"durationMs", "run", "at", "startedAt", "endedAt", "writtenAt", "chain", "id",
           "sourceHash", "duration_ms", "ledger", "createdAt", "generatedAt", "driver",
           "lane", "lanes"}


def _world(root: Path) -> World:
    world = make_world(root)
    world.team.tool("agent", AGENT)
    world.team.tool("judge", JUDGE)
    world.team.suite("judged", timeout="5m", parallel=2, judge={"tool": "judge"})
    for task, (prompt, criteria) in TASKS.items():
        world.team.task("judged", task, prompt=prompt,
                        startingCommit=world.project.commits["start"], successCriteria=criteria)
    world.init_and_pull()
    return world


def _through(world: World, driver: str, env: dict[str, str]) -> str:
    """Work one run of the judged suite through `driver`; its run id."""
    if driver == "local":
        got = world.armbench("run", "judged", "--sandbox", env=env)
        assert got.code == 0, got
        return str(got.data["done"]["run"])
    if driver == "work":
        started = world.armbench("run", "judged", "--sandbox", "--driver", "none", env=env)
        assert started.code == 0, started
        run = str(started.data["started"]["run"])
        worked = world.armbench("work", run, "--sandbox", "--lanes", "2", env=env)
        assert worked.code == 0, worked
        return run
    started = world.armbench("workflow", "start", "judged", "--benchmark", "--driver",
                             "external", "--sandbox", env=env)
    assert started.code == 0, started
    run = str(started.data["run"]["id"])
    argv = [sys.executable, str(PY_DRIVER), run, "--tools", "agent,judge"]
    if driver == "serve":
        argv.append("--serve")
    done = subprocess.run(argv, cwd=world.checkout, env={**world.env, **env,
                                                         "ARMBENCH": str(ARMBENCH)},
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1])["state"] == "succeeded"
    return run


def _steady(value: Any) -> Any:
    """The record without what differs between two runs of one suite: ids, times, drivers."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _judge_failures(ledger: str, run: str) -> list[tuple[str, str]]:
    store = EventStore(ledger)
    try:
        events = [json.loads(raw)["event"] for _, raw in store.read_raw(run)]
    finally:
        store.close()
    return [(e["step"], e["cause"]) for e in events if e["type"] == "JudgeFailed"]


@pytest.mark.parametrize("store", STORES)
def test_every_driver_labels_a_judged_suite_as_run_does(tmp_path: Path, store: str,
                                                        request: pytest.FixtureRequest) -> None:
    world = _world(tmp_path / "w")
    env: dict[str, str] = {}
    ledger = str(world.ledger)
    if store == "postgresql":
        ledger = request.getfixturevalue("postgres_url")
        env = {"ARMBENCH_LEDGER_URL": ledger}
    records = {}
    for driver in DRIVERS:
        run = _through(world, driver, env)
        record = world.record(run)
        got = {t["task"]: t["result"] for t in record["trials"]}
        assert got == WANT, (driver, got)
        failed = _judge_failures(ledger, run)
        assert [cause for _, cause in failed] == ["not_json"], (driver, failed)
        records[driver] = _steady(record)
    for driver in DRIVERS[1:]:
        assert records[driver] == records["local"], driver
    if store == "postgresql":
        assert not world.ledger.exists()  # nothing went to the SQLite file
