"""The append-only event store: one stream per run, on eventsourcing's SQLite recorder.

Each stored record is `{"chain": <hex>, "key": <key id>, "event": <the event's JSON>}` where
`chain` is HMAC-SHA256 under the ledger key of the stream, the previous chain value and the
event's bytes (`ledger.chain`): a run's events are chained, so an edited, reordered or deleted
event is found by `verify_chain`, and only a holder of the key can chain one. A store opened
without a key (tests, tools, ledgers written before keys) writes the old unkeyed rows
(`{"chain": sha256(previous + bytes), "event": ...}`), which `verify` accepts only where the
ledger's seal pins them.

`append` also keeps the lease rule (`ledger.leases`): a `StepReported` or `CheckRan` that no
lease holds, or that comes twice under one lease, is refused.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

import msgspec
from eventsourcing.persistence import IntegrityError, PersistenceError, StoredEvent
from eventsourcing.sqlite import (
    SQLiteApplicationRecorder,
    SQLiteConnection,
    SQLiteConnectionPool,
    SQLiteCursor,
    SQLiteDatastore,
)

from ledger.chain import (
    GENESIS,
    KEYED,
    UNKEYED,
    LedgerKey,
    Seal,
    chain_next,
    keyed_next,
    seal_mac,
    stored_row,
)
from ledger.chaincheck import ChainBreak, decode_row, verify_chain
from ledger.collector import collector_paused
from ledger.errors import (
    ConcurrencyConflict,
    DiskFull,
    LeaseRuleBroken,
    LedgerError,
    LedgerReadOnly,
    StorageFault,
)
from ledger.events import Event, encode_event, event_tag
from ledger.leases import LEASE_TAGS, LeaseBook
from ledger.storefaults import (
    check_file,
    diagnose,
    read_only_refusal,
    read_only_uri,
    require_room,
    writable,
)
from ledger.upcast import KNOWN_TAGS, UPCASTERS, upcast_event

__all__ = ["GENESIS", "ChainBreak", "ChainHead", "EventStore", "Recorded", "chain_next",
           "verify_chain"]

_PAGE = 2000
_SNAPSHOTS = ("CREATE TABLE IF NOT EXISTS snapshots (stream TEXT PRIMARY KEY, version INTEGER NOT "
              "NULL, format TEXT NOT NULL, state BLOB NOT NULL)")
_SAVE_SNAPSHOT = ("INSERT INTO snapshots VALUES (?, ?, ?, ?) ON CONFLICT(stream) DO UPDATE SET "
                  "version = excluded.version, format = excluded.format, state = excluded.state "
                  "WHERE excluded.version > snapshots.version OR excluded.format != "
                  "snapshots.format")
_SELECT_ROWS = ("SELECT originator_version, state FROM events WHERE originator_id = ? AND "
                "originator_version > ? ORDER BY originator_version")
_SEAL_TABLE = ("CREATE TABLE IF NOT EXISTS ledger_seal (id INTEGER PRIMARY KEY CHECK (id = 1), "
               "seal BLOB NOT NULL)")
_KEYED_ROW = ("SELECT 1 FROM events WHERE CAST(substr(state, 1, 100) AS TEXT) LIKE "
              "'%\"key\":\"%' LIMIT 1")
_HEADS = "SELECT originator_id, MAX(originator_version) FROM events GROUP BY originator_id"
_STATE_AT = "SELECT state FROM events WHERE originator_id = ? AND originator_version = ?"


class ChainHead(msgspec.Struct, frozen=True, kw_only=True):
    """A run's chain value at one of its events."""

    event: int
    """The event's version in the run's stream."""
    head: str
    """Its chain value."""
    kind: str
    """`hmac-sha256` (keyed) or `sha256` (a row written without the key)."""


class _Full(msgspec.Struct, frozen=True):
    event: Event


class _Tag(msgspec.Struct, frozen=True):
    type: str | None = None


_FULL = msgspec.json.Decoder(_Full)
_TAG = msgspec.json.Decoder(_Tag)


class _Pool(SQLiteConnectionPool):
    """WAL with synchronous=NORMAL: a killed process loses nothing committed; about 2x faster
    appends than FULL (only a power cut can drop the last transactions, never corrupt the log).

    A read-only pool opens its URI as it is (`mode=ro`, perhaps `immutable=1`), never turns on
    WAL (that writes the header), and sets `query_only` on every connection."""

    read_only = False

    def _create_connection(self) -> SQLiteConnection:
        if not self.read_only:
            conn = super()._create_connection()
            conn._sqlite_conn.execute("PRAGMA synchronous=NORMAL")
            return conn
        c = sqlite3.connect(self.db_name, uri=True, check_same_thread=False,
                            isolation_level=None, timeout=self.lock_timeout or 5)
        c.execute("PRAGMA query_only=1")
        c.row_factory = sqlite3.Row
        return SQLiteConnection(sqlite_conn=c, max_age=self.max_age)


class _Datastore(SQLiteDatastore):
    """eventsourcing's datastore whose every transaction turns a sqlite3, eventsourcing or OS
    failure into a `StorageFault` naming the ledger (a conflicting insert stays an
    `IntegrityError`: the store makes it a `ConcurrencyConflict`)."""

    ledger: Path

    @contextmanager
    def transaction(self, *, commit: bool) -> Iterator[SQLiteCursor]:
        try:
            with super().transaction(commit=commit) as cursor:
                yield cursor
        except (IntegrityError, sqlite3.IntegrityError, StorageFault):
            raise
        except (PersistenceError, sqlite3.Error, OSError) as exc:
            raise diagnose(self.ledger, exc, writing=commit) from exc


class Recorded(msgspec.Struct, frozen=True, gc=False):
    """An event with its place in its stream."""

    stream: str
    version: int
    event: Event


class EventStore:
    """Append and read run streams; a version conflict means another writer got there first."""

    def __init__(self, path: Path | str, *, lock_timeout: int = 30,
                 key: LedgerKey | None = None, read_only: bool = False,
                 witnesses: Sequence[Path] = ()) -> None:
        """Open the ledger at `path` (made when missing) to read and write, or `read_only`.

        Every failure of the file or its disk is a `StorageFault` (`ledger.storefaults`), here
        and in every method: an empty file beside `witnesses` (records of its runs), a foreign,
        truncated or damaged file, a read-only one (when writing), a full disk."""
        self.path = str(path)
        self.key = key
        """The ledger key the store chains with (None: unkeyed rows, as before keys)."""
        self.read_only = read_only
        """Opened read-only: every write is refused with `LedgerReadOnly`."""
        self._keeper: sqlite3.Connection | None = None
        db = self.path if self.path == ":memory:" else self._prepare(
            Path(self.path), witnesses)
        self._datastore = _Datastore(db, lock_timeout=lock_timeout, originator_id_type="text")
        self._datastore.ledger = Path(self.path)
        self._datastore.pool = _Pool(db_name=db, lock_timeout=lock_timeout)
        self._datastore.pool.read_only = read_only
        self._recorder = SQLiteApplicationRecorder(self._datastore, events_table_name="events")
        self._books: dict[str, LeaseBook] = {}
        self._guard = threading.Lock()
        if read_only:
            return
        try:
            self._recorder.create_table()
            with self._datastore.transaction(commit=True) as c:
                c.sqlite_cursor.execute(_SNAPSHOTS)
                c.sqlite_cursor.execute(_SEAL_TABLE)
            if key is not None:
                self._seal_ledger(key)
        except BaseException:
            self.close()
            raise

    @classmethod
    def for_reading(cls, path: Path | str, *, key: LedgerKey | None = None,
                    witnesses: Sequence[Path] = ()) -> EventStore:
        """Open for a command that only reads: as a writer would where the ledger can be
        written (a first keyed open seals it as usual), else read-only, so `runs`, `log`,
        `verify` and the rest work on a read-only folder or a full disk."""
        try:
            return cls(path, key=key, witnesses=witnesses)
        except (LedgerReadOnly, DiskFull):
            return cls(path, key=key, witnesses=witnesses, read_only=True)

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
        return self.path

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
                SQLiteDatastore(uri), events_table_name="events").create_table_statements:
            self._keeper.execute(statement)
        self._keeper.execute(_SNAPSHOTS)
        self._keeper.execute(_SEAL_TABLE)
        return uri

    def close(self) -> None:
        """Close the connections."""
        self._datastore.close()
        if self._keeper is not None:
            self._keeper.close()

    def append(self, stream: str, events: Sequence[Event], *, expected_version: int) -> int:
        """Append events after `expected_version`; return the stream's new version.

        Refuses (`LeaseRuleBroken`, nothing written) a `StepReported` or `CheckRan` that no
        lease of the step holds, or that comes twice under one lease.
        """
        if not events:
            return expected_version
        with self._guard:
            book = self._book(stream, expected_version)
            self._check_leases(stream, book, events)
            self._insert(stream, events, expected_version)
            for e in events:
                book.apply(e)
        return expected_version + len(events)

    def _insert(self, stream: str, events: Sequence[Event], expected_version: int) -> None:
        prev = self._last_chain(stream, expected_version)
        key = self.key
        stored = []
        for i, e in enumerate(events):
            body = encode_event(e)
            prev = chain_next(prev, body) if key is None else keyed_next(key, stream, prev, body)
            stored.append(StoredEvent(
                originator_id=stream,
                originator_version=expected_version + i + 1,
                topic=event_tag(e),
                state=stored_row(prev, body, None if key is None else key.id),
            ))
        try:
            self._recorder.insert_events(stored)
        except IntegrityError as exc:
            raise _conflict(stream, expected_version) from exc

    def _book(self, stream: str, version: int) -> LeaseBook:
        """The stream's lease book, caught up to `version` (reading only the rule's kinds)."""
        book = self._books.get(stream)
        if book is None:
            book = self._books[stream] = LeaseBook()
        if book.version > version:
            raise _conflict(stream, version)
        if book.version < version:
            rows = self._rows(stream, book.version, LEASE_TAGS, through=version)
            with collector_paused():
                for at, state in rows:
                    book.version = at - 1
                    book.apply(_event(state))
            book.version = version
        return book

    @staticmethod
    def _check_leases(stream: str, book: LeaseBook, events: Sequence[Event]) -> None:
        """Refuse the batch if one of its events breaks the lease rule (the book is unchanged)."""
        steps = {s for e in events if isinstance(s := getattr(e, "step", None), str)}
        saved = {s: book.save(s) for s in steps}
        version = book.version
        try:
            for i, e in enumerate(events):
                why = book.refusal(e)
                if why is not None:
                    raise LeaseRuleBroken(
                        f"Run {stream}: refused to record event {version + i + 1}, a "
                        f"{event_tag(e)} for step {getattr(e, 'step', '?')!r}: it {why}. Only "
                        "the lease that holds a step reports it, once; ask the engine for a "
                        "lease (armbench resume) instead of writing to the ledger.")
                book.apply(e)
        finally:
            for s, entry in saved.items():
                book.restore(s, entry)
            book.version = version

    def _last_chain(self, stream: str, version: int) -> str:
        if version == 0:
            return GENESIS
        rows = self._recorder.select_events(stream, lte=version, desc=True, limit=1)
        return decode_row(rows[0].state).chain if rows else GENESIS

    # ---------------------------------------------------------------- the chain and its seal

    def _seal_ledger(self, key: LedgerKey) -> None:
        """Seal the ledger the first time a key opens it: pin the runs written before the key.

        A ledger that holds keyed rows but no seal had its seal removed: it is never sealed
        again (that would pin forged runs); `verify` says so instead."""
        with self._datastore.transaction(commit=True) as c:
            cursor = c.sqlite_cursor
            cursor.execute("SELECT 1 FROM ledger_seal WHERE id = 1")
            if cursor.fetchone() is not None:
                return
            cursor.execute(_KEYED_ROW)
            if cursor.fetchone() is not None:
                return
            cursor.execute(_HEADS)
            legacy: dict[str, tuple[int, str]] = {}
            for stream, version in cursor.fetchall():
                cursor.execute(_STATE_AT, (stream, version))
                legacy[str(stream)] = (int(version), decode_row(cursor.fetchone()[0]).chain)
            seal = Seal(key=key.id, legacy=legacy, mac=seal_mac(key, legacy))
            cursor.execute("INSERT OR IGNORE INTO ledger_seal VALUES (1, ?)",
                           (msgspec.json.encode(seal),))

    def seal(self) -> Seal | None:
        """The ledger's seal, None when it has none (or it is not readable as one)."""
        with self._datastore.transaction(commit=False) as c:
            c.sqlite_cursor.execute("SELECT seal FROM ledger_seal WHERE id = 1")
            row = c.sqlite_cursor.fetchone()
        try:
            return None if row is None else msgspec.json.decode(bytes(row[0]), type=Seal)
        except msgspec.DecodeError:
            return None

    def has_keyed_rows(self) -> bool:
        """Some stored event of the ledger is keyed."""
        with self._datastore.transaction(commit=False) as c:
            c.sqlite_cursor.execute(_KEYED_ROW)
            return c.sqlite_cursor.fetchone() is not None

    def chain_at(self, stream: str, version: int) -> ChainHead | None:
        """The stream's chain value at `version` (None when there is no such event)."""
        if version < 1:
            return None
        rows = self._recorder.select_events(stream, gt=version - 1, lte=version, limit=1)
        if not rows:
            return None
        row = decode_row(rows[0].state)
        return ChainHead(event=version, head=row.chain, kind=UNKEYED if row.key is None else KEYED)

    def head(self, stream: str) -> ChainHead | None:
        """The stream's chain value at its last event (None when the stream is empty)."""
        return self.chain_at(stream, self.version(stream))

    def read(self, stream: str, *, after: int = 0) -> list[Recorded]:
        """The stream's events with version above `after`, in order, with their versions."""
        rows = self._rows(stream, after)
        with collector_paused():
            return [Recorded(stream, version, _event(state)) for version, state in rows]

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

    def _rows(self, stream: str, after: int, tags: Sequence[str] | None = None, *,
              through: int | None = None) -> list[tuple[int, bytes]]:
        """(version, stored bytes) above `after` (up to `through`), optionally only some tags,
        as plain tuples."""
        sql, params = _SELECT_ROWS, [stream, after]
        if tags is not None:
            sql = sql.replace(" ORDER BY", f" AND topic IN ({','.join('?' * len(tags))})"
                              " ORDER BY")
            params += tags
        if through is not None:
            sql = sql.replace(" ORDER BY", " AND originator_version <= ? ORDER BY")
            params.append(through)
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
        except StorageFault:
            return False
        return True

    def snapshot(self, stream: str, fmt: str) -> bytes | None:
        """The stream's snapshot when it was written in format `fmt` (None when unreadable)."""
        try:
            with self._datastore.transaction(commit=False) as c:
                c.sqlite_cursor.execute("SELECT state FROM snapshots WHERE stream = ? AND "
                                        "format = ?", (stream, fmt))
                row = c.sqlite_cursor.fetchone()
        except StorageFault:
            return None
        return None if row is None else bytes(row[0])

    def drop_snapshot(self, stream: str) -> None:
        """Forget the stream's snapshot (a run that ended needs none); a failure is skipped."""
        try:
            with self._datastore.transaction(commit=True) as c:
                c.sqlite_cursor.execute("DELETE FROM snapshots WHERE stream = ?", (stream,))
        except StorageFault:
            pass

    def all(self, *, topics: Sequence[str] = ()) -> Iterator[Recorded]:
        """The whole log in order of writing, optionally only some tags."""
        start: int | None = None
        while True:
            page = self._recorder.select_notifications(
                start, _PAGE, topics=topics, inclusive_of_start=False
            )
            for n in page:
                yield Recorded(str(n.originator_id), n.originator_version, _event(n.state))
            if len(page) < _PAGE:
                return
            start = page[-1].id


def _event(state: bytes) -> Event:
    """The typed decoder first; an upcaster only for a tag the union does not know."""
    try:
        return _FULL.decode(state).event
    except msgspec.DecodeError as exc:
        return _old_event(state, exc)


def _old_event(state: bytes, error: Exception) -> Event:
    try:
        raw = decode_row(state).event
        tag = _TAG.decode(raw).type
    except msgspec.DecodeError:
        raise LedgerError(f"A stored event is not readable: {error}.") from error
    if tag in KNOWN_TAGS:
        raise LedgerError(f"A stored {tag} event does not decode as {tag} today ({error}): its "
                          "shape changed without a new version and an upcaster (see "
                          "docs/events.md).") from error
    return upcast_event(bytes(raw))


def _conflict(stream: str, expected_version: int) -> ConcurrencyConflict:
    return ConcurrencyConflict(
        f"Run {stream} changed while this process was deciding (expected version "
        f"{expected_version}). Reload the run and decide again.")
