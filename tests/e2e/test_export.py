"""`armbench export`: the run's trials as SQLite rows that match its record."""

from __future__ import annotations

import sqlite3

import pytest

from e2e.conftest import FIX_ADD, World, hidden_task

pytestmark = pytest.mark.e2e


def test_export_writes_one_row_per_trial_with_the_records_results(world: World) -> None:
    project, team = world.project, world.team
    team.tool("agent", "cat > /dev/null\n"
                       'if [ "$ARMBENCH_MODEL" = fixer ]; then ' + FIX_ADD.strip() + "; fi\n")
    team.suite("export", arms=[{"name": "fixes", "model": "fixer"},
                               {"name": "idle", "model": "idler"}], repetitions=2)
    team.task("export", "add", **hidden_task(project))
    world.init_and_pull()
    ran = world.armbench("run", "export", "--sandbox")
    run = ran.data["done"]["run"]
    record = world.record(run)

    exported = world.armbench("export", run, "--db", str(world.root / "out.db"))

    assert exported.code == 0, exported
    assert exported.data["export"]["trials"] == 4
    db = sqlite3.connect(world.root / "out.db")
    rows = db.execute("SELECT arm, repetition, result FROM trials ORDER BY trial_order").fetchall()
    assert rows == [(t["arm"], t["repetition"], t["result"]) for t in record["trials"]]
    assert {r for (_, _, r) in rows} == {"passed", "failed"}
    again = world.armbench("export", run, "--db", str(world.root / "out.db"))
    assert again.code == 0 and db.execute("SELECT count(*) FROM trials").fetchone() == (4,)
