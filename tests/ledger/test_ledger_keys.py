"""The ledger key: made once (0600), reused, never shown; keyed rows, the seal that pins runs
written before the key, and a verify that no rewrite without the key gets past (real SQLite)."""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from armbench.benchmark.records.audit import verify_run
from armbench.edge.ledgerkey import load_key
from armbench.ledger.chain import GENESIS, LedgerKey, chain_next, keyed_next, stored_row
from armbench.ledger.errors import LedgerKeyProblem
from armbench.ledger.events import RunCancelRequested, RunStarted, encode_event
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)
FIX = ("Expected the key this ledger was written with; restore that file at {path} (or set "
       "ARMBENCH_HOME to the folder that holds it) and verify again.")
UNKEYED = ("it is chained without the ledger key (plain sha256) in a run the ledger's key must "
           "chain: it was written or rewritten by something that does not hold the key")


def started(run: str) -> list:
    return [RunStarted(run=run, workflow="w", source_hash="h", timeout_s=60, at=AT),
            RunCancelRequested(at=AT)]


# ------------------------------------------------------------------ the key file


def test_the_key_is_made_once_with_mode_0600_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "home" / "ledger.key"
    assert load_key(path, create=False) is None and not path.exists()
    made = load_key(path, create=True)
    assert made is not None and stat.S_IMODE(path.stat().st_mode) == 0o600
    data = path.read_bytes()
    again = load_key(path, create=True)
    assert again is not None and again.id == made.id and path.read_bytes() == data
    assert data.strip().decode() not in repr(made) + str(made)
    assert os.listdir(path.parent) == ["ledger.key"], "no temporary file is left"


def test_processes_making_the_key_at_once_all_read_the_one_that_won(tmp_path: Path) -> None:
    path = tmp_path / "ledger.key"
    ids: list[str] = []
    go = threading.Barrier(8)

    def make() -> None:
        go.wait()
        key = load_key(path, create=True)
        assert key is not None
        ids.append(key.id)

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ids) == 8 and len(set(ids)) == 1


def test_a_key_open_to_others_or_not_a_key_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "ledger.key"
    load_key(path, create=True)
    path.chmod(0o644)
    with pytest.raises(LedgerKeyProblem) as open_to_others:
        load_key(path, create=False)
    assert open_to_others.value.message == (
        f"The ledger key {path} is readable by other users (mode 644); expected 600. Run "
        f"`chmod 600 {path}`.")
    path.chmod(0o600)
    path.write_text("not a key\n")
    with pytest.raises(LedgerKeyProblem) as not_a_key:
        load_key(path, create=False)
    assert not_a_key.value.message == (
        f"The ledger key {path} is not a key: expected 64 hex characters, found something else "
        "(9 characters). Restore the key file this ledger was written with (armbench never "
        "rewrites it).")


# ------------------------------------------------------------------ keyed rows and the seal


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """A ledger with run `old` written before the key, then `new` written with it."""
    path = tmp_path / "l.sqlite"
    before = EventStore(path)
    before.append("old", started("old"), expected_version=0)
    before.close()
    keyed = EventStore(path, key=KEY)
    keyed.append("new", started("new"), expected_version=0)
    keyed.close()
    return path


KEY = LedgerKey(b"k" * 32)
OTHER = LedgerKey(b"o" * 32)


def problems(path: Path, run: str, key: LedgerKey | None = KEY) -> list[str]:
    store = EventStore(path, key=key) if key is not None else EventStore(path)
    try:
        return verify_run(store, run, path.parent / "runs", key_file=Path("/home/me/ledger.key"))
    finally:
        store.close()


def rows(path: Path, run: str) -> list[tuple[int, bytes]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT originator_version, state FROM events WHERE originator_id = ? "
                          "ORDER BY originator_version", (run,)).fetchall()


def rewrite(path: Path, run: str, chain, *, key_id: str | None = None) -> None:
    """Rewrite every row of the run with a recomputed chain, as a forger would."""
    prev = GENESIS
    with sqlite3.connect(path) as db:
        for version, state in rows(path, run):
            body = msgspec.json.encode(msgspec.json.decode(state)["event"])
            prev = chain(prev, body)
            db.execute("UPDATE events SET state = ? WHERE originator_id = ? AND "
                       "originator_version = ?", (stored_row(prev, body, key_id), run, version))


def test_keyed_rows_carry_the_key_id_and_both_runs_verify(ledger: Path) -> None:
    assert all(b'"key":"' + KEY.id.encode() + b'"' in s for _, s in rows(ledger, "new"))
    assert not any(b'"key"' in s for _, s in rows(ledger, "old"))
    assert problems(ledger, "old") == [] and problems(ledger, "new") == []


def test_a_keyed_run_rewritten_unkeyed_is_refused(ledger: Path) -> None:
    rewrite(ledger, "new", chain_next)
    assert problems(ledger, "new") == [f"event 1: {UNKEYED}"]


def test_a_keyed_run_rewritten_with_another_key_is_refused(ledger: Path) -> None:
    rewrite(ledger, "new", lambda prev, body: keyed_next(OTHER, "new", prev, body),
            key_id=OTHER.id)
    assert problems(ledger, "new") == [
        f"run new is chained with key id {OTHER.id}, but the key at /home/me/ledger.key has id "
        f"{KEY.id}. " + FIX.format(path="/home/me/ledger.key")]
    rewrite(ledger, "new", lambda prev, body: keyed_next(OTHER, "new", prev, body),
            key_id=KEY.id)  # this ledger's key id, written by a forger who lacks its key
    assert problems(ledger, "new") == [
        "event 1: its bytes or its place do not match the hash chain (edited, reordered, or an "
        "earlier event removed)"]


def test_a_run_from_before_the_key_is_pinned_by_the_seal(ledger: Path) -> None:
    [(_, state)] = rows(ledger, "old")[1:]
    with sqlite3.connect(ledger) as db:  # an edit with the unkeyed chain recomputed
        body = encode_event(RunCancelRequested(at=AT, by="forger"))
        first = msgspec.json.decode(rows(ledger, "old")[0][1])["chain"]
        db.execute("UPDATE events SET state = ? WHERE originator_id = 'old' AND "
                   "originator_version = 2", (stored_row(chain_next(first, body), body, None),))
    assert state != rows(ledger, "old")[1][1]
    assert problems(ledger, "old") == [
        "event 2: its chain value differs from the one the ledger's seal pinned for this run "
        "when the key was made: the run was rewritten since"]


def test_a_run_from_before_the_key_goes_on_keyed(ledger: Path) -> None:
    store = EventStore(ledger, key=KEY)
    store.append("old", [RunCancelRequested(at=AT)], expected_version=2)
    store.close()
    assert b'"key"' in rows(ledger, "old")[2][1]
    assert problems(ledger, "old") == []


def test_a_removed_seal_is_never_made_again_and_unkeyed_runs_then_fail(ledger: Path) -> None:
    with sqlite3.connect(ledger) as db:
        db.execute("DELETE FROM ledger_seal")
    EventStore(ledger, key=KEY).close()  # a keyed store opens the ledger again
    with sqlite3.connect(ledger) as db:
        assert db.execute("SELECT count(*) FROM ledger_seal").fetchone() == (0,)
    assert problems(ledger, "new") == []
    assert problems(ledger, "old") == [f"event 1: {UNKEYED}"]


def test_an_edited_seal_is_refused(ledger: Path) -> None:
    with sqlite3.connect(ledger) as db:
        [seal] = db.execute("SELECT seal FROM ledger_seal").fetchone()
        forged = msgspec.json.decode(seal)
        forged["legacy"]["new"] = [2, "0" * 64]
        db.execute("UPDATE ledger_seal SET seal = ?", (msgspec.json.encode(forged),))
    assert problems(ledger, "new") == [
        f"the ledger's seal does not match its key (id {KEY.id}): it was edited, so which runs "
        "were written before the key cannot be told. Nothing in this ledger can be trusted "
        "beyond its published records."]


def test_verify_without_the_key_or_with_another_says_what_it_expected(ledger: Path) -> None:
    fix = FIX.format(path="/home/me/ledger.key")
    assert problems(ledger, "new", key=None) == [
        f"the ledger is keyed (key id {KEY.id}), and no ledger key was found at "
        f"/home/me/ledger.key. {fix}"]
    assert problems(ledger, "old", key=None) == problems(ledger, "new", key=None)
    assert problems(ledger, "new", key=OTHER) == [
        f"the ledger was sealed with key id {KEY.id}, but the key at /home/me/ledger.key has id "
        f"{OTHER.id}. {fix}"]


def test_a_ledger_written_before_keys_verifies_without_a_key(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    store.append("old", started("old"), expected_version=0)
    store.close()
    assert problems(tmp_path / "l.sqlite", "old", key=None) == []
