"""The embedded store: a SQLite file through eventsourcing's SQLite application recorder.

Events go through the recorder's public API (`insert_events`, `select_events`,
`select_notifications`); the `snapshots` and `ledger_seal` tables are armbench's own, beside
the library's `events` table. One read is faster as armbench's SQL on the `events` table (a
stream's rows, perhaps only some tags: what a projection reads): it is used only while the
recorder declares that table with the columns it names (`reads_layout`), and otherwise the same
rows come through `select_events`. The library's pool opens every
connection (WAL on a file); each connection is tuned once, through the datastore's public
`get_connection`, before its first transaction: `synchronous=NORMAL`, or `query_only` when
read-only. A new file is put into WAL first, waiting for the lock that change takes
(`_go_into_wal`). Every sqlite3, eventsourcing or OS failure is diagnosed into a `StorageFault`
naming the file (`ledger.storefaults`).
"""

from __future__ import annotations

import re
import sqlite3
import time
import weakref
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

from eventsourcing.persistence import IntegrityError, PersistenceError, StoredEvent
from eventsourcing.sqlite import (
    SQLiteApplicationRecorder,
    SQLiteConnection,
    SQLiteCursor,
    SQLiteDatastore,
)

from armbench.ledger.errors import StorageFault
from armbench.ledger.rows import LogScan, Notification, RowConflict, StoredRow, select_through
from armbench.ledger.storefaults import (
    check_file,
    diagnose,
    read_only_refusal,
    read_only_uri,
    require_room,
    writable,
)

__all__ = ["SqliteRows", "reads_layout"]

_SNAPSHOTS = ("CREATE TABLE IF NOT EXISTS snapshots (stream TEXT PRIMARY KEY, version INTEGER NOT "
              "NULL, format TEXT NOT NULL, state BLOB NOT NULL)")
_SAVE_SNAPSHOT = ("INSERT INTO snapshots VALUES (?, ?, ?, ?) ON CONFLICT(stream) DO UPDATE SET "
                  "version = excluded.version, format = excluded.format, state = excluded.state "
                  "WHERE excluded.version > snapshots.version OR excluded.format != "
                  "snapshots.format")
_SEAL_TABLE = ("CREATE TABLE IF NOT EXISTS ledger_seal (id INTEGER PRIMARY KEY CHECK (id = 1), "
               "seal BLOB NOT NULL)")
_QUARANTINE = ("CREATE TABLE IF NOT EXISTS ledger_quarantine (stream TEXT PRIMARY KEY, entry BLOB "
               "NOT NULL)")
_EVENTS = "events"
_COLUMNS = ("originator_id", "originator_version", "topic", "state")
"""The columns of the recorder's table that `_SELECT_ROWS` names."""
_SELECT_ROWS = (f"SELECT originator_version, state FROM {_EVENTS} WHERE originator_id = ? AND "
                "originator_version > ? ORDER BY originator_version")
_WRITER = "PRAGMA synchronous=NORMAL"
"""WAL with synchronous=NORMAL: a killed process loses nothing committed; about 2x faster
appends than FULL (only a power cut can drop the last transactions, never corrupt the log)."""
_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
"""The primary result codes of a lock another connection holds."""
_READER = "PRAGMA query_only=1"
"""A read-only store's connections refuse every write, beside the URI's `mode=ro`."""


def reads_layout(statements: Sequence[str], table: str = _EVENTS) -> bool:
    """The recorder's own `create_table_statements` declare `table` with every column the hot
    read names. A library that lays its table out otherwise (a later release) keeps working:
    the store then reads through `select_events` alone, only slower."""
    head = f"CREATE TABLE IF NOT EXISTS {table} ("
    for statement in statements:
        if statement.startswith(head):
            return all(re.search(rf"[(,]\s*{c}\s", statement) for c in _COLUMNS)
    return False


def _in_wal(path: Path) -> bool:
    """Whether the file's header says WAL (its read and write format versions are 2)."""
    try:
        with path.open("rb") as f:
            f.seek(18)
            return f.read(2) == b"\x02\x02"
    except OSError:
        return False


def _go_into_wal(path: Path, lock_timeout: float) -> None:
    """Put the ledger file (made here when missing) into WAL before the library's pool opens it.

    Going into WAL takes a lock SQLite does not wait for: `PRAGMA journal_mode=WAL` answers
    'database is locked' at once, whatever the busy timeout, while another process opens the
    same new file (two `armbench run`s started together on a team's first run). The library
    sets WAL as it connects and fails there; here the change is tried again until it holds or
    `lock_timeout` seconds pass, as for any other lock. Once the file is in WAL (a property of
    the file), the library's connections find it so and change nothing."""
    deadline, pause = time.monotonic() + lock_timeout, 0.005
    try:
        with closing(sqlite3.connect(path, timeout=lock_timeout, isolation_level=None)) as conn:
            while True:
                try:
                    conn.execute("PRAGMA journal_mode=WAL").fetchone()
                    return
                except sqlite3.OperationalError as exc:
                    if exc.sqlite_errorcode & 0xFF not in _BUSY or time.monotonic() > deadline:
                        raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
    except (sqlite3.Error, OSError) as exc:
        raise diagnose(path, exc, writing=True) from exc


class _Datastore(SQLiteDatastore):
    """eventsourcing's datastore, whose every transaction first tunes a connection it has not
    seen (a pragma outside any transaction: SQLite refuses `synchronous` inside one), and turns
    a sqlite3, eventsourcing or OS failure into a `StorageFault` naming the ledger (a
    conflicting insert stays an `IntegrityError`: the store makes it a `RowConflict`)."""

    def __init__(self, db: str, *, ledger: Path, lock_timeout: int, read_only: bool) -> None:
        super().__init__(db, lock_timeout=lock_timeout, originator_id_type="text")
        self.ledger = ledger
        self._pragma = _READER if read_only else _WRITER
        self._tuned: weakref.WeakSet[SQLiteConnection] = weakref.WeakSet()

    @contextmanager
    def transaction(self, *, commit: bool) -> Iterator[SQLiteCursor]:
        try:
            with self.get_connection(commit=commit) as conn:
                if conn not in self._tuned:
                    with conn.cursor() as tune:
                        tune.execute(self._pragma)
                    self._tuned.add(conn)
                with conn.transaction(commit=commit) as cursor:
                    yield cursor
        except (IntegrityError, sqlite3.IntegrityError, StorageFault):
            raise
        except (PersistenceError, sqlite3.Error, OSError) as exc:
            raise diagnose(self.ledger, exc, writing=commit) from exc


class SqliteRows(LogScan):
    """The rows of a SQLite ledger file (`:memory:` for tests)."""

    def __init__(self, path: Path | str, *, lock_timeout: int = 30, read_only: bool = False,
                 witnesses: Sequence[Path] = ()) -> None:
        self.where = str(path)
        self.read_only = read_only
        self._lock_timeout = lock_timeout
        self._keeper: sqlite3.Connection | None = None
        db = self.where if self.where == ":memory:" else self._prepare(Path(self.where),
                                                                       witnesses)
        self._datastore = _Datastore(db, ledger=Path(self.where), lock_timeout=lock_timeout,
                                     read_only=read_only)
        self._recorder = SQLiteApplicationRecorder(self._datastore, events_table_name=_EVENTS)
        self.fast_read = reads_layout(self._recorder.create_table_statements)
        """Whether `select` may read the recorder's table with its own SQL (`reads_layout`)."""
        if read_only:
            return
        try:
            self._recorder.create_table()
            with self._datastore.transaction(commit=True) as c:
                c.execute(_SNAPSHOTS)
                c.execute(_SEAL_TABLE)
                c.execute(_QUARANTINE)
        except BaseException:
            self.close()
            raise

    def _prepare(self, path: Path, witnesses: Sequence[Path]) -> str:
        """Check the file before SQLite opens it; the name or URI to open it with."""
        there = check_file(path, witnesses=witnesses)
        if self.read_only:
            return self._read_only_uri(path) if there else self._empty_memory()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise diagnose(path, exc, writing=True) from exc
        if not writable(path):
            raise read_only_refusal(path)
        require_room(path.parent, "the ledger")
        if not there or not _in_wal(path):
            _go_into_wal(path, self._lock_timeout)
        return self.where

    @staticmethod
    def _read_only_uri(path: Path) -> str:
        """`mode=ro`, or `immutable=1` when SQLite cannot make the -shm file (a read-only
        folder) and no write-ahead log holds events the file lacks."""
        uri = read_only_uri(path, immutable=False)
        try:
            with closing(sqlite3.connect(uri, uri=True)) as probe:
                probe.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return uri
        except sqlite3.Error as exc:
            wal = Path(f"{path}-wal")
            if wal.exists() and wal.stat().st_size > 0:
                raise diagnose(path, exc, writing=False) from exc
            return read_only_uri(path, immutable=True)

    def _empty_memory(self) -> str:
        """A read-only store of a ledger that does not exist yet reads an empty one in
        memory (kept alive by `_keeper`), so `runs` lists nothing instead of failing."""
        uri = f"file:armbench-empty-{id(self):x}?mode=memory&cache=shared"
        self._keeper = sqlite3.connect(uri, uri=True, check_same_thread=False)
        for statement in SQLiteApplicationRecorder(
                SQLiteDatastore(uri), events_table_name=_EVENTS).create_table_statements:
            self._keeper.execute(statement)
        self._keeper.execute(_SNAPSHOTS)
        self._keeper.execute(_SEAL_TABLE)
        self._keeper.execute(_QUARANTINE)
        return uri

    def close(self) -> None:
        self._datastore.close()
        if self._keeper is not None:
            self._keeper.close()

    def insert(self, rows: Sequence[StoredRow]) -> None:
        stored = [StoredEvent(originator_id=r.stream, originator_version=r.version, topic=r.tag,
                              state=r.state) for r in rows]
        try:
            self._recorder.insert_events(stored)
        except IntegrityError as exc:
            raise RowConflict(str(exc)) from exc

    def select(self, stream: str, *, after: int = 0, through: int | None = None,
               tags: Sequence[str] | None = None, last: bool = False) -> list[tuple[int, bytes]]:
        if not self.fast_read or (last and tags is None):
            return select_through(self._recorder, stream, after=after, through=through,
                                  tags=tags, last=last)
        # The hot read (a projection reads a whole run): plain tuples of the two columns it
        # needs, only the rows of `tags`, filtered by SQLite. `select_events` builds a
        # StoredEvent per row by column name and filters no tag: the report's projection of a
        # 10,000-trial run takes about 1.4x as long through it (`perf.bench_ledger`).
        sql, params = _SELECT_ROWS, [stream, after]
        if tags is not None:
            sql = sql.replace(" ORDER BY", f" AND topic IN ({','.join('?' * len(tags))})"
                              " ORDER BY")
            params += tags
        if through is not None:
            sql = sql.replace(" ORDER BY", " AND originator_version <= ? ORDER BY")
            params.append(through)
        if last:
            sql += " DESC LIMIT 1"
        with self._datastore.transaction(commit=False) as c:
            cursor = c.sqlite_cursor
            cursor.row_factory = None
            cursor.execute(sql, params)
            return cursor.fetchall()

    def notifications(self, start: int | None, limit: int,
                      topics: Sequence[str] = ()) -> list[Notification]:
        page = self._recorder.select_notifications(start, limit, topics=topics,
                                                   inclusive_of_start=False)
        return [Notification(n.id, str(n.originator_id), n.originator_version, n.state, n.topic)
                for n in page]


    def seal(self) -> bytes | None:
        with self._datastore.transaction(commit=False) as c:
            c.execute("SELECT seal FROM ledger_seal WHERE id = 1")
            row = c.fetchone()
        return None if row is None else bytes(row[0])

    def put_seal(self, seal: bytes) -> None:
        with self._datastore.transaction(commit=True) as c:
            c.execute("INSERT OR IGNORE INTO ledger_seal VALUES (1, ?)", (seal,))

    def quarantined(self) -> dict[str, bytes]:
        try:
            with self._datastore.transaction(commit=False) as c:
                c.execute("SELECT stream, entry FROM ledger_quarantine")
                return {str(stream): bytes(entry) for stream, entry in c.fetchall()}
        except StorageFault as fault:  # a ledger made before quarantine, opened read-only
            if "no such table" in str(fault):
                return {}
            raise

    def put_quarantine(self, stream: str, entry: bytes) -> None:
        with self._datastore.transaction(commit=True) as c:
            c.execute(_QUARANTINE)
            c.execute("INSERT OR IGNORE INTO ledger_quarantine VALUES (?, ?)", (stream, entry))

    def save_snapshot(self, stream: str, version: int, fmt: str, state: bytes) -> bool:
        try:
            with self._datastore.transaction(commit=True) as c:
                c.execute(_SAVE_SNAPSHOT, (stream, version, fmt, state))
        except StorageFault:
            return False
        return True

    def snapshot(self, stream: str, fmt: str) -> bytes | None:
        try:
            with self._datastore.transaction(commit=False) as c:
                c.execute("SELECT state FROM snapshots WHERE stream = ? AND "
                                        "format = ?", (stream, fmt))
                row = c.fetchone()
        except StorageFault:
            return None
        return None if row is None else bytes(row[0])

    def snapshots(self) -> list[tuple[str, int, str, bytes]]:
        with self._datastore.transaction(commit=False) as c:
            c.execute("SELECT stream, version, format, state FROM snapshots")
            return [(str(s), int(v), str(f), bytes(b)) for s, v, f, b in
                    c.fetchall()]

    def drop_snapshot(self, stream: str) -> None:
        try:
            with self._datastore.transaction(commit=True) as c:
                c.execute("DELETE FROM snapshots WHERE stream = ?", (stream,))
        except StorageFault:
            pass
