"""The append-only event store: one stream per run, on eventsourcing's SQLite recorder.

Each stored record is `{"chain": <hex>, "event": <the event's JSON>}` where `chain` is
sha256(previous chain + the event's bytes as stored): a run's events are chained by hash, so an
edited, reordered or deleted event is found by `verify_chain`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

import msgspec
from eventsourcing.persistence import IntegrityError, PersistenceError, StoredEvent
from eventsourcing.sqlite import (
    SQLiteApplicationRecorder,
    SQLiteConnection,
    SQLiteConnectionPool,
    SQLiteDatastore,
)

from ledger.collector import collector_paused
from ledger.errors import ConcurrencyConflict, LedgerError
from ledger.events import Event, encode_event, event_tag
from ledger.upcast import KNOWN_TAGS, UPCASTERS, upcast_event

__all__ = ["GENESIS", "ChainBreak", "EventStore", "Recorded", "chain_next", "verify_chain"]

_PAGE = 2000
GENESIS = "0" * 64
_SNAPSHOTS = ("CREATE TABLE IF NOT EXISTS snapshots (stream TEXT PRIMARY KEY, version INTEGER NOT "
              "NULL, format TEXT NOT NULL, state BLOB NOT NULL)")
_SAVE_SNAPSHOT = ("INSERT INTO snapshots VALUES (?, ?, ?, ?) ON CONFLICT(stream) DO UPDATE SET "
                  "version = excluded.version, format = excluded.format, state = excluded.state "
                  "WHERE excluded.version > snapshots.version OR excluded.format != "
                  "snapshots.format")
_SELECT_ROWS = ("SELECT originator_version, state FROM events WHERE originator_id = ? AND "
                "originator_version > ? ORDER BY originator_version")


class _Stored(msgspec.Struct, frozen=True):
    chain: str
    event: msgspec.Raw


class _Full(msgspec.Struct, frozen=True):
    event: Event


class _Tag(msgspec.Struct, frozen=True):
    type: str | None = None


_STORED = msgspec.json.Decoder(_Stored)
_FULL = msgspec.json.Decoder(_Full)
_TAG = msgspec.json.Decoder(_Tag)


def chain_next(prev: str, event_bytes: bytes) -> str:
    """The chain value of an event stored after `prev`."""
    return hashlib.sha256(prev.encode() + event_bytes).hexdigest()


class ChainBreak(msgspec.Struct, frozen=True):
    """The first place a run's stored events stop matching their chain."""

    position: int
    reason: str


def verify_chain(rows: list[tuple[int, bytes]]) -> ChainBreak | None:
    """Check (version, stored bytes) rows of one stream: versions 1..n, each chain value right."""
    prev = GENESIS
    for expected, (version, data) in enumerate(rows, start=1):
        if version != expected:
            return ChainBreak(position=expected, reason="it is missing (the next stored event "
                              f"is number {version})")
        try:
            stored = _STORED.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return ChainBreak(position=version, reason="the stored record is not readable")
        if chain_next(prev, bytes(stored.event)) != stored.chain:
            return ChainBreak(position=version, reason="its bytes or its place do not match the "
                              "hash chain (edited, reordered, or an earlier event removed)")
        prev = stored.chain
    return None


class _Pool(SQLiteConnectionPool):
    """WAL with synchronous=NORMAL: a killed process loses nothing committed; about 2x faster
    appends than FULL (only a power cut can drop the last transactions, never corrupt the log)."""

    def _create_connection(self) -> SQLiteConnection:
        conn = super()._create_connection()
        conn._sqlite_conn.execute("PRAGMA synchronous=NORMAL")
        return conn


class Recorded(msgspec.Struct, frozen=True, gc=False):
    """An event with its place in its stream and in the whole log."""

    stream: str
    version: int
    position: int
    event: Event


class EventStore:
    """Append and read run streams; a version conflict means another writer got there first."""

    def __init__(self, path: Path | str, *, lock_timeout: int = 30) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._datastore = SQLiteDatastore(
            self.path, lock_timeout=lock_timeout, originator_id_type="text"
        )
        self._datastore.pool = _Pool(db_name=self.path, lock_timeout=lock_timeout)
        self._recorder = SQLiteApplicationRecorder(self._datastore, events_table_name="events")
        self._recorder.create_table()
        with self._datastore.transaction(commit=True) as c:
            c.sqlite_cursor.execute(_SNAPSHOTS)

    def close(self) -> None:
        """Close the connections."""
        self._datastore.close()

    def append(self, stream: str, events: Sequence[Event], *, expected_version: int) -> int:
        """Append events after `expected_version`; return the stream's new version."""
        if not events:
            return expected_version
        prev = self._last_chain(stream, expected_version)
        stored = []
        for i, e in enumerate(events):
            body = encode_event(e)
            prev = chain_next(prev, body)
            stored.append(StoredEvent(
                originator_id=stream,
                originator_version=expected_version + i + 1,
                topic=event_tag(e),
                state=b'{"chain":"' + prev.encode() + b'","event":' + body + b"}",
            ))
        try:
            self._recorder.insert_events(stored)
        except IntegrityError as exc:
            raise ConcurrencyConflict(
                f"Run {stream} changed while this process was deciding (expected version "
                f"{expected_version}). Reload the run and decide again."
            ) from exc
        except sqlite3.Error as exc:  # pragma: no cover - disk full, locked past the timeout
            raise LedgerError(f"The ledger at {self.path} could not be written: {exc}") from exc
        return expected_version + len(events)

    def _last_chain(self, stream: str, version: int) -> str:
        if version == 0:
            return GENESIS
        rows = self._recorder.select_events(stream, lte=version, desc=True, limit=1)
        return _STORED.decode(rows[0].state).chain if rows else GENESIS

    def read(self, stream: str, *, after: int = 0) -> list[Recorded]:
        """The stream's events with version above `after`, in order, with their versions."""
        rows = self._rows(stream, after)
        with collector_paused():
            return [Recorded(stream, version, 0, _event(state)) for version, state in rows]

    def events(self, stream: str, *, kinds: Collection[type[Event]] | None = None) -> list[Event]:
        """The stream's events alone, in order: what a projection folds.

        With `kinds`, only events of those classes, and the rows of other kinds are never
        decoded. Rows stored under an old tag are read too (an upcaster may turn them into one
        of `kinds`), then kept by their class.
        """
        if kinds is None:
            rows = self._rows(stream, 0)
        else:
            rows = self._rows(stream, 0, sorted({str(k.__struct_config__.tag) for k in kinds}
                                                | UPCASTERS.keys()))
        with collector_paused():
            found = [_event(state) for _, state in rows]
        if kinds is None or not UPCASTERS:
            return found
        wanted = tuple(kinds)
        return [e for e in found if isinstance(e, wanted)]

    def read_raw(self, stream: str) -> list[tuple[int, bytes]]:
        """The stream's (version, stored bytes), in order (for verification)."""
        return self._rows(stream, 0)

    def _rows(self, stream: str, after: int,
              tags: Sequence[str] | None = None) -> list[tuple[int, bytes]]:
        """(version, stored bytes) above `after`, optionally only some tags, as plain tuples."""
        sql, params = _SELECT_ROWS, [stream, after]
        if tags is not None:
            sql = _SELECT_ROWS.replace(" ORDER BY", f" AND topic IN ({','.join('?' * len(tags))})"
                                       " ORDER BY")
            params += tags
        with self._datastore.transaction(commit=False) as c:
            cursor = c.sqlite_cursor
            cursor.row_factory = None
            cursor.execute(sql, params)
            return cursor.fetchall()

    def version(self, stream: str) -> int:
        """The stream's current version (0 when empty)."""
        rows = self._recorder.select_events(stream, desc=True, limit=1)
        return rows[0].originator_version if rows else 0

    # ------------------------------------------------------------ snapshots (a cache, not facts)

    def save_snapshot(self, stream: str, version: int, fmt: str, state: bytes) -> bool:
        """Keep `state` as the stream's snapshot at `version`, unless a newer one of the same
        format is there. One per stream; never part of the events or their chain. A snapshot
        is a cache: one that cannot be written (a full disk, a long lock) is skipped, False."""
        try:
            with self._datastore.transaction(commit=True) as c:
                c.sqlite_cursor.execute(_SAVE_SNAPSHOT, (stream, version, fmt, state))
        except (PersistenceError, sqlite3.Error):
            return False
        return True

    def snapshot(self, stream: str, fmt: str) -> bytes | None:
        """The stream's snapshot when it was written in format `fmt` (None when unreadable)."""
        try:
            with self._datastore.transaction(commit=False) as c:
                c.sqlite_cursor.execute("SELECT state FROM snapshots WHERE stream = ? AND "
                                        "format = ?", (stream, fmt))
                row = c.sqlite_cursor.fetchone()
        except (PersistenceError, sqlite3.Error):
            return None
        return None if row is None else bytes(row[0])

    def drop_snapshot(self, stream: str) -> None:
        """Forget the stream's snapshot (a run that ended needs none); a failure is skipped."""
        try:
            with self._datastore.transaction(commit=True) as c:
                c.sqlite_cursor.execute("DELETE FROM snapshots WHERE stream = ?", (stream,))
        except (PersistenceError, sqlite3.Error):
            pass

    def all(self, *, topics: Sequence[str] = ()) -> Iterator[Recorded]:
        """The whole log in order of writing, optionally only some tags."""
        start: int | None = None
        while True:
            page = self._recorder.select_notifications(
                start, _PAGE, topics=topics, inclusive_of_start=False
            )
            for n in page:
                yield Recorded(str(n.originator_id), n.originator_version, n.id,
                               _event(n.state))
            if len(page) < _PAGE:
                return
            start = page[-1].id


def _event(state: bytes) -> Event:
    """The typed decoder first; an upcaster only for a tag the union does not know."""
    try:
        return _FULL.decode(state).event
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return _old_event(state, exc)


def _old_event(state: bytes, error: Exception) -> Event:
    try:
        raw = _STORED.decode(state).event
        tag = _TAG.decode(raw).type
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise LedgerError(f"A stored event is not readable: {error}.") from error
    if tag in KNOWN_TAGS:
        raise LedgerError(f"A stored {tag} event does not decode as {tag} today ({error}): its "
                          "shape changed without a new version and an upcaster (see "
                          "docs/events.md).") from error
    return upcast_event(bytes(raw))
