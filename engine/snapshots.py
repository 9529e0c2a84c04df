"""Snapshots of a run's scheduling state: how a fresh process catches up without folding it all.

A snapshot is the engine's `RunState` at some version of the run's stream, encoded with
msgpack. It is a cache of a fold, never a fact: it lives beside the events (not in the hash
chain), only the engine reads it, projections never do, and dropping it changes nothing but
speed. A process that resumes a run decodes the newest snapshot and folds only the events after
it, so catching up costs the size of the plan plus at most `EVERY` events, whatever number of
trials were already reported.

A snapshot is read back only by the same code that wrote it: its format names a hash of the
source files of the modules whose code decides what the state is (`aggregates.workflow`,
`ledger.events`), so any change to them makes older snapshots unreadable and the run is folded
from its first event. (Read as files, not through `inspect`, and armbench's version is looked up
only where no source is shipped: every `workflow next` and `report` of an external driver is a
process that restores a snapshot, and those two imports were a tenth of its start.)
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import msgspec

from armbench.aggregates import workflow
from armbench.aggregates.workflow import RunState
from armbench.ledger import events

__all__ = ["EVERY", "decode_state", "encode_state", "snapshot_format"]

EVERY = 5000
"""Events between snapshots: a resume folds at most this many after the newest one."""

_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(RunState)


@functools.cache
def snapshot_format() -> str:
    """`RunState/2/<hash of the code that folds it>`."""
    digest = hashlib.sha256()
    for module in (workflow, events):
        try:
            digest.update(Path(module.__file__ or "").read_bytes())
        except OSError:  # no source shipped: the version alone has to tell
            digest.update(f"{module.__name__}/{_version()}".encode())
    return f"RunState/2/{digest.hexdigest()[:16]}"


def _version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("armbench")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return "source"


def encode_state(state: RunState) -> bytes:
    """The state's bytes."""
    return _ENCODER.encode(state)


def decode_state(data: bytes) -> RunState | None:
    """The state back, or None when the bytes do not decode as one (then fold from the start)."""
    try:
        return _DECODER.decode(data)
    except msgspec.DecodeError:
        return None
