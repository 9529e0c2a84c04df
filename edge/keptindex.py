"""What libgit2 may read in a trial's clone when it compares the clone with the index armbench
kept when it made it, read from that index's bytes (no libgit2, no git).

libgit2's diff of an index against a work tree (what its `add_all` runs first) hashes a file
the index has in two cases only: the index says the file was empty and it is not now, or its
size is the index's and its stat data differ. A tool can make either cost anything: a tracked
empty `__init__.py` truncated up to 20 GB reads 20 GB of zeros, and neither libgit2's diff nor
its `add_all` can be stopped. So `work_diff` looks first at the entries that allow it, the
empty ones and those over the diff's file limit (`KeptIndex.watched`, a few in a real project),
and reads the diff in process only when libgit2 would read none of them whole; every other
entry it may hash is at most the limit, `KeptIndex.small_bytes` in all.

Only index versions 2 and 3 are read, and only entries at stage 0 with no extended flag (what
a checkout writes): anything else gives None, and the caller takes git's own path. The format:
https://git-scm.com/docs/index-format."""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

__all__ = ["KeptIndex", "Stamp", "read_kept", "stamp_of"]

_HEADER = struct.Struct(">4sII")
_ENTRY = struct.Struct(">10I20sH")
_TAIL_AT = 36
_TAIL = struct.Struct(">I20sH")
"""An entry's size, object id and flags."""
_NAME_AT = _ENTRY.size
_NAME_MASK = 0x0FFF
_NOT_PLAIN = 0xF000
"""An entry's flags: assume-valid, extended (skip-worktree, intent-to-add) and its stage."""

Stamp = tuple[int, int, int, int, int, int]
"""mtime and ctime in ns, inode, uid, gid and size, each as the index keeps it (32 bits): what a
file's lstat must match for libgit2 to call it unchanged without reading it."""


@dataclass(frozen=True, slots=True)
class KeptIndex:
    """A kept index: its bytes (for the throwaway repository), its `watched` entries (each
    empty or over `limit` bytes: path, as the file system names it, and stamp) and the bytes of
    all the others."""

    data: bytes
    watched: tuple[tuple[str, Stamp], ...]
    small_bytes: int
    limit: int


def read_kept(data: bytes, limit: int) -> KeptIndex | None:
    """The kept index in `data`, its entries over `limit` bytes or empty watched, or None where
    this reader does not take it (see the module)."""
    if len(data) < _HEADER.size:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3):
        return None
    watched: list[tuple[str, Stamp]] = []
    small = 0
    at = _HEADER.size
    tail_of = _TAIL.unpack_from
    try:
        for _ in range(count):
            size, _oid, flags = tail_of(data, at + _TAIL_AT)
            if flags & _NOT_PLAIN:
                return None
            length = flags & _NAME_MASK
            if length == _NAME_MASK:  # a name of 4095 bytes or more: its NUL says where it ends
                length = data.index(b"\0", at + _NAME_AT) - at - _NAME_AT
            elif data[at + _NAME_AT + length] != 0:
                return None
            if size == 0 or size > limit:
                cs, cn, ms, mn, _dev, ino, _mode, uid, gid, *_ = _ENTRY.unpack_from(data, at)
                watched.append((os.fsdecode(data[at + _NAME_AT:at + _NAME_AT + length]),
                                (ms * 10**9 + mn, cs * 10**9 + cn, ino, uid, gid, size)))
            else:
                small += size
            at += (_NAME_AT + length + 8) & ~7  # each entry is padded with 1 to 8 NULs to 8 bytes
    except (struct.error, ValueError, IndexError):
        return None
    return KeptIndex(data, tuple(watched), small, limit)


def stamp_of(info: os.stat_result) -> Stamp:
    """A file's lstat as an index entry keeps it."""
    mask = 0xFFFFFFFF
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_ino & mask, info.st_uid, info.st_gid,
            info.st_size & mask)
