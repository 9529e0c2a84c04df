"""A run's hash chain: keyed (HMAC-SHA256, the ledger key) or, in ledgers written before keys,
plain sha256; and the seal that says which runs of a ledger may be unkeyed.

A stored row is `{"chain": <hex>, "event": ...}` (unkeyed) or `{"chain": <hex>, "key": <key
id>, "event": ...}` (keyed). The chain kind is the row's own: a keyed row's value is
HMAC(key, stream, previous value, event bytes), so a writer without the key cannot make one. An
unkeyed row anybody can recompute, so it is accepted only where the ledger's seal (written, and
MAC'd, by the first keyed store to open the ledger) pins it: the runs that existed before the
key, each up to the version and chain value it had then. Everything else must be keyed.
"""

from __future__ import annotations

import hashlib
import hmac

import msgspec

__all__ = ["GENESIS", "KEYED", "UNKEYED", "LedgerKey", "Quarantine", "Seal", "chain_next",
           "keyed_next", "quarantine_mac", "seal_mac", "stored_row"]

GENESIS = "0" * 64
KEYED = "hmac-sha256"
UNKEYED = "sha256"
_ID_LABEL = b"armbench ledger key id"
_CHAIN_LABEL = b"armbench-ledger-chain/v1"
_SEAL_LABEL = b"armbench-ledger-seal/v1"
_QUARANTINE_LABEL = b"armbench-ledger-quarantine/v1"


class LedgerKey:
    """The ledger's HMAC key. Its bytes are never shown: repr and str give only its id."""

    __slots__ = ("_secret", "id")

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 32:
            raise ValueError("a ledger key has at least 32 bytes")
        self._secret = secret
        self.id = hmac.new(secret, _ID_LABEL, hashlib.sha256).hexdigest()[:16]
        """A fingerprint that names the key without revealing it (stored in every keyed row)."""

    def __repr__(self) -> str:
        return f"LedgerKey(id={self.id})"

    __str__ = __repr__

    def mac(self, *parts: bytes) -> str:
        """HMAC-SHA256 of the parts, each but the last followed by a newline, as hex."""
        return hmac.new(self._secret, b"\n".join(parts), hashlib.sha256).hexdigest()


def chain_next(prev: str, event_bytes: bytes) -> str:
    """The unkeyed chain value of an event stored after `prev` (ledgers written before keys)."""
    return hashlib.sha256(prev.encode() + event_bytes).hexdigest()


def keyed_next(key: LedgerKey, stream: str, prev: str, event_bytes: bytes) -> str:
    """The keyed chain value of an event of `stream` stored after `prev`."""
    return key.mac(_CHAIN_LABEL, stream.encode(), prev.encode(), event_bytes)


def stored_row(chain: str, event_bytes: bytes, key_id: str | None) -> bytes:
    """The bytes stored for one event: its chain value, the key's id when keyed, the event."""
    if key_id is None:
        return b'{"chain":"' + chain.encode() + b'","event":' + event_bytes + b"}"
    return (b'{"chain":"' + chain.encode() + b'","key":"' + key_id.encode() + b'","event":'
            + event_bytes + b"}")


class Seal(msgspec.Struct, frozen=True, kw_only=True):
    """Written once, by the first store that opens the ledger with a key."""

    key: str
    """The id of the key that sealed the ledger."""
    legacy: dict[str, tuple[int, str]] = {}
    """Runs that existed before the key: run -> (its last version then, that event's chain)."""
    mac: str
    """HMAC of the key id and `legacy`: a seal cannot be made or edited without the key."""


def seal_mac(key: LedgerKey, legacy: dict[str, tuple[int, str]]) -> str:
    """The MAC a seal of `legacy` made with `key` carries."""
    body = msgspec.json.encode(sorted((run, list(head)) for run, head in legacy.items()))
    return key.mac(_SEAL_LABEL, key.id.encode(), body)


class Quarantine(msgspec.Struct, frozen=True, kw_only=True):
    """A run set aside (`armbench ledger quarantine`): its rows stay, no command folds them."""

    run: str
    position: int
    """The first event of the run that did not hold (0: set aside without a break found)."""
    reason: str
    """Why, as the chain check said it."""
    at: str
    """When it was set aside (ISO 8601, UTC)."""
    key: str | None = None
    """The id of the key that MAC'd it; None in a ledger without a key."""
    mac: str = ""
    """HMAC of the rest under the ledger key: an entry only a key holder can make, so a writer
    without the key cannot hide an honest run."""


def quarantine_mac(key: LedgerKey, run: str, position: int, reason: str, at: str) -> str:
    """The MAC of a quarantine entry's fields."""
    return key.mac(_QUARANTINE_LABEL, run.encode(), str(position).encode(), reason.encode(), at.encode())
