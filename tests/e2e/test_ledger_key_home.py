"""One key per ledger (issue 23): a second home (a CI job with a cached `.armbench/` and a fresh
home, a worker without the key) is refused before it writes anything and no key is made there;
with the key copied it runs, and every run of the ledger verifies. Commands that only read never
make a key; `armbench ledger key --id` names a key by its id, never printing it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from e2e.conftest import FIX_ADD, World, make_world, visible_task

pytestmark = pytest.mark.e2e


def _world(root: Path) -> World:
    world = make_world(root)
    world.team.tool("agent", "cat > /dev/null\n" + FIX_ADD)
    world.team.suite("s", arms=[{"name": "one"}])
    world.team.task("s", "a", **visible_task(world.project))
    world.init_and_pull()
    return world


def _rows(world: World) -> int:
    return len(world.events())


def test_a_second_home_is_refused_until_it_has_the_ledgers_key(tmp_path: Path) -> None:
    world = _world(tmp_path / "w")
    first = world.armbench("run", "s", "--sandbox")
    assert first.code == 0, first
    key = world.home / "ledger.key"
    made = world.armbench("ledger", "key", "--id")
    assert made.code == 0, made
    key_id = made.data["key"]["id"]
    assert key.read_text().strip() not in made.stdout + made.stderr

    other = tmp_path / "other-home"
    other.mkdir()
    second = {"ARMBENCH_HOME": str(other)}
    rows = _rows(world)
    for args in (("run", "s", "--sandbox"), ("publish",),
                 ("replay", first.data["done"]["run"], "--write"),
                 ("workflow", "start", "s", "--benchmark", "--driver", "external", "--sandbox")):
        refused = world.armbench(*args, env=second)
        assert (refused.code, refused.error["code"]) == (2, "ledger_key_mismatch"), (args, refused)
        message = refused.error["message"]
        assert key_id in message and str(other / "ledger.key") in message, message
        assert "no key" in message and "ARMBENCH_HOME" in message, message
        assert not (other / "ledger.key").exists(), "no key is made for a ledger that has one"
        assert _rows(world) == rows, "nothing was written"

    for args in (("runs",), ("log", first.data["done"]["run"]),
                 ("replay", first.data["done"]["run"]), ("verify", first.data["done"]["run"]),
                 ("export", first.data["done"]["run"], "--db", str(tmp_path / "x.db")),
                 ("dashboard", "--export", str(tmp_path / "site"))):
        read = world.armbench(*args, env=second)
        assert read.code in (0, 1), (args, read)  # verify says the key is missing: exit 1
        assert not (other / "ledger.key").exists(), f"{args[0]} made a key"
    missing = world.armbench("ledger", "key", "--id", env=second)
    assert (missing.code, missing.error["code"]) == (2, "ledger_key_missing"), missing

    wrong = tmp_path / "wrong-home"
    wrong.mkdir()
    wrong_key = world.armbench("ledger", "key", "--id", env={"ARMBENCH_HOME": str(wrong)})
    assert wrong_key.code == 2
    (wrong / "ledger.key").write_text("ab" * 32 + "\n")
    (wrong / "ledger.key").chmod(0o600)
    other_id = world.armbench("ledger", "key", "--id",
                              env={"ARMBENCH_HOME": str(wrong)}).data["key"]["id"]
    forked = world.armbench("run", "s", "--sandbox", env={"ARMBENCH_HOME": str(wrong)})
    assert (forked.code, forked.error["code"]) == (2, "ledger_key_mismatch"), forked
    assert key_id in forked.error["message"] and other_id in forked.error["message"]
    assert _rows(world) == rows

    shutil.copy2(key, other / "ledger.key")  # as CI writes it from a secret
    ran = world.armbench("run", "s", "--sandbox", env=second)
    assert ran.code == 0, ran
    for run in (first.data["done"]["run"], ran.data["done"]["run"]):
        verified = world.armbench("verify", run, env=second)
        assert verified.code == 0, verified
        assert world.armbench("verify", run).code == 0


def test_a_new_ledger_gets_a_new_key_and_reading_makes_none(tmp_path: Path) -> None:
    world = _world(tmp_path / "w")
    key = world.home / "ledger.key"
    assert world.armbench("runs").code == 0
    assert not key.exists(), "a command that only reads made a key"
    ran = world.armbench("run", "s", "--sandbox")
    assert ran.code == 0, ran
    assert key.exists()
    got = world.armbench("ledger", "key")
    assert (got.code, got.error["code"]) == (2, "invalid_inputs")
