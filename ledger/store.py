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

import threading
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

import msgspec

from armbench.ledger.chain import (
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
from armbench.ledger.chaincheck import ChainBreak, decode_row, verify_chain
from armbench.ledger.collector import collector_paused
from armbench.ledger.errors import (
    ConcurrencyConflict,
    DiskFull,
    LeaseRuleBroken,
    LedgerError,
    LedgerReadOnly,
)
from armbench.ledger.events import Event, encode_event, event_tag
from armbench.ledger.leases import LEASE_TAGS, LeaseBook
from armbench.ledger.rows import RowConflict, Rows, StoredRow
from armbench.ledger.rows_sqlite import SqliteRows
from armbench.ledger.upcast import KNOWN_TAGS, UPCASTERS, upcast_event
from armbench.ledger.urls import is_postgres, parse_postgres

__all__ = ["GENESIS", "ChainBreak", "ChainHead", "EventStore", "Recorded", "chain_next",
           "decode_event", "verify_chain"]

_PAGE = 2000


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


class Recorded(msgspec.Struct, frozen=True, gc=False):
    """An event with its place in its stream."""

    stream: str
    version: int
    event: Event


class EventStore:
    """Append and read run streams; a version conflict means another writer got there first."""

    def __init__(self, path: Path | str | None = None, *, lock_timeout: int = 30,
                 key: LedgerKey | None = None, read_only: bool = False,
                 witnesses: Sequence[Path] = (), rows: Rows | None = None) -> None:
        """Open the ledger at `path` (a SQLite file, made when missing, or a `postgresql://`
        URL) to read and write, or `read_only`; or keep the `rows` of a store already open.

        Every failure of the file, its disk or the server is a `StorageFault`, here and in
        every method: an empty file beside `witnesses` (records of its runs), a foreign,
        truncated or damaged file, a read-only one (when writing), a full disk, a server that
        cannot be reached or refuses the login."""
        self.key = key
        """The ledger key the store chains with (None: unkeyed rows, as before keys)."""
        self.read_only = read_only
        """Opened read-only: every write is refused with `LedgerReadOnly`."""
        if rows is None:
            rows = _open_rows(str(path), lock_timeout=lock_timeout, read_only=read_only,
                              witnesses=witnesses)
        self._rows_of = rows
        self.path = rows.where
        """The ledger as people may see it: its file, or its URL without a password."""
        self._books: dict[str, LeaseBook] = {}
        self._guard = threading.Lock()
        if read_only or key is None:
            return
        try:
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

    @property
    def rows(self) -> Rows:
        """The store under the chain (for copying a ledger)."""
        return self._rows_of

    def close(self) -> None:
        """Close the connections."""
        self._rows_of.close()

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
            stored.append(StoredRow(stream, expected_version + i + 1, event_tag(e),
                                    stored_row(prev, body, None if key is None else key.id)))
        try:
            self._rows_of.insert(stored)
        except RowConflict as exc:
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
        rows = self._rows_of.select(stream, through=version, last=True)
        return decode_row(rows[0][1]).chain if rows else GENESIS

    # ---------------------------------------------------------------- the chain and its seal

    def _seal_ledger(self, key: LedgerKey) -> None:
        """Seal the ledger the first time a key opens it: pin the runs written before the key.

        A ledger that holds keyed rows but no seal had its seal removed: it is never sealed
        again (that would pin forged runs); `verify` says so instead."""
        rows = self._rows_of
        if rows.seal() is not None or rows.has_keyed_rows():
            return
        legacy: dict[str, tuple[int, str]] = {}
        for stream in rows.streams():
            last = rows.select(stream, last=True)
            if last:
                legacy[stream] = (last[0][0], decode_row(last[0][1]).chain)
        seal = Seal(key=key.id, legacy=legacy, mac=seal_mac(key, legacy))
        rows.put_seal(msgspec.json.encode(seal))

    def key_in_use(self) -> str | None:
        """The id of the key the ledger is chained with: its seal's, or (a ledger whose seal was
        removed) a keyed row's; None for a ledger no key has opened (empty, or only unkeyed
        rows written before keys)."""
        seal = self.seal()
        if seal is not None:
            return seal.key
        rows = self._rows_of
        if not rows.has_keyed_rows():
            return None
        for stream in rows.streams():
            for _, data in rows.select(stream, last=True):
                if (key := decode_row(data).key) is not None:
                    return key
        return None

    def chain_with(self, key: LedgerKey) -> None:
        """Chain what this store appends from now on with `key`, sealing the ledger first when
        no key has opened it (the caller checked that `key` is the ledger's: `key_in_use`)."""
        if self.read_only:
            raise LedgerReadOnly(f"The ledger {self.path} was opened read-only.", path=self.path)
        self._seal_ledger(key)
        self.key = key

    def seal(self) -> Seal | None:
        """The ledger's seal, None when it has none (or it is not readable as one)."""
        row = self._rows_of.seal()
        try:
            return None if row is None else msgspec.json.decode(row, type=Seal)
        except msgspec.DecodeError:
            return None

    def has_keyed_rows(self) -> bool:
        """Some stored event of the ledger is keyed."""
        return self._rows_of.has_keyed_rows()

    def chain_at(self, stream: str, version: int) -> ChainHead | None:
        """The stream's chain value at `version` (None when there is no such event)."""
        if version < 1:
            return None
        rows = self._rows_of.select(stream, after=version - 1, through=version)
        if not rows:
            return None
        row = decode_row(rows[0][1])
        return ChainHead(event=version, head=row.chain, kind=UNKEYED if row.key is None else KEYED)

    def head(self, stream: str) -> ChainHead | None:
        """The stream's chain value at its last event (None when the stream is empty)."""
        return self.chain_at(stream, self.version(stream))

    def read(self, stream: str, *, after: int = 0,
             kinds: Collection[type[Event]] | None = None) -> list[Recorded]:
        """The stream's events with version above `after`, in order, with their versions; with
        `kinds`, only events of those classes (rows of other kinds are never decoded)."""
        tags = None if kinds is None else _tags(kinds)
        rows = self._rows(stream, after, tags)
        with collector_paused():
            found = [Recorded(stream, version, _event(state)) for version, state in rows]
        if kinds is None or not UPCASTERS:
            return found
        wanted = tuple(kinds)
        return [r for r in found if isinstance(r.event, wanted)]

    def events(self, stream: str, *, kinds: Collection[type[Event]] | None = None) -> list[Event]:
        """The stream's events alone, in order: what a projection folds.

        With `kinds`, only events of those classes, and the rows of other kinds are never
        decoded. Rows stored under an old tag are read too (an upcaster may turn them into one
        of `kinds`), then kept by their class.
        """
        if kinds is None:
            rows = self._rows(stream, 0)
        else:
            rows = self._rows(stream, 0, _tags(kinds))
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
        return self._rows_of.select(stream, after=after, through=through, tags=tags)

    def version(self, stream: str) -> int:
        """The stream's current version (0 when empty)."""
        rows = self._rows_of.select(stream, last=True)
        return rows[0][0] if rows else 0

    # ------------------------------------------------------------ snapshots (a cache, not facts)

    def save_snapshot(self, stream: str, version: int, fmt: str, state: bytes) -> bool:
        """Keep `state` as the stream's snapshot at `version`, unless a newer one of the same
        format is there. One per stream; never part of the events or their chain. A snapshot
        is a cache: one that cannot be written (a full disk, a long lock) is skipped, False."""
        if self.read_only:
            return False
        return self._rows_of.save_snapshot(stream, version, fmt, state)

    def snapshot(self, stream: str, fmt: str) -> bytes | None:
        """The stream's snapshot when it was written in format `fmt` (None when unreadable)."""
        return self._rows_of.snapshot(stream, fmt)

    def drop_snapshot(self, stream: str) -> None:
        """Forget the stream's snapshot (a run that ended needs none); a failure is skipped."""
        if not self.read_only:
            self._rows_of.drop_snapshot(stream)

    def all(self, *, topics: Sequence[str] = ()) -> Iterator[Recorded]:
        """The whole log in order of writing, optionally only some tags."""
        start: int | None = None
        while True:
            page = self._rows_of.notifications(start, _PAGE, topics)
            for n in page:
                yield Recorded(n.stream, n.version, _event(n.state))
            if len(page) < _PAGE:
                return
            start = page[-1].id


def _open_rows(location: str, *, lock_timeout: int, read_only: bool,
               witnesses: Sequence[Path]) -> Rows:
    """The store at `location`: a PostgreSQL server for a `postgresql://` URL (psycopg is
    imported only then), else a SQLite file."""
    if is_postgres(location):
        from armbench.ledger.rows_postgres import PostgresRows
        return PostgresRows(parse_postgres(location), read_only=read_only)
    return SqliteRows(location, lock_timeout=lock_timeout, read_only=read_only,
                      witnesses=witnesses)


def _tags(kinds: Collection[type[Event]]) -> list[str]:
    """The stored tags of `kinds`, and every retired tag (an upcaster may turn it into one)."""
    return sorted({str(k.__struct_config__.tag) for k in kinds} | UPCASTERS.keys())


def decode_event(state: bytes) -> Event:
    """One stored row's event, as `read` decodes it (for a caller that already holds the rows
    `read_raw` gave, such as verify: one read of the log, not two). The caller pauses the
    collector around a batch (`ledger.collector`)."""
    return _event(state)


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
