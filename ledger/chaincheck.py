"""Checking one run's stored rows against its chain, keyed or not (see `ledger.chain`)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from armbench.ledger.chain import GENESIS, LedgerKey, Seal, chain_next, keyed_next, seal_mac

__all__ = ["ChainBreak", "ChainRule", "StoredRow", "decode_row", "rule_for", "verify_chain"]

CHAIN = ("its bytes or its place do not match the hash chain (edited, reordered, or an earlier "
         "event removed)")


class StoredRow(msgspec.Struct, frozen=True):
    """A stored row's envelope; `key` is the id of the key that chained it (None: unkeyed)."""

    chain: str
    event: msgspec.Raw
    key: str | None = None


_ROW = msgspec.json.Decoder(StoredRow)


def decode_row(data: bytes) -> StoredRow:
    """The envelope of a stored row (the event stays raw)."""
    return _ROW.decode(data)


class ChainBreak(msgspec.Struct, frozen=True):
    """The first place a run's stored events stop matching their chain."""

    position: int
    reason: str


class ChainRule(msgspec.Struct, frozen=True, kw_only=True):
    """How a run's rows must be chained."""

    key: LedgerKey | None = None
    """The ledger key, when verify has it."""
    keyed: bool = False
    """The ledger is keyed (sealed, or holds keyed rows): unkeyed rows only where `legacy` says."""
    legacy: tuple[int, str] | None = None
    """From the seal: the run's events 1..n were written before the key; n's chain value."""


def verify_chain(rows: Sequence[tuple[int, bytes]], *, stream: str = "",
                 rule: ChainRule | None = None, start: int = 1, prev: str = GENESIS) -> ChainBreak | None:
    """Check (version, stored bytes) rows of one stream: versions 1..n, each chain value right,
    each row of the kind the rule allows. `start` and `prev` go on from rows already checked:
    the first row's version, and the chain value of the row before it."""
    rule = rule or ChainRule()
    for expected, (version, data) in enumerate(rows, start=start):
        if version != expected:
            return ChainBreak(position=expected, reason="it is missing (the next stored event "
                              f"is number {version})")
        try:
            row = decode_row(data)
        except msgspec.DecodeError:
            return ChainBreak(position=version, reason="the stored record is not readable")
        why = _unkeyed(rule, version, row, prev) if row.key is None else _keyed(
            rule, stream, version, row, prev)
        if why is not None:
            return ChainBreak(position=version, reason=why)
        prev = row.chain
    if rule.legacy is not None and start - 1 + len(rows) < rule.legacy[0]:
        return ChainBreak(position=start + len(rows), reason="it is missing (the ledger's seal "
                          f"says the run had {rule.legacy[0]} events before the key)")
    return None


def _unkeyed(rule: ChainRule, version: int, row: StoredRow, prev: str) -> str | None:
    before_key = rule.legacy is not None and version <= rule.legacy[0]
    if rule.keyed and not before_key:
        return ("it is chained without the ledger key (plain sha256) in a run the ledger's key "
                "must chain: it was written or rewritten by something that does not hold the key")
    if chain_next(prev, bytes(row.event)) != row.chain:
        return CHAIN
    if rule.legacy is not None and version == rule.legacy[0] and row.chain != rule.legacy[1]:
        return ("its chain value differs from the one the ledger's seal pinned for this run "
                "when the key was made: the run was rewritten since")
    return None


def _keyed(rule: ChainRule, stream: str, version: int, row: StoredRow, prev: str) -> str | None:
    if rule.key is None:
        return (f"it is chained with a ledger key (id {row.key}), and verify was given none")
    if row.key != rule.key.id:
        return (f"it is chained with the ledger key {row.key}, not with this ledger's key "
                f"{rule.key.id}")
    if rule.legacy is not None and version <= rule.legacy[0]:
        return (f"it is keyed, but the ledger's seal says the run's first {rule.legacy[0]} "
                "events were written before the key")
    if keyed_next(rule.key, stream, prev, bytes(row.event)) != row.chain:
        return CHAIN
    return None


def rule_for(run: str, rows: Sequence[tuple[int, bytes]], *, key: LedgerKey | None,
             seal: Seal | None, ledger_keyed: bool, key_file: str) -> tuple[ChainRule, str | None]:
    """The rule a run's rows are held to, or why verify cannot hold them to one (the key is
    missing or another, the seal edited). `ledger_keyed`: some row of the ledger is keyed."""
    keyed_ids = {row.key for row in _envelopes(rows) if row.key is not None}
    fix = (f"Expected the key this ledger was written with; restore that file at {key_file} "
           "(or set ARMBENCH_HOME to the folder that holds it) and verify again.")
    if key is None:
        if seal is None and not keyed_ids and not ledger_keyed:
            return ChainRule(), None  # a ledger written before keys: sha256 rows only
        wanted = seal.key if seal is not None else sorted(keyed_ids or {"?"})[0]
        return ChainRule(), (f"the ledger is keyed (key id {wanted}), and no ledger key was "
                             f"found at {key_file}. {fix}")
    if seal is not None and seal.key != key.id:
        return ChainRule(), (f"the ledger was sealed with key id {seal.key}, but the key at "
                             f"{key_file} has id {key.id}. {fix}")
    other = sorted(keyed_ids - {key.id})
    if other:
        return ChainRule(), (f"run {run} is chained with key id {other[0]}, but the key at "
                             f"{key_file} has id {key.id}. {fix}")
    if seal is not None and seal_mac(key, seal.legacy) != seal.mac:
        return ChainRule(), ("the ledger's seal does not match its key (id "
                             f"{key.id}): it was edited, so which runs were written before the "
                             "key cannot be told. Nothing in this ledger can be trusted beyond "
                             "its published records.")
    if seal is None and not ledger_keyed and not keyed_ids:
        return ChainRule(key=key), None  # opened without sealing (a store made with no key)
    legacy = seal.legacy.get(run) if seal is not None else None
    return ChainRule(key=key, keyed=True, legacy=legacy), None


def _envelopes(rows: Sequence[tuple[int, bytes]]) -> list[StoredRow]:
    found = []
    for _, data in rows:
        try:
            found.append(decode_row(data))
        except msgspec.DecodeError:
            continue
    return found
