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

Every read of a run checks its chain first (`_checked`), as far as the rows read: a row forged
without the key, edited, removed or unreadable makes that run `RunTampered`, naming the first bad
event, and only that run: `all` passes over a tampered run's rows (they are in `tampered`). The
check goes on from where the last one stopped, so a run read again is checked only on its new
rows; `recheck` starts over (a run's report does, before it is written). A run set aside with
`quarantine` is never read (`RunQuarantined`) and `all` leaves it out; its rows stay.
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
    Quarantine,
    Seal,
    chain_next,
    keyed_next,
    quarantine_mac,
    seal_mac,
    stored_row,
)
from armbench.ledger.chaincheck import ChainBreak, ChainRule, decode_row, rule_for, verify_chain
from armbench.ledger.collector import collector_paused
from armbench.ledger.errors import (
    ConcurrencyConflict,
    DiskFull,
    LeaseRuleBroken,
    LedgerError,
    LedgerReadOnly,
    RunQuarantined,
    RunTampered,
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
        self._checks: dict[str, _Checked] = {}
        self._seal: Seal | None = None
        self._keyed: bool | None = None
        self._set_aside: dict[str, Quarantine] | None = None
        self.tampered: dict[str, RunTampered] = {}
        """The runs a read found tampered, by run (`all` passes over their rows)."""
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
        """The ledger's seal, None when it has none (or it is not readable as one). A seal is
        written once and never changed, so the first one found is kept."""
        if self._seal is not None:
            return self._seal
        row = self._rows_of.seal()
        try:
            self._seal = None if row is None else msgspec.json.decode(row, type=Seal)
        except msgspec.DecodeError:
            return None
        return self._seal

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

    # ---------------------------------------------------------------- reading checks the chain

    def _checked(self, stream: str, after: int | None = None) -> tuple[int, list[tuple[int, bytes]]]:
        """Check the stream's chain on the rows not checked yet: the last version checked (0 for a
        stream with no rows) and, with `after`, the stream's rows above it up to that version (one
        query, the hot read of a run's own driver). `RunQuarantined` for a run set aside,
        `RunTampered` at the first row that does not hold."""
        quarantined = self.quarantined().get(stream)
        if quarantined is not None:
            raise RunQuarantined(stream, quarantined.reason)
        with self._guard:
            done = self._checks.get(stream)
            if done is None:
                rows = self._rows_of.select(stream, after=0)
                if not rows:
                    return 0, []
                rule, problem = rule_for(stream, rows, key=self.key, seal=self.seal(),
                                         ledger_keyed=self._ledger_keyed(), key_file="")
                done = _Checked(rule=None if problem else rule)
            else:
                rows = self._rows_of.select(stream, after=done.version if after is None
                                            else min(after, done.version))
            fresh = [r for r in rows if r[0] > done.version]
            if done.rule is not None and fresh:
                broken = verify_chain(fresh, stream=stream, rule=done.rule, start=done.version + 1,
                                      prev=done.chain)
                if broken is not None:
                    error = RunTampered(stream, broken.position, broken.reason)
                    self.tampered[stream] = error
                    raise error
            if fresh:  # a ledger whose key this store lacks is read unchecked, as `verify` says
                done = _Checked(rule=done.rule, version=fresh[-1][0], chain=_chain_of(fresh[-1][1]))
            self._checks[stream] = done
            return done.version, [] if after is None else [r for r in rows if r[0] > after]

    def recheck(self, stream: str) -> None:
        """Check the stream's whole chain again, from its first row (`RunTampered` where it breaks)."""
        with self._guard:
            self._checks.pop(stream, None)
        self._checked(stream)

    def _ledger_keyed(self) -> bool:
        """`has_keyed_rows`, asked once per store (it reads the whole log); it matters only for a
        ledger without a seal, which a keyed writer makes the moment it opens it."""
        if self._keyed is None:
            self._keyed = self._rows_of.has_keyed_rows()
        return self._keyed

    def quarantined(self) -> dict[str, Quarantine]:
        """The runs set aside, by run: each entry MAC'd with this ledger's key (an entry that is
        not is ignored; in a ledger no key has chained, every entry counts)."""
        if self._set_aside is None:
            found: dict[str, Quarantine] = {}
            for stream, data in self._rows_of.quarantined().items():
                try:
                    entry = msgspec.json.decode(data, type=Quarantine)
                except msgspec.DecodeError:
                    continue
                if self._entry_holds(entry) and entry.run == stream:
                    found[stream] = entry
            self._set_aside = found
        return self._set_aside

    def _entry_holds(self, entry: Quarantine) -> bool:
        if entry.key is None:
            return self.key is None and self.seal() is None and not self._ledger_keyed()
        return self.key is not None and entry.key == self.key.id and entry.mac == quarantine_mac(
            self.key, entry.run, entry.position, entry.reason, entry.at)

    def quarantine(self, stream: str, *, reason: str, position: int, at: str) -> Quarantine:
        """Set a run aside: from now on no command folds it, and `all` leaves it out; its rows
        stay. MAC'd with the store's key (a ledger no key has chained takes an unkeyed entry)."""
        if self.read_only:
            raise LedgerReadOnly(f"The ledger {self.path} was opened read-only.", path=self.path)
        key = self.key
        entry = Quarantine(run=stream, position=position, reason=reason, at=at,
                           key=key.id if key is not None else None,
                           mac=quarantine_mac(key, stream, position, reason, at) if key else "")
        self._rows_of.put_quarantine(stream, msgspec.json.encode(entry))
        self._set_aside = None
        return self.quarantined().get(stream, entry)

    def read(self, stream: str, *, after: int = 0,
             kinds: Collection[type[Event]] | None = None) -> list[Recorded]:
        """The stream's events with version above `after`, in order, with their versions; with
        `kinds`, only events of those classes (rows of other kinds are never decoded). The chain
        is checked first, and only the rows it was checked on are read."""
        if kinds is None:
            rows = self._checked(stream, after)[1]
        else:
            rows = self._rows(stream, after, _tags(kinds), through=self._checked(stream)[0])
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
            rows = self._checked(stream, 0)[1]
        else:
            rows = self._rows(stream, 0, _tags(kinds), through=self._checked(stream)[0])
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

    def run_ids(self, topic: str = "RunStarted") -> list[str]:
        """The streams that hold a `topic` row, in the order of writing, none decoded nor checked:
        tampered and quarantined runs too (`runs` lists them as such)."""
        found: dict[str, None] = {}
        start: int | None = None
        while True:
            page = self._rows_of.notifications(start, _PAGE, [topic])
            found.update((n.stream, None) for n in page)
            if len(page) < _PAGE:
                return list(found)
            start = page[-1].id

    def all(self, *, topics: Sequence[str] = ()) -> Iterator[Recorded]:
        """The whole log in order of writing, optionally only some tags: every run's chain checked
        as far as its rows are read, a tampered run's rows passed over (`tampered` names it), a
        quarantined run's left out."""
        start: int | None = None
        aside = self.quarantined()
        while True:
            page = self._rows_of.notifications(start, _PAGE, topics)
            for n in page:
                if n.stream in aside or n.stream in self.tampered:
                    continue
                try:
                    if n.version > self._checks.get(n.stream, _UNCHECKED).version:
                        self._checked(n.stream)
                except RunTampered:
                    continue
                if n.version > self._checks[n.stream].version:  # written since: read it next time
                    continue
                yield Recorded(n.stream, n.version, _event(n.state))
            if len(page) < _PAGE:
                return
            start = page[-1].id


class _Checked(msgspec.Struct, frozen=True, kw_only=True):
    """How far a stream's chain was checked: the rule it is held to (None: this store cannot
    hold it to one, a keyed ledger read without its key), the last version and chain value."""

    rule: ChainRule | None
    version: int = 0
    chain: str = GENESIS


_UNCHECKED = _Checked(rule=None)


def _chain_of(data: bytes) -> str:
    try:
        return decode_row(data).chain
    except msgspec.DecodeError:  # unchecked (no rule) and unreadable: the read will say
        return GENESIS


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
