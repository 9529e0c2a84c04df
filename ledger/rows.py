"""The store contract: what `EventStore` asks of the database under it, and nothing more.

Two stores keep it: `ledger.rows_sqlite` (the embedded default, a file) and
`ledger.rows_postgres` (a PostgreSQL server, for many drivers on many machines). The chain,
the seal's meaning, the lease rule and decoding stay in `EventStore`, the same for both; a
store only keeps rows. One contract suite (`tests/ledger/test_store_contract.py`) runs against
both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import msgspec

__all__ = ["KEYED_MARK", "LogScan", "Notification", "RowConflict", "Rows", "StoredRow",
           "select_through"]


class StoredRow(msgspec.Struct, frozen=True):
    """One event row as stored: its stream, version, tag and the chained bytes."""

    stream: str
    version: int
    tag: str
    state: bytes


class Notification(msgspec.Struct, frozen=True):
    """A stored row with its place in the whole log (its order of writing)."""

    id: int
    stream: str
    version: int
    state: bytes
    tag: str = ""


class Rows(Protocol):
    """The rows of one ledger. Every failure is a `StorageFault` naming the ledger by `where`
    (never with a password); a row that is already there is `RowConflict`."""

    where: str
    """The ledger, as people may see it: a file, or a URL without its password."""

    def insert(self, rows: Sequence[StoredRow]) -> None:
        """Insert all rows in one transaction, or none (`RowConflict` when a (stream, version)
        is already there)."""
        ...

    def select(self, stream: str, *, after: int = 0, through: int | None = None,
               tags: Sequence[str] | None = None, last: bool = False) -> list[tuple[int, bytes]]:
        """(version, bytes) of the stream above `after` (up to `through`, only `tags`), in
        order; with `last`, only the last such row."""
        ...

    def notifications(self, start: int | None, limit: int,
                      topics: Sequence[str] = ()) -> list[Notification]:
        """The whole log in order of writing after notification `start`, `limit` rows."""
        ...

    def streams(self) -> list[str]:
        """Every stream, in the order of its first row."""
        ...

    def has_keyed_rows(self) -> bool:
        """Some row was chained with a key."""
        ...

    def seal(self) -> bytes | None:
        """The ledger's seal as stored (None when it has none)."""
        ...

    def put_seal(self, seal: bytes) -> None:
        """Store the seal unless one is there (the first one stays)."""
        ...

    def quarantined(self) -> dict[str, bytes]:
        """The runs set aside: stream -> its stored entry (`ledger.chain.Quarantine`); {} in a
        ledger made before quarantine (no table yet)."""
        ...

    def put_quarantine(self, stream: str, entry: bytes) -> None:
        """Set a stream aside, unless it already is (the first entry stays)."""
        ...

    def save_snapshot(self, stream: str, version: int, fmt: str, state: bytes) -> bool:
        """Keep a snapshot unless a newer one of the format is there; False when it could not."""
        ...

    def snapshot(self, stream: str, fmt: str) -> bytes | None:
        """The stream's snapshot state in `fmt`, None when none or unreadable."""
        ...

    def snapshots(self) -> list[tuple[str, int, str, bytes]]:
        """Every snapshot: (stream, version, format, state), for copying a ledger."""
        ...

    def drop_snapshot(self, stream: str) -> None:
        """Forget the stream's snapshot (a failure is skipped: it is a cache)."""
        ...

    def close(self) -> None:
        """Close the connections."""
        ...


class _Stored(Protocol):
    @property
    def originator_version(self) -> int: ...
    @property
    def topic(self) -> str: ...
    @property
    def state(self) -> bytes: ...


class _EventReader(Protocol):
    def select_events(self, originator_id: str, *, gt: int | None = None, lte: int | None = None,
                      desc: bool = False, limit: int | None = None) -> Sequence[_Stored]: ...


def select_through(recorder: _EventReader, stream: str, *, after: int, through: int | None,
                   tags: Sequence[str] | None, last: bool) -> list[tuple[int, bytes]]:
    """`Rows.select` through an eventsourcing recorder's public `select_events` alone (which
    filters no tag: the rows of other tags are dropped here)."""
    if last and tags is None:
        found = recorder.select_events(stream, gt=after, lte=through, desc=True, limit=1)
    else:
        found = recorder.select_events(stream, gt=after, lte=through)
    wanted = None if tags is None else frozenset(tags)
    rows = [(r.originator_version, r.state) for r in found if wanted is None or r.topic in wanted]
    return rows[-1:] if last else rows


class RowConflict(Exception):
    """A (stream, version) that is already there: another writer got there first."""


KEYED_MARK = b'"key":"'
"""How a keyed row's envelope starts (`{"chain":...,"key":"...`): within its first 100 bytes."""


class LogScan:
    """`streams` and `has_keyed_rows` over the whole log, read a page of notifications at a
    time: the same for every store, written once (a store gives `notifications`)."""

    PAGE = 2000

    def notifications(self, start: int | None, limit: int,
                      topics: Sequence[str] = ()) -> list[Notification]:
        raise NotImplementedError

    def _scan(self) -> Iterator[Notification]:
        start: int | None = None
        while True:
            page = self.notifications(start, self.PAGE)
            yield from page
            if len(page) < self.PAGE:
                return
            start = page[-1].id

    def streams(self) -> list[str]:
        return list(dict.fromkeys(n.stream for n in self._scan() if n.version == 1))

    def has_keyed_rows(self) -> bool:
        return any(KEYED_MARK in n.state[:100] for n in self._scan())
