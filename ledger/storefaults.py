"""Storage faults at the store's boundary: every sqlite3 or file-system failure of the ledger
becomes a `StorageFault` that names the file, what happened to it and what to do.

The file is looked at before SQLite opens it (an empty, truncated or foreign file is named as
such, not as SQLite's "malformed"), and a failure is diagnosed from SQLite's error code, the
errno and the file system (a full disk often reaches SQLite as a plain "disk I/O error").
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from armbench.ledger.errors import (
    DiskFull,
    LedgerBusy,
    LedgerCorrupt,
    LedgerEmpty,
    LedgerReadOnly,
    LedgerUnreadable,
    StorageFault,
)

__all__ = ["MIN_FREE", "check_file", "diagnose", "read_only_refusal", "read_only_uri",
           "require_room", "writable"]

MIN_FREE = 1 << 20
"""Bytes a write needs free on its file system; below this the disk counts as full (1 MiB)."""

_HEADER = b"SQLite format 3\x00"
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_CORRUPT = 5, 6, 8, 11
_SQLITE_FULL, _SQLITE_NOTADB = 13, 26
_READ_COMMANDS = "runs, log, explain, verify, replay without --write, export"
_LOOKS = 3
"""Reads of a short file's size and header before it counts as truncated (`_shortfall`)."""


def _recover(path: Path) -> str:
    return (f"Keep a copy of it, then restore it from a backup, or salvage what SQLite can still "
            f"read with `sqlite3 {path} .recover | sqlite3 {path.with_suffix('.recovered.sqlite')}`"
            f" and put the recovered file in its place; `armbench verify <run>` then checks each "
            f"run's chain against its record.")


def check_file(path: Path, *, witnesses: Sequence[Path] = ()) -> bool:
    """Refuse a ledger file that SQLite would misread; True when it is there and not empty.

    An empty file beside `witnesses` (records of runs it should hold) is refused: SQLite would
    take it as a new ledger and orphan them. A file that does not start with SQLite's header,
    or stays shorter than its header says with no write-ahead log beside it (`_shortfall`), is
    `LedgerCorrupt`."""
    try:
        size = path.stat().st_size
        if size == 0:
            if witnesses:
                shown = ", ".join(str(w) for w in witnesses[:3])
                more = f" and {len(witnesses) - 3} more" if len(witnesses) > 3 else ""
                raise LedgerEmpty(
                    f"The ledger {path} is empty (0 bytes), but records of {len(witnesses)} "
                    f"run(s) exist beside it ({shown}{more}): opening it would start a new "
                    f"ledger and orphan them, so nothing was done. Restore {path} from a "
                    "backup; to start a new ledger on purpose, move those records' folders "
                    "aside first.", path=str(path))
            return False
        head = _head(path)
        if not head.startswith(_HEADER):
            raise LedgerCorrupt(
                f"The ledger {path} is not an SQLite database: its first bytes are "
                f"{head[:16]!r}, not SQLite's header. It was overwritten or damaged, and "
                f"nothing was read from it or written to it. {_recover(path)}", path=str(path))
        short = _shortfall(path, size, head)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _unreadable(path, exc.strerror or str(exc), writing=False) from exc
    if short is not None:
        raise LedgerCorrupt(
            f"The ledger {path} is truncated: it has {short[0]} bytes and its header says "
            f"{short[1]}, so events at its end are missing. Nothing was written to it. "
            f"{_recover(path)}", path=str(path))
    return True


def _head(path: Path) -> bytes:
    with path.open("rb") as f:
        return f.read(100)


def _shortfall(path: Path, size: int, head: bytes) -> tuple[int, int] | None:
    """The file's size and the larger one its header states, when it stays short; else None.

    A checkpoint copies the write-ahead log's pages into the file in page order, page 1 (and
    the new size in its header) first, and deletes the log only once the file is whole: a
    file read while one runs (the last process to close the ledger, or a writer's automatic
    checkpoint) is shorter than its header says, with nothing missing; SQLite reads those
    pages from the log. So a short file with a log beside it is left to SQLite, and one
    without is read again after the log was looked at, `_LOOKS` times in all: a checkpoint
    under way at the first look has ended by the second."""
    for look in range(1, _LOOKS + 1):
        expected = _size_in_header(head)
        if expected is None or size >= expected or _wal_bytes(path) > 0:
            return None
        if look == _LOOKS:
            return size, expected
        size, head = path.stat().st_size, _head(path)
    return None


def _wal_bytes(path: Path) -> int:
    """The size of the ledger's write-ahead log (0 when there is none)."""
    try:
        return Path(f"{path}-wal").stat().st_size
    except OSError:
        return 0


def _size_in_header(head: bytes) -> int | None:
    """The database size the header states, when the header says that field is valid."""
    if len(head) < 100:
        return 100  # not even the header is whole
    page = int.from_bytes(head[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(head[28:32], "big")
    if pages == 0 or head[24:28] != head[92:96]:
        return None
    return page * pages


def writable(path: Path) -> bool:
    """SQLite can write the ledger: the file (when there) and its folder (for the -wal and
    -shm files, unless both are there already) allow writing."""
    folder = path.parent
    if path.exists() and not os.access(path, os.W_OK):
        return False
    if os.access(folder, os.W_OK):
        return True
    return all(os.access(f"{path}{s}", os.W_OK) for s in ("-wal", "-shm"))


def free_bytes(folder: Path) -> int | None:
    """Bytes free to this user on the file system holding `folder` (None when unknown)."""
    try:
        got = os.statvfs(folder)
    except OSError:
        return None
    return got.f_bavail * got.f_frsize


def require_room(folder: Path, what: str) -> None:
    """Refuse (`DiskFull`) when the file system holding `folder` has less than `MIN_FREE`."""
    free = free_bytes(folder)
    if free is not None and free < MIN_FREE:
        raise _full(folder, what, free)


def _full(folder: Path, what: str, free: int | None) -> DiskFull:
    left = "no space" if not free else f"only {free // 1024} KiB"
    return DiskFull(
        f"The file system holding {what} {folder} is full ({left} left; armbench needs at "
        f"least {MIN_FREE // (1 << 20)} MiB to write). Nothing was written and nothing already "
        f"committed is lost. Free space there (`df -h {folder}` shows it), then run the command "
        "again; `armbench resume <run>` finishes a run that was under way.", path=str(folder))


def read_only_uri(path: Path, *, immutable: bool) -> str:
    """The URI that opens the ledger read-only; `immutable` when SQLite cannot make the -shm
    file beside it (a read-only folder) and there is no write-ahead log to read."""
    uri = "file:" + quote(str(path.absolute())) + "?mode=ro"
    return uri + "&immutable=1" if immutable else uri


def diagnose(path: Path, exc: BaseException, *, writing: bool) -> StorageFault:
    """The storage fault behind a sqlite3, eventsourcing or OS error met at `path`."""
    if isinstance(exc, StorageFault):
        return exc
    found = _sqlite_error(exc)
    detail = str(found or exc)
    primary = (found.sqlite_errorcode & 0xFF) if found is not None else None
    number = exc.errno if isinstance(exc, OSError) else None
    try:
        check_file(path)  # an empty, foreign or truncated file says so first
    except StorageFault as fault:
        return fault
    if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return LedgerCorrupt(
            f"The ledger {path} is damaged: SQLite says {detail!r}. Nothing was written to it. "
            f"{_recover(path)}", path=str(path))
    free = free_bytes(path.parent)
    if primary == _SQLITE_FULL or number == errno.ENOSPC or (free is not None and
                                                              free < MIN_FREE and writing):
        return _full(path.parent, "the ledger", free)
    if primary in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return LedgerBusy(
            f"The ledger {path} stayed locked by another armbench process past the lock "
            f"timeout (SQLite says {detail!r}). Nothing was written. Wait for that process to "
            "finish (or stop it), then run the command again.", path=str(path))
    if writing and (primary == _SQLITE_READONLY or number == errno.EROFS or not writable(path)):
        return _read_only(path, detail)
    return _unreadable(path, detail, writing=writing)


def _read_only(path: Path, detail: str) -> LedgerReadOnly:
    return LedgerReadOnly(
        f"The ledger {path} cannot be written ({detail}): the file or its folder "
        f"{path.parent} is read-only, and this command writes to the ledger. Nothing was "
        "written and nothing is lost. Make them writable (or remount the disk read-write) and "
        f"run it again; the commands that only read ({_READ_COMMANDS}) work as it is.",
        path=str(path))


def read_only_refusal(path: Path) -> LedgerReadOnly:
    """A writing command refused before opening a ledger it cannot write."""
    return _read_only(path, "read-only")


def _unreadable(path: Path, detail: str, *, writing: bool) -> LedgerUnreadable:
    wal = Path(f"{path}-wal")
    hint = (f" Its write-ahead log {wal} holds events not yet in the file, and SQLite cannot "
            f"open it here read-only: make {path.parent} writable once (any armbench command "
            "then folds the log into the file)."
            if not writing and wal.exists() and wal.stat().st_size > 0 else "")
    return LedgerUnreadable(
        f"The ledger {path} could not be {'written' if writing else 'read'}: SQLite says "
        f"{detail!r}.{hint} Nothing was written. Check that the file and its folder exist and "
        f"that you may read and write them (`ls -l {path}`), and that the disk under it is "
        "mounted and healthy, then run the command again.", path=str(path))


def _sqlite_error(exc: BaseException) -> sqlite3.Error | None:
    """The sqlite3 error behind an eventsourcing wrapper (its cause chain), if any."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, sqlite3.Error) and hasattr(seen, "sqlite_errorcode"):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None
