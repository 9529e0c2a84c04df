"""The append-only event store: one stream per run, on eventsourcing's SQLite recorder."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import msgspec
from eventsourcing.persistence import IntegrityError, StoredEvent
from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

from ledger.errors import ConcurrencyConflict, LedgerError
from ledger.events import Event, decode_event, encode_event, event_tag

__all__ = ["EventStore", "Recorded"]

_PAGE = 2000


class Recorded(msgspec.Struct, frozen=True):
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
        self._recorder = SQLiteApplicationRecorder(self._datastore, events_table_name="events")
        self._recorder.create_table()

    def close(self) -> None:
        """Close the connections."""
        self._datastore.close()

    def append(self, stream: str, events: Sequence[Event], *, expected_version: int) -> int:
        """Append events after `expected_version`; return the stream's new version."""
        if not events:
            return expected_version
        stored = [
            StoredEvent(
                originator_id=stream,
                originator_version=expected_version + i + 1,
                topic=event_tag(e),
                state=encode_event(e),
            )
            for i, e in enumerate(events)
        ]
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

    def read(self, stream: str, *, after: int = 0) -> list[Recorded]:
        """The stream's events with version above `after`, in order."""
        rows = self._recorder.select_events(stream, gt=after or None)
        return [
            Recorded(stream, r.originator_version, 0, decode_event(r.state)) for r in rows
        ]

    def read_raw(self, stream: str) -> list[bytes]:
        """The stream's stored bytes, in order (for benchmarks and verification)."""
        return [r.state for r in self._recorder.select_events(stream)]

    def version(self, stream: str) -> int:
        """The stream's current version (0 when empty)."""
        rows = self._recorder.select_events(stream, desc=True, limit=1)
        return rows[0].originator_version if rows else 0

    def all(self, *, topics: Sequence[str] = ()) -> Iterator[Recorded]:
        """The whole log in order of writing, optionally only some tags."""
        start: int | None = None
        while True:
            page = self._recorder.select_notifications(
                start, _PAGE, topics=topics, inclusive_of_start=False
            )
            for n in page:
                yield Recorded(str(n.originator_id), n.originator_version, n.id,
                               decode_event(n.state))
            if len(page) < _PAGE:
                return
            start = page[-1].id
