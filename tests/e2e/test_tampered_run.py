"""A run whose ledger a trial forged a row into is reported as tampered by its own driver.

The tool runs without the sandbox (`workflows.isolation: declared`), so it reaches the run's
SQLite ledger as a trial once reached a member's PostgreSQL socket, and appends one row to its own
run: a row no holder of the ledger key wrote. The driver's next read of the run finds it, and
`armbench run` ends with exit 3 and the `run_tampered` envelope naming that event; the first,
honest run of the same ledger reads as before."""

from __future__ import annotations

import json

import pytest

from e2e.conftest import World, hidden_task

pytestmark = pytest.mark.e2e

FORGER = r'''
import os
import sqlite3
import sys

if "forge" in sys.stdin.read():
    db = sqlite3.connect(os.environ["E2E_LEDGER"])
    run, last = db.execute("SELECT originator_id, max(originator_version) FROM events GROUP BY "
                           "originator_id ORDER BY max(rowid) DESC").fetchone()
    db.execute("INSERT INTO events (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)",
               (run, last + 1, "CheckRan", b'{"chain":"' + b"0" * 64 + b'","event":{"type":"CheckRan"}}'))
    db.commit()
'''


def test_the_runs_own_driver_reports_a_forged_row_as_tampered(world: World) -> None:
    project, team = world.project, world.team
    team.tool("agent", FORGER, lang="python")
    team.suite("honest")
    team.task("honest", "plain", prompt="plain: fix add().\n", **hidden_task(project))
    team.suite("forged")
    team.task("forged", "forge", prompt="forge: fix add().\n", **hidden_task(project))
    world.init_and_pull()
    world.configure(isolation="declared", sandbox=True)
    env = {"E2E_LEDGER": str(world.ledger)}
    first = world.armbench("run", "honest", env=env)
    assert first.code == 0, first
    honest = first.data["done"]["run"]

    forged = world.armbench("run", "forged", env=env)
    assert forged.code == 3, forged
    error = forged.error
    assert error["code"] == "run_tampered", error
    (run,) = [e["run"] for e in world.events("RunStarted") if e["run"] != honest]
    assert error["message"].startswith(f"Run {run}'s log cannot be trusted: its event ")
    assert "Traceback" not in forged.stderr

    listed = world.armbench("runs", "--json")
    assert listed.code == 0, listed
    states = {r["run"]: r["state"] for r in map(json.loads, listed.stdout.splitlines())}
    assert states == {honest: "succeeded", run: "tampered"}
    assert world.armbench("replay", honest).code == 0
    aside = world.armbench("ledger", "quarantine", run)
    assert aside.code == 0, aside
    listed = world.armbench("runs", "--json")
    assert {r["run"]: r["state"] for r in map(json.loads, listed.stdout.splitlines())} == \
        {honest: "succeeded", run: "quarantined"}
