"""armbench's PostgreSQL role (`armbench ledger grant`, which `scripts/postgres.sh` and the
scale-out guide use): not a superuser, owning nothing, it keeps a ledger (events, chain, seal,
snapshots) and can change or remove no row of it, nor run a command on the server."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from armbench.ledger.chain import LedgerKey
from armbench.ledger.chaincheck import rule_for, verify_chain
from armbench.ledger.events import RunCancelRequested, RunStarted, StepLeased
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)
KEY = LedgerKey(b"k" * 32)
ARMBENCH = Path(sys.executable).parent / "armbench"
pytestmark = pytest.mark.slow  # a database, a role and the installed command per test: seconds in all


@pytest.fixture
def granted(postgres_server: str) -> Iterator[tuple[str, str]]:
    """A new database and a new login role (no superuser), granted by the installed command:
    (the owner's URL, the role's URL)."""
    name, role, password = (f"t_{secrets.token_hex(6)}", f"r_{secrets.token_hex(6)}",
                            secrets.token_hex(16))
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        conn.execute(f"CREATE ROLE \"{role}\" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE "
                     f"PASSWORD '{password}'")
    base = postgres_server.rsplit("/", 1)[0]
    owner = f"{base}/{name}"
    host = base.split("@", 1)[1]
    done = subprocess.run([str(ARMBENCH), "ledger", "grant", owner, role], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["data"]["granted"]["role"] == role
    assert password not in done.stdout + done.stderr
    yield owner, f"postgresql://{role}:{password}@{host}/{name}"


def _filled(url: str) -> EventStore:
    store = EventStore(url, key=KEY)
    store.append("r1", [RunStarted(run="r1", workflow="w", timeout_s=1, at=AT, source_hash="h"),
                        StepLeased(step="a", lease="l1", driver="d", at=AT, expires_at=AT),
                        RunCancelRequested(at=AT)], expected_version=0)
    return store


def test_the_role_keeps_a_keyed_ledger_with_its_seal_and_snapshots(granted) -> None:
    _, url = granted
    store = _filled(url)
    try:
        assert store.seal() is not None and store.version("r1") == 3
        assert store.save_snapshot("r1", 3, "f", b"state") and store.snapshot("r1", "f") == b"state"
        assert store.save_snapshot("r1", 5, "f", b"newer") and store.snapshot("r1", "f") == b"newer"
        store.drop_snapshot("r1")
        assert store.snapshot("r1", "f") is None
        rule, problem = rule_for("r1", store.read_raw("r1"), key=KEY, seal=store.seal(),
                                 ledger_keyed=True, key_file="k")
        assert problem is None and verify_chain(store.read_raw("r1"), stream="r1", rule=rule) is None
    finally:
        store.close()


@pytest.mark.parametrize("statement", [
    "UPDATE armbench_events SET topic = 'CheckRan'",
    "DELETE FROM armbench_events",
    "TRUNCATE armbench_events",
    "UPDATE armbench_seal SET seal = 'forged'",
    "DELETE FROM armbench_seal",
    "ALTER TABLE armbench_events DISABLE TRIGGER ALL",
    "DROP TABLE armbench_events",
    "CREATE TABLE armbench_events_copy (state bytea)",
    "SET session_replication_role = replica",
    "COPY armbench_events FROM PROGRAM 'touch {marker}'",
    "COPY (SELECT 1) TO PROGRAM 'touch {marker}'",
    "SELECT pg_read_file('/etc/hostname')",
])
def test_the_role_cannot_change_a_row_or_reach_the_server(granted, statement: str,
                                                         tmp_path: Path) -> None:
    owner, url = granted
    _filled(url).close()
    marker = Path("/tmp") / f"armbench-role-{secrets.token_hex(6)}"
    before = _rows(owner)
    with psycopg.connect(url, autocommit=True) as conn, pytest.raises(psycopg.Error):
        conn.execute(statement.format(marker=marker))
    assert _rows(owner) == before
    assert not marker.exists()


def test_the_owner_cannot_rewrite_a_row_either(granted) -> None:
    """The trigger stands for every role, the tables' owner too: no row is ever changed."""
    owner, url = granted
    _filled(url).close()
    with psycopg.connect(owner, autocommit=True) as conn, pytest.raises(
            psycopg.errors.InsufficientPrivilege, match="append-only"):
        conn.execute("UPDATE armbench_events SET topic = 'CheckRan'")


def test_grant_refuses_a_sqlite_ledger_and_a_missing_role(granted, tmp_path: Path) -> None:
    owner, _ = granted
    for args, code in (([str(tmp_path / "l.sqlite"), "armbench"], "invalid_inputs"),
                       ([owner, "nobody_here"], "ledger_grant_failed")):
        done = subprocess.run([str(ARMBENCH), "ledger", "grant", *args], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2, done
        assert json.loads(done.stdout)["error"]["code"] == code
        assert "Traceback" not in done.stderr


def _rows(url: str) -> list[tuple]:
    with psycopg.connect(url) as conn:
        return [tuple(r) for r in conn.execute(
            "SELECT originator_id, originator_version, topic, state FROM armbench_events ORDER BY "
            "notification_id").fetchall()]
