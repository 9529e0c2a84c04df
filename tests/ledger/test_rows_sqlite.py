"""The SQLite store on eventsourcing's public API: the library's pool opens every connection,
and the store tunes each one (WAL with synchronous=NORMAL to write, query_only to read) without
touching the library's private attributes. The contract both stores keep is in
`test_store_contract.py`."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from armbench.ledger.errors import StorageFault
from armbench.ledger.rows import StoredRow
from armbench.ledger.rows_sqlite import SqliteRows, reads_layout

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


def test_the_fast_read_is_used_only_for_the_table_the_recorder_declares() -> None:
    """The store's own SQL reads the recorder's table only while the recorder's own statements
    declare it with the columns that SQL names; otherwise `select_events` alone."""
    rows = SqliteRows(":memory:")
    try:
        assert reads_layout(rows._recorder.create_table_statements)
        assert rows.fast_read
    finally:
        rows.close()
    renamed = ("CREATE TABLE IF NOT EXISTS events (originator_id TEXT, originator_version "
               "INTEGER, topic TEXT, body BLOB, PRIMARY KEY (originator_id, originator_version))")
    assert not reads_layout([renamed])
    assert not reads_layout([renamed.replace("events", "stored_events")
                             .replace("body", "state")])
    assert not reads_layout([])


def test_both_reads_give_the_same_rows(tmp_path: Path) -> None:
    """Every shape of `select` (after, through, tags, last and their mixes) gives the same
    rows through the store's SQL and through `select_events`, beside another stream."""
    rows = SqliteRows(tmp_path / "ledger.sqlite")
    try:
        for stream in ("run-1", "run-2"):
            rows.insert([StoredRow(stream, v, ("A", "B", "C")[v % 3], f"{stream}:{v}".encode())
                         for v in range(1, 31)])
        shapes: list[dict[str, object]] = [
            {}, {"after": 7}, {"through": 12}, {"after": 3, "through": 20}, {"tags": ["A"]},
            {"tags": ["B", "C"], "after": 5}, {"tags": ["A", "C"], "through": 17},
            {"tags": []}, {"tags": ["Z"]}, {"last": True}, {"last": True, "after": 30},
            {"last": True, "tags": ["B"]}, {"last": True, "tags": ["A"], "through": 20},
            {"last": True, "through": 9}]
        fast = [rows.select("run-1", **s) for s in shapes]  # type: ignore[arg-type]
        rows.fast_read = False
        public = [rows.select("run-1", **s) for s in shapes]  # type: ignore[arg-type]
        assert fast == public
        assert fast[0] == [(v, f"run-1:{v}".encode()) for v in range(1, 31)]
        assert fast[4] == [(v, f"run-1:{v}".encode()) for v in range(3, 31, 3)]
        assert fast[11] == [(28, b"run-1:28")]
    finally:
        rows.close()


_OPENER = """
import sys
from armbench.ledger.errors import StorageFault
from armbench.ledger.rows_sqlite import SqliteRows
print("ready", flush=True)
for path in sys.stdin:
    try:
        SqliteRows(path.strip()).close()
        print("opened", flush=True)
    except StorageFault as fault:
        print(str(fault).replace("\\n", " "), flush=True)
"""
"""A process that opens each ledger path it is sent as soon as the line arrives."""


def test_processes_creating_one_ledger_at_once_all_open_it(tmp_path: Path) -> None:
    """Two `armbench run`s started together on a team's first run both create the ledger. Going
    into WAL takes a lock SQLite does not wait for (`PRAGMA journal_mode=WAL` answers 'database
    is locked' at once, whatever the busy timeout): the store waits for it up to its lock
    timeout, as for any other lock. Six processes are sent the path of one new ledger at once,
    24 times (12 of 30 two-run starts failed before; without the fix this fails 10 runs in 10)."""
    procs = [subprocess.Popen([sys.executable, "-c", _OPENER], cwd=ROOT, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}) for _ in range(6)]
    try:
        assert [p.stdout.readline() for p in procs] == ["ready\n"] * 6  # type: ignore[union-attr]
        for attempt in range(24):
            path = str(tmp_path / f"ledger-{attempt}.sqlite")
            for p in procs:
                p.stdin.write(path + "\n")  # type: ignore[union-attr]
            for p in procs:
                p.stdin.flush()  # type: ignore[union-attr]
            said = [p.stdout.readline().strip() for p in procs]  # type: ignore[union-attr]
            assert said == ["opened"] * 6, (attempt, said)
            rows = SqliteRows(path)
            try:
                assert _pragmas(rows, commit=False)[0][0] == "wal"
            finally:
                rows.close()
    finally:
        for p in procs:
            p.stdin.close()  # type: ignore[union-attr]  # the end of the paths: it ends
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            p.stdout.close()  # type: ignore[union-attr]
