"""The SQLite store on eventsourcing's public API: the library's pool opens every connection,
and the store tunes each one (WAL with synchronous=NORMAL to write, query_only to read) without
touching the library's private attributes. The contract both stores keep is in
`test_store_contract.py`."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ledger.errors import StorageFault
from ledger.rows import StoredRow
from ledger.rows_sqlite import SqliteRows

ROOT = Path(__file__).resolve().parents[2]
ROW = StoredRow("run-1", 1, "RunStarted", b'{"chain":"x"}')


def _pragmas(rows: SqliteRows, *, commit: bool) -> list[tuple[str, int, int]]:
    """journal_mode, synchronous and query_only of two connections the pool hands out at once
    (a transaction inside another takes a second connection)."""
    ask = "SELECT * FROM pragma_journal_mode, pragma_synchronous, pragma_query_only"
    ds = rows._datastore
    with ds.transaction(commit=commit) as outer, ds.transaction(commit=commit) as inner:
        outer.execute(ask)
        inner.execute(ask)
        assert outer.sqlite_cursor.connection is not inner.sqlite_cursor.connection
        return [tuple(outer.fetchone()), tuple(inner.fetchone())]


def test_every_writing_connection_is_wal_with_synchronous_normal(tmp_path: Path) -> None:
    rows = SqliteRows(tmp_path / "ledger.sqlite")
    try:
        rows.insert([ROW])
        assert _pragmas(rows, commit=False) == [("wal", 1, 0), ("wal", 1, 0)]
    finally:
        rows.close()


def test_every_read_only_connection_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    SqliteRows(path).close()
    rows = SqliteRows(path, read_only=True)
    try:
        assert [q for _, _, q in _pragmas(rows, commit=False)] == [1, 1]
        with pytest.raises(StorageFault):
            rows.insert([ROW])
        assert rows.select("run-1") == []
    finally:
        rows.close()


@pytest.mark.parametrize("module", ["ledger/rows_sqlite.py", "ledger/rows_postgres.py"])
def test_the_stores_use_only_the_librarys_public_api(module: str) -> None:
    """No `_private` attribute of anything but the store itself, and no attribute of another
    object set (as replacing the library's pool was): what lets eventsourcing move within
    its minor version. (`cursor` is a sqlite3 cursor: its `row_factory` is the stdlib's.)"""
    tree = ast.parse((ROOT / module).read_text())
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id == "self")):
            found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if (isinstance(t, ast.Attribute)
                        and not (isinstance(t.value, ast.Name) and t.value.id == "self")
                        and not (isinstance(t.value, ast.Name) and t.value.id == "cursor")):
                    found.append(f"line {node.lineno}: sets .{t.attr}")
    assert found == []
