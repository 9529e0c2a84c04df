"""The shared store: a PostgreSQL server through eventsourcing's PostgreSQL application recorder
(psycopg 3), for many drivers on many machines working one run.

Events go only through the recorder's public API (`insert_events`, `select_events`,
`select_notifications`); the `armbench_snapshots` and `armbench_seal` tables are armbench's own.
The password comes from the URL, `PGPASSWORD` or a `.pgpass` file (libpq reads both), and is
never part of a message: `where` is the URL without it. This module is imported only when the
ledger URL is `postgresql://` (psycopg is not loaded by a command on a SQLite ledger).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from eventsourcing.persistence import IntegrityError, PersistenceError, StoredEvent
from eventsourcing.postgres import PostgresApplicationRecorder, PostgresDatastore
from psycopg.conninfo import make_conninfo

from armbench.ledger.errors import LedgerUnreachable, StorageFault
from armbench.ledger.rows import LogScan, Notification, RowConflict, StoredRow, select_through
from armbench.ledger.urls import LedgerUrl

__all__ = ["PostgresRows"]

_SCHEMA_LOCK = 0x61726D62  # "armb": the advisory lock held while the tables are made
_TABLES = (
    "CREATE TABLE IF NOT EXISTS armbench_snapshots (stream text PRIMARY KEY, version bigint NOT "
    "NULL, format text NOT NULL, state bytea NOT NULL)",
    "CREATE TABLE IF NOT EXISTS armbench_seal (id integer PRIMARY KEY CHECK (id = 1), seal bytea "
    "NOT NULL)",
    "CREATE TABLE IF NOT EXISTS armbench_quarantine (stream text PRIMARY KEY, "
    "entry bytea NOT NULL)",
)
_SAVE_SNAPSHOT = (
    "INSERT INTO armbench_snapshots VALUES (%s, %s, %s, %s) ON CONFLICT (stream) DO UPDATE SET "
    "version = excluded.version, format = excluded.format, state = excluded.state WHERE "
    "excluded.version > armbench_snapshots.version OR excluded.format != "
    "armbench_snapshots.format")


class PostgresRows(LogScan):
    """The rows of a ledger on a PostgreSQL server."""

    def __init__(self, url: LedgerUrl, *, read_only: bool = False, pool_size: int = 4) -> None:
        self.where = url.shown
        self.read_only = read_only
        self._url = url
        _probe(url)
        params = url.params
        self._datastore = PostgresDatastore(
            dbname=params.get("dbname", ""), host=params.get("host", ""),
            port=params.get("port", "5432"), user=params.get("user", ""),
            password=params.get("password", ""), originator_id_type="text",
            pool_size=1, max_overflow=2 * pool_size, connect_timeout=10)
        # Opened once, here: the recorder opens a pool that is not open on every call, and
        # psycopg_pool's waiting open is not safe from several threads at once (the lanes).
        with self._faults(writing=False):
            self._datastore.pool.open(wait=True, timeout=10)
        self._recorder = PostgresApplicationRecorder(self._datastore,
                                                     events_table_name="armbench_events")
        if read_only:
            return
        try:
            with self._faults(writing=True):
                self._create_tables()
        except BaseException:
            self.close()
            raise

    def _create_tables(self) -> None:
        """Make the tables once. Workers that start together would race PostgreSQL's catalog
        ("tuple concurrently updated"), so the maker holds an advisory lock, and a ledger whose
        last table is there is left as it is."""
        with psycopg.connect(make_conninfo("", **self._url.params), autocommit=True) as lock:
            lock.execute("SELECT pg_advisory_lock(%s)", (_SCHEMA_LOCK,))
            try:
                found = lock.execute("SELECT to_regclass('armbench_seal'), "
                                     "to_regclass('armbench_quarantine')").fetchone()
                if found is not None and found[1] is not None:
                    return
                if found is not None and found[0] is not None:  # a ledger made before quarantine:
                    with contextlib.suppress(psycopg.errors.InsufficientPrivilege):  # its owner's
                        lock.execute(_TABLES[-1])  # `armbench ledger grant` adds it where we may not
                    return
                self._recorder.create_table()
                with self._datastore.transaction(commit=True) as c:
                    for statement in _TABLES:
                        c.execute(statement)
            finally:
                lock.execute("SELECT pg_advisory_unlock(%s)", (_SCHEMA_LOCK,))

    @contextmanager
    def _faults(self, *, writing: bool) -> Iterator[None]:
        try:
            yield
        except (IntegrityError, StorageFault):
            raise
        except (PersistenceError, psycopg.Error, OSError) as exc:
            raise _fault(self.where, exc, writing=writing) from None

    def close(self) -> None:
        self._datastore.close()

    def insert(self, rows: Sequence[StoredRow]) -> None:
        stored = [StoredEvent(originator_id=r.stream, originator_version=r.version, topic=r.tag,
                              state=r.state) for r in rows]
        try:
            with self._faults(writing=True):
                self._recorder.insert_events(stored)
        except IntegrityError as exc:
            raise RowConflict(str(exc)) from exc

    def select(self, stream: str, *, after: int = 0, through: int | None = None,
               tags: Sequence[str] | None = None, last: bool = False) -> list[tuple[int, bytes]]:
        with self._faults(writing=False):
            return select_through(self._recorder, stream, after=after, through=through,
                                  tags=tags, last=last)

    def notifications(self, start: int | None, limit: int,
                      topics: Sequence[str] = ()) -> list[Notification]:
        with self._faults(writing=False):
            page = self._recorder.select_notifications(start, limit, topics=list(topics),
                                                       inclusive_of_start=False)
        return [Notification(n.id, str(n.originator_id), n.originator_version, n.state, n.topic)
                for n in page]


    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._faults(writing=False), self._datastore.transaction(commit=False) as c:
            c.execute(sql, params)
            return c.fetchone()

    def _write(self, sql: str, params: Sequence[Any] = ()) -> None:
        with self._faults(writing=True), self._datastore.transaction(commit=True) as c:
            c.execute(sql, params)

    def seal(self) -> bytes | None:
        row = self._one("SELECT seal FROM armbench_seal WHERE id = 1")
        return None if row is None else bytes(row["seal"])

    def put_seal(self, seal: bytes) -> None:
        self._write("INSERT INTO armbench_seal VALUES (1, %s) ON CONFLICT (id) DO NOTHING", (seal,))

    def quarantined(self) -> dict[str, bytes]:
        with self._faults(writing=False), self._datastore.transaction(commit=False) as c:
            c.execute("SELECT to_regclass('armbench_quarantine') AS t")
            there = c.fetchone()
            if there is None or there["t"] is None:
                return {}
            c.execute("SELECT stream, entry FROM armbench_quarantine")
            return {str(r["stream"]): bytes(r["entry"]) for r in c.fetchall()}

    def put_quarantine(self, stream: str, entry: bytes) -> None:
        self._write("INSERT INTO armbench_quarantine VALUES (%s, %s) ON CONFLICT (stream) DO NOTHING",
                    (stream, entry))

    def save_snapshot(self, stream: str, version: int, fmt: str, state: bytes) -> bool:
        try:
            self._write(_SAVE_SNAPSHOT, (stream, version, fmt, state))
        except StorageFault:
            return False
        return True

    def snapshot(self, stream: str, fmt: str) -> bytes | None:
        try:
            row = self._one("SELECT state FROM armbench_snapshots WHERE stream = %s AND "
                            "format = %s", (stream, fmt))
        except StorageFault:
            return None
        return None if row is None else bytes(row["state"])

    def snapshots(self) -> list[tuple[str, int, str, bytes]]:
        with self._faults(writing=False), self._datastore.transaction(commit=False) as c:
            c.execute("SELECT stream, version, format, state FROM armbench_snapshots")
            return [(r["stream"], int(r["version"]), r["format"], bytes(r["state"]))
                    for r in c.fetchall()]

    def drop_snapshot(self, stream: str) -> None:
        try:
            self._write("DELETE FROM armbench_snapshots WHERE stream = %s", (stream,))
        except StorageFault:
            pass


def _probe(url: LedgerUrl) -> None:
    """Connect once, with a short timeout, so a wrong URL, password or an unreachable server is
    one clear error at once (the pool would retry it for a long while)."""
    try:
        psycopg.connect(make_conninfo("", **url.params), connect_timeout=10).close()
    except psycopg.Error as exc:
        raise _fault(url.shown, exc, writing=False) from None


def _fault(where: str, exc: BaseException, *, writing: bool) -> StorageFault:
    """A storage fault naming the server by its URL without password (the driver's own message
    may hold the host and user, never the password)."""
    detail = " ".join(str(exc).split())
    return LedgerUnreachable(
        f"The ledger {where} could not be {'written' if writing else 'read'}: PostgreSQL says "
        f"{detail!r}. Nothing was written. Check the URL (ARMBENCH_LEDGER_URL, or ledger.url in "
        ".armbench/config.yaml): the host and port must reach a running server, the database "
        "must exist, and the user's password must be in the URL, in PGPASSWORD or in ~/.pgpass; "
        "then run the command again.", path=where)
