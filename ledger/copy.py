"""Moving a ledger between stores (SQLite and PostgreSQL): every row as it is stored, in the
order it was written, with the seal, the quarantined runs and the snapshots. The rows' bytes
and their chain values are copied, not re-chained, so `armbench verify` holds the copy to the
same key and seal."""

from __future__ import annotations

import msgspec

from armbench.ledger.errors import Refusal
from armbench.ledger.rows import StoredRow
from armbench.ledger.store import EventStore

__all__ = ["Copied", "copy_ledger"]

_PAGE = 2000


class Copied(msgspec.Struct, frozen=True, kw_only=True):
    """What `armbench ledger copy` copied."""

    runs: int
    events: int
    source: str
    """The source, as people may see it (a URL without its password)."""
    target: str


def copy_ledger(source: str, target: str) -> Copied:
    """Copy the ledger at `source` into the empty ledger at `target`. Neither is opened with the
    ledger key, so the copy is not sealed anew: the source's seal is copied with its rows."""
    src = EventStore.for_reading(source)
    try:
        dst = EventStore(target)
        try:
            return _copy(src, dst)
        finally:
            dst.close()
    finally:
        src.close()


def _copy(src: EventStore, dst: EventStore) -> Copied:
    if dst.rows.notifications(None, 1):
        raise Refusal(f"The ledger {dst.path} already holds runs; a copy goes into an empty "
                      "ledger only (nothing was copied). Give a new SQLite file or an empty "
                      "PostgreSQL database.", code="ledger_not_empty")
    runs, events, start = set(), 0, None
    while True:
        page = src.rows.notifications(start, _PAGE)
        batch: list[StoredRow] = []
        for n in page:
            if batch and batch[-1].stream != n.stream:
                dst.rows.insert(batch)
                batch = []
            batch.append(StoredRow(n.stream, n.version, n.tag, n.state))
            runs.add(n.stream)
        if batch:
            dst.rows.insert(batch)
        events += len(page)
        if len(page) < _PAGE:
            break
        start = page[-1].id
    seal = src.rows.seal()
    if seal is not None:
        dst.rows.put_seal(seal)
    for stream, entry in src.rows.quarantined().items():  # what was set aside stays aside
        dst.rows.put_quarantine(stream, entry)
    for stream, version, fmt, state in src.rows.snapshots():
        dst.rows.save_snapshot(stream, version, fmt, state)
    return Copied(runs=len(runs), events=events, source=src.path, target=dst.path)
