"""A disk quota per sandboxed step: the free-space guard.

A step writes to the host's disk only through the folders its sandbox binds read-write (the
clone, or its overlay's upper layer behind the merged tree; the trial's home, `/tmp` and io
folder). Control groups bound memory and processes, not disk, so a step that fills the disk
would make every other lane's trial fail. The guard stops it first, in two ways:

- **Its quota.** Whenever the free space of a filesystem the step writes to has dropped by more
  than its quota since the step began, the guard measures what the step wrote (`written`): the
  blocks of every file in its folders changed since it began, and of every deleted file its
  processes still hold open. More than the quota stops the step. Blocks, not sizes: a sparse
  file of 20 GiB that holds a few blocks is a few blocks (so no `RLIMIT_FSIZE`, which would end
  its writer).
- **The reserve.** When free space falls below the filesystem's reserve (`reserve`: 5% of it,
  between 64 MiB and 1 GiB), the step of this armbench that wrote the most since it began is
  stopped, whichever lane's step noticed: the filler, not its neighbour. A step that wrote less
  than half the reserve is never the filler: when something else filled the disk, armbench's own
  writes find it full, as they would without the guard (`disk_full`).

Either stop is the step's limit `disk`. The open descriptors are read from the step's control
group; under rlimits alone (no group) there is no list of the step's processes, and a deleted
file held open is not counted. The free space is read each time the step's limits are
(`statvfs`, a few microseconds); the step's files are walked only when a drop calls for it, and
then at most once per `QUOTA_SLICE` of further drop or per `_LOOK_AGAIN_S`.

This is the weakest of the mechanisms the spec names (a project quota, a loop filesystem of a
fixed size), and the one every machine has: a write between two readings can overshoot the
quota by what the disk writes in `edge.proc.LIMITS_S`, and the record says `guard`.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

__all__ = ["DiskGuard", "MECHANISM", "reserve", "written"]

MECHANISM = "guard"
"""The name the record gives this mechanism."""
QUOTA_SLICE = 4
"""After a measurement under the quota, the next waits for another quota / QUOTA_SLICE of drop."""
_LOOK_AGAIN_S = 2.0
SETTLE_S = 15.0
"""After a reserve stop, how long the filesystem is given to get the stopped step's files back
(its trial ends and its clone is discarded) before another step may be stopped for it; only a
quarter of the reserve left cuts that short."""
_SETTLING: dict[int, float] = {}
_MIN_RESERVE, _MAX_RESERVE = 64 * 1024**2, 1024**3
_ACTIVE: set[DiskGuard] = set()
_LOCK = threading.Lock()


def reserve(total: int) -> int:
    """The free space below which a filesystem of `total` bytes stops its largest writer: 5% of it,
    at least 64 MiB (an eighth of a filesystem smaller than 512 MiB) and at most 1 GiB."""
    return min(_MAX_RESERVE, max(total // 20, min(_MIN_RESERVE, total // 8)))


def written(folders: Iterable[Path], since_ns: int, pids: Iterable[int] = ()) -> int:
    """Bytes on disk of the files in `folders` whose status changed at or after `since_ns`
    (wall clock), not following links nor crossing into other mounts, plus the deleted files
    `pids` hold open."""
    total, seen = 0, set()
    for folder in folders:
        try:
            top = os.lstat(folder)
        except OSError:
            continue
        stack = [str(folder)]
        while stack:
            with contextlib.suppress(OSError), os.scandir(stack.pop()) as entries:
                for entry in entries:
                    with contextlib.suppress(OSError):
                        info = entry.stat(follow_symlinks=False)
                        if stat.S_ISDIR(info.st_mode):
                            if info.st_dev == top.st_dev:
                                stack.append(entry.path)
                        elif info.st_ctime_ns >= since_ns and (info.st_dev, info.st_ino) not in seen:
                            seen.add((info.st_dev, info.st_ino))
                            total += info.st_blocks * 512
    return total + _held_deleted(pids, seen)


def _held_deleted(pids: Iterable[int], seen: set[tuple[int, int]]) -> int:
    """Bytes of the regular files these processes hold open that no longer have a name."""
    total = 0
    for pid in pids:
        fds = Path(f"/proc/{pid}/fd")
        with contextlib.suppress(OSError):
            for fd in fds.iterdir():
                with contextlib.suppress(OSError):
                    if not os.readlink(fd).endswith(" (deleted)"):
                        continue
                    info = os.stat(fd)
                    if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
                        seen.add((info.st_dev, info.st_ino))
                        total += info.st_blocks * 512
    return total


class DiskGuard:
    """One step's guard: made as the step starts, asked `hit()` at each reading of its limits."""

    def __init__(self, folders: Sequence[Path], quota: int,
                 pids: Callable[[], Iterable[int]] = tuple) -> None:
        self.folders = [f for f in folders if f.is_dir()]
        self.quota, self._pids = quota, pids
        self.since_ns = time.time_ns()
        self.stopped = False
        self._free0: dict[int, tuple[Path, int]] = {}
        for folder in self.folders:
            with contextlib.suppress(OSError):
                dev = os.stat(folder).st_dev
                if dev not in self._free0:
                    self._free0[dev] = (folder, _free(folder)[0])
        self._next_drop = quota
        self._next_look = 0.0

    def watch(self) -> DiskGuard:
        """Join the process's guards (the reserve stops the largest writer among them)."""
        with _LOCK:
            _ACTIVE.add(self)
        return self

    def release(self) -> None:
        """Leave them: the step is over."""
        with _LOCK:
            _ACTIVE.discard(self)

    def written(self) -> int:
        """What the step has written since it began (`written`)."""
        return written(self.folders, self.since_ns, self._pids())

    def hit(self) -> bool:
        """Whether the step is to be stopped for its disk: over its quota, or the largest writer
        on a filesystem below its reserve."""
        if self.stopped:
            return True
        for dev, (folder, free0) in self._free0.items():
            try:
                free, total = _free(folder)
            except OSError:
                continue
            kept = reserve(total)
            if free < kept:
                _stop_largest(dev, kept, urgent=free < kept // 4)
                if self.stopped:
                    return True
            drop = free0 - free
            if drop > self._next_drop and time.monotonic() >= self._next_look:
                if self.written() > self.quota:
                    self.stopped = True
                    return True
                self._next_drop = drop + self.quota // QUOTA_SLICE
                self._next_look = time.monotonic() + _LOOK_AGAIN_S
        return False


def _free(folder: Path) -> tuple[int, int]:
    """Bytes free to an unprivileged writer, and the filesystem's size."""
    info = os.statvfs(folder)
    return info.f_bavail * info.f_frsize, info.f_blocks * info.f_frsize


def _stop_largest(dev: int, reserve_of: int, *, urgent: bool) -> None:
    """Mark the step that wrote the most to this filesystem since it began (more than half its
    reserve) to be stopped, unless one already is or was stopped less than SETTLE_S ago (`urgent`:
    even so)."""
    with _LOCK:
        guards = [g for g in _ACTIVE if dev in g._free0]
        if any(g.stopped for g in guards) or (not urgent and time.monotonic() < _SETTLING.get(dev, 0.0)):
            return
        sizes = [(g.written(), id(g), g) for g in guards]
        if sizes:
            size, _, largest = max(sizes, key=lambda s: s[:2])
            if size > reserve_of // 2:
                largest.stopped = True
                _SETTLING[dev] = time.monotonic() + SETTLE_S
