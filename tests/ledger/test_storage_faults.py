"""The store's boundary: SQLite and file-system failures leave `EventStore` as typed
`StorageFault`s (`DiskFull` is what the run path catches when the disk fills during a run), and
what was committed before stays readable.

Run against real SQLite on a real tmpfs and a real read-only bind mount, each in a private
mount namespace (`unshare`, as root), in a child Python that prints what it saw as JSON.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from armbench.ledger.errors import LedgerCorrupt, LedgerEmpty
from armbench.ledger.rows_sqlite import SqliteRows
from armbench.ledger.store import EventStore
from armbench.ledger.storefaults import check_file

CHILD = """
import json, sys
from datetime import UTC, datetime
from armbench.ledger.errors import StorageFault
from armbench.ledger.events import RunStarted
from armbench.ledger.store import EventStore

def started(i):
    return RunStarted(run="r1", workflow="w", source_hash="x", timeout_s=1,
                      inputs={"pad": "y" * 20000, "i": str(i)}, at=datetime.now(UTC))
"""


def in_namespace(setup: str, body: str) -> dict[str, Any]:
    script = CHILD + textwrap.dedent(body)
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-euc",
         f'{setup}\nexec "$@"', "sh", sys.executable, "-c", script],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_disk_that_fills_during_appends_is_disk_full_and_keeps_what_was_committed(
        tmp_path: Path) -> None:
    folder = tmp_path / "disk"
    folder.mkdir()
    got = in_namespace(f"mount -t tmpfs -o size=3m tmpfs {folder}", f"""
        store = EventStore("{folder}/ledger.sqlite")
        version, fault = 0, None
        try:
            for i in range(1000):
                version = store.append("r1", [started(i)], expected_version=version)
        except StorageFault as exc:
            fault = exc
        again = EventStore.for_reading("{folder}/ledger.sqlite")
        print(json.dumps({{"kind": type(fault).__name__, "code": fault.code,
                           "exit": fault.exit_code, "message": fault.message,
                           "committed": version, "read": again.version("r1"),
                           "read_only": again.read_only}}))
    """)
    assert got["kind"] == "DiskFull" and got["code"] == "disk_full" and got["exit"] == 2
    assert got["message"].startswith(f"The file system holding the ledger {folder} is full (")
    assert got["committed"] > 0
    assert got["read"] == got["committed"]
    assert got["read_only"] is True  # the full disk has no room for a writer's open


def test_a_read_only_ledger_opens_for_reading_and_refuses_an_append(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    store = EventStore(folder / "ledger.sqlite")
    setup_body = CHILD + 'EventStore(sys.argv[1]).append("r1", [started(0)], expected_version=0)'
    subprocess.run([sys.executable, "-c", setup_body, str(folder / "ledger.sqlite")], check=True)
    store.close()
    got = in_namespace(
        f"mount --bind {folder} {folder}\nmount -o remount,ro,bind {folder} {folder}", f"""
        out = {{}}
        try:
            EventStore("{folder}/ledger.sqlite")
        except StorageFault as exc:
            out["writer"] = exc.code
        store = EventStore.for_reading("{folder}/ledger.sqlite")
        out["version"] = store.version("r1")
        try:
            store.append("r1", [started(1)], expected_version=1)
        except StorageFault as exc:
            out["append"] = exc.code
        empty = EventStore.for_reading("{folder}/missing.sqlite")
        out["missing"] = [r.stream for r in empty.all()]
        print(json.dumps(out))
    """)
    assert got == {"writer": "ledger_read_only", "version": 1, "append": "ledger_read_only",
                   "missing": []}


def test_the_file_is_looked_at_before_sqlite_opens_it(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.sqlite"
    ledger.write_bytes(b"")
    with pytest.raises(LedgerEmpty, match=r"is empty \(0 bytes\), but records of 1 run"):
        EventStore(ledger, witnesses=[tmp_path / "runs" / "r1" / "benchmark.json"])
    ledger.write_bytes(b"PK\x03\x04" + b"\0" * 200)
    with pytest.raises(LedgerCorrupt, match=r"is not an SQLite database: its first bytes"):
        EventStore.for_reading(ledger)
    ledger.write_bytes(b"")
    EventStore(ledger).close()  # no records beside it: a new ledger, as before
    assert ledger.read_bytes().startswith(b"SQLite format 3\x00")


def test_a_file_a_checkpoint_is_filling_is_not_truncated_and_a_short_one_alone_is(
        tmp_path: Path) -> None:
    """A checkpoint writes page 1 (with the new size in its header) before the pages after it:
    another process's open in between saw a short file and called the ledger truncated
    (`test_many_processes_opening_a_new_ledger_at_once_all_open_it`, 2 runs in 60). Built here
    as that moment is: the new page 1, the old pages, the log that holds the rest."""
    ledger, wal = tmp_path / "ledger.sqlite", tmp_path / "ledger.sqlite-wal"
    SqliteRows(ledger).close()
    with closing(sqlite3.connect(ledger, isolation_level=None)) as db:
        db.execute("PRAGMA wal_autocheckpoint=0")
        db.executemany("INSERT INTO events VALUES (?, ?, 'T', ?)",
                       [("r1", v, b"x" * 3000) for v in range(1, 9)])
        before, log = ledger.read_bytes(), wal.read_bytes()
    after = ledger.read_bytes()
    assert len(after) > len(before) and not wal.exists()
    ledger.write_bytes(after[:4096] + before[4096:])
    wal.write_bytes(log)
    assert check_file(ledger)
    rows = SqliteRows(ledger)
    try:
        assert [v for v, _ in rows.select("r1")] == list(range(1, 9))
    finally:
        rows.close()
    ledger.write_bytes(after[:len(before)])
    with pytest.raises(LedgerCorrupt, match=rf"is truncated: it has {len(before)} bytes and its "
                                            rf"header says {len(after)},"):
        check_file(ledger)
