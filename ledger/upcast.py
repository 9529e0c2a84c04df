"""Upcasters: pure functions that turn an old version of a stored event into today's.

A tag names one shape of an event forever. A breaking change to a kind is a new version with a
new tag (`StepReported` is version 1; its next version would be `StepReported@2`), the old tag
leaves the union, and `UPCASTERS[old tag]` maps an old event's dict to the next version's dict
(its `type` set to the new tag). The store tries the typed decoder first and comes here only for
a tag the union does not know, so reading today's events never pays for this.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import msgspec

from armbench.ledger.errors import LedgerError
from armbench.ledger.events import Event

__all__ = ["KNOWN_TAGS", "MAX_STEPS", "UPCASTERS", "Upcaster", "upcast", "upcast_event"]

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

UPCASTERS: dict[str, Upcaster] = {}
"""Old tag -> a pure function from that version's dict to the next version's dict."""

KNOWN_TAGS: frozenset[str] = frozenset(t.__struct_config__.tag for t in typing.get_args(Event))
"""The tags the union decodes: every kind's current version."""

MAX_STEPS = 32
"""More upcasts than this for one event means the registry loops."""

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Event)


def upcast(raw: dict[str, Any], upcasters: dict[str, Upcaster] | None = None) -> dict[str, Any]:
    """Apply upcasters until the event's tag is one the union knows."""
    table = UPCASTERS if upcasters is None else upcasters
    first = raw.get("type")
    for _ in range(MAX_STEPS):
        tag = raw.get("type")
        if tag in KNOWN_TAGS:
            return raw
        step = table.get(tag) if isinstance(tag, str) else None
        if step is None:
            raise LedgerError(
                f"The ledger holds an event of kind {tag!r}, which this armbench neither knows "
                "nor can upcast (it may have been written by a newer armbench). Upgrade armbench "
                "to read this ledger.", code="unknown_event_kind")
        raw = step(dict(raw))
    raise LedgerError(f"The upcasters of {first!r} never reach a kind the union knows (they loop "
                      f"past {MAX_STEPS} steps): fix ledger/upcast.py.", code="upcaster_loop")


def upcast_event(event_bytes: bytes) -> Event:
    """Decode an event whose tag the union does not know, through its upcasters."""
    raw = msgspec.json.decode(event_bytes)
    if not isinstance(raw, dict):
        raise LedgerError(f"A stored event is not a JSON object: {event_bytes[:80]!r}.")
    return _DECODER.decode(_ENCODER.encode(upcast(raw)))
