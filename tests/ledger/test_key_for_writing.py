"""One key per ledger (real SQLite): the key a writing command chains with must be the one the
ledger is chained with; a key is made only for a ledger that has none."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.edge.ledgerkey import key_for_writing, load_key
from armbench.ledger.errors import LedgerKeyMismatch
from armbench.ledger.events import RunCancelRequested, RunStarted
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _written(ledger: Path, key_path: Path) -> str:
    """A ledger with one run chained with the key at key_path (made there); the key's id."""
    key = load_key(key_path, create=True)
    assert key is not None
    store = EventStore(ledger, key=key)
    store.append("r1", [RunStarted(run="r1", workflow="w", source_hash="h", timeout_s=60, at=AT),
                        RunCancelRequested(at=AT)], expected_version=0)
    store.close()
    return key.id


def test_a_new_ledger_gets_a_new_key_and_is_sealed_with_it(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "ledger.sqlite")
    assert store.key_in_use() is None
    key = key_for_writing(store, tmp_path / "home" / "ledger.key")
    store.chain_with(key)
    assert (tmp_path / "home" / "ledger.key").exists()
    assert store.key_in_use() == key.id and store.key is key
    store.close()


def test_the_ledgers_own_key_is_used(tmp_path: Path) -> None:
    key_id = _written(tmp_path / "ledger.sqlite", tmp_path / "a" / "ledger.key")
    store = EventStore(tmp_path / "ledger.sqlite")
    assert store.key_in_use() == key_id
    assert key_for_writing(store, tmp_path / "a" / "ledger.key").id == key_id
    store.close()


@pytest.mark.parametrize("other", ["missing", "another"])
def test_a_missing_or_other_key_is_refused_and_none_is_made(tmp_path: Path, other: str) -> None:
    key_id = _written(tmp_path / "ledger.sqlite", tmp_path / "a" / "ledger.key")
    path = tmp_path / "b" / "ledger.key"
    if other == "another":
        load_key(path, create=True)
    store = EventStore(tmp_path / "ledger.sqlite")
    with pytest.raises(LedgerKeyMismatch) as refused:
        key_for_writing(store, path)
    assert refused.value.exit_code == 2 and refused.value.code == "ledger_key_mismatch"
    assert key_id in refused.value.message and str(path) in refused.value.message
    assert path.exists() == (other == "another")
    store.close()


def test_a_ledger_whose_seal_was_removed_names_its_rows_key(tmp_path: Path) -> None:
    import sqlite3

    key_id = _written(tmp_path / "ledger.sqlite", tmp_path / "a" / "ledger.key")
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        db.execute("DELETE FROM ledger_seal")
    store = EventStore(tmp_path / "ledger.sqlite")
    assert store.seal() is None and store.key_in_use() == key_id
    store.close()
