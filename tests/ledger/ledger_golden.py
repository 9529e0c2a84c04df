"""Golden fixtures of the log: read them, check them against today's code, write missing ones.

`golden/<Tag>.json` holds one event twice, byte for byte as armbench wrote it: `event`, the bare
event (`encode_event`), and `stored`, the record in the ledger's `state` column
(`{"chain": sha256(GENESIS + event), "event": ...}`, the first event of a stream).
Run `python tests/ledger/ledger_golden.py` to write the fixture of a new event kind; it never
rewrites an existing one.
"""

from __future__ import annotations

import sys
import tempfile
import typing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    Event,
    StepLeased,
    StepReported,
    decode_event,
    encode_event,
)
from armbench.ledger.store import GENESIS, EventStore, chain_next

__all__ = ["GOLDEN", "Golden", "encode_golden", "problems", "read", "stored_by_the_store", "stored_bytes",
           "union_tags", "write_missing"]

GOLDEN = Path(__file__).with_name("golden")
AT = datetime(2026, 1, 1, tzinfo=UTC)


class Golden(msgspec.Struct, frozen=True):
    """A fixture's two forms, as their exact bytes."""

    event: msgspec.Raw
    stored: msgspec.Raw


def union_tags() -> list[str]:
    """The tag of every kind the log's union decodes, in union order."""
    return [t.__struct_config__.tag for t in typing.get_args(Event)]


def read(tag: str) -> Golden:
    """The fixture of one tag."""
    return msgspec.json.decode((GOLDEN / f"{tag}.json").read_bytes(), type=Golden)


def stored_bytes(event: bytes, prev: str = GENESIS) -> bytes:
    """How the store writes an event after `prev` (by default, as the first of its stream)."""
    chain = chain_next(prev, event)
    return b'{"chain":"' + chain.encode() + b'","event":' + event + b"}"


def _like(new: Any, old: Any) -> Any:
    """`new` cut to the keys `old` has (fields added later, with their defaults, drop out)."""
    if isinstance(new, dict) and isinstance(old, dict):
        return {k: _like(v, old[k]) for k, v in new.items() if k in old}
    if isinstance(new, list) and isinstance(old, list) and len(new) == len(old):
        return [_like(a, b) for a, b in zip(new, old, strict=True)]
    return new


def problems(event: bytes) -> list[str]:
    """What today's code gets wrong about an event's bytes: it must decode and re-encode equal."""
    try:
        decoded = decode_event(event)
    except msgspec.ValidationError as exc:
        return [f"no longer decodes: {exc}"]
    again = msgspec.json.encode(_like(msgspec.json.decode(encode_event(decoded)),
                                      msgspec.json.decode(event)))
    if again != bytes(event):
        return ["re-encodes to other bytes (a field renamed, retyped, reordered or dropped):\n"
                f"  golden: {bytes(event).decode()}\n  now:    {again.decode()}"]
    return []


def stored_by_the_store(event: Event, folder: Path) -> tuple[str, bytes]:
    """The bytes the EventStore writes for an event, and the chain value before it: the first
    of its stream, or, for a report or a check (the lease rule), the one after its step's lease."""
    store = EventStore(folder / "golden.sqlite")
    try:
        before: list[Event] = []
        if isinstance(event, StepReported | AttemptFailed | CheckRan):
            before = [StepLeased(step=event.step, lease=getattr(event, "lease", "l1"),
                                 driver="golden", at=AT, expires_at=AT)]
            store.append("golden", before, expected_version=0)
        store.append("golden", [event], expected_version=len(before))
        rows = store.read_raw("golden")
        prev = msgspec.json.decode(rows[0][1])["chain"] if before else GENESIS
        return prev, rows[-1][1]
    finally:
        store.close()


def encode_golden(event: Event, stored: bytes) -> bytes:
    """A fixture's bytes: each form on its own line, exactly as written."""
    return b'{\n  "event": ' + encode_event(event) + b',\n  "stored": ' + stored + b"\n}\n"


def write_missing() -> list[str]:
    """Write the fixture of every kind that has none; return the tags written."""
    from ledger_samples import SAMPLES

    written = []
    for tag in union_tags():
        path = GOLDEN / f"{tag}.json"
        if not path.exists():
            with tempfile.TemporaryDirectory() as folder:
                prev, stored = stored_by_the_store(SAMPLES[tag], Path(folder))
            if prev != GENESIS:  # written after its lease: the fixture holds it as a first event
                stored = stored_bytes(encode_event(SAMPLES[tag]))
            path.write_bytes(encode_golden(SAMPLES[tag], stored))
            written.append(tag)
    return written


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    print("wrote:", ", ".join(write_missing()) or "nothing (every kind has its fixture)")
