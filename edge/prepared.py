"""A task's prepared tree on the host: its manifest, and the copies trials start from.

`trial: {setup: once}` keeps the tree setup left in one clean clone (ignored files included:
`node_modules/`, `.venv/`) and starts every trial of the task from a copy of it. The copy is GNU
`cp -a --reflink=auto`: a link stays a link (never followed on the host), modes and times are
kept, and on a file system that can it shares blocks copy-on-write (never a hard link: a write in
one trial's copy never reaches another's). The manifest is every entry's path, type, mode, size,
modification time and link target, read with lstat by `edge.tree.walk` (no link followed, any
depth): a prepared tree whose copy does not show the manifest it was built with is damaged.
FIFOs, sockets and devices refuse the tree (`SpecialFileInTree`): a trial's copy of one would be
a channel to the host or to another trial, not a file.

With `workflows.setup_cache: true` prepared trees outlive their run, in `cache_dir()`, one folder
per key (`host_facts()` in the key); each key's lock file (`locked`) is held exclusively while a
tree is checked, built or replaced, and shared while a trial's copy is made from it, so two runs
on one machine never copy from a tree that is being replaced. `clear_cache` is `armbench gc
--prepared`.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import importlib.metadata
import os
import platform
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from armbench.edge.config import armbench_home
from armbench.edge.errors import EdgeError
from armbench.edge.tree import remove_tree, tree_bytes, walk

__all__ = ["SpecialFileInTree", "cache_dir", "clear_cache", "copy_method", "copy_tree", "host_facts",
           "locked", "manifest"]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


class SpecialFileInTree(EdgeError):
    """Setup left a FIFO, a socket or a device in the tree it prepared."""

    code = "setup_special_file"

    def __init__(self, path: str, kind: str) -> None:
        self.path = path
        super().__init__(
            expected="only folders, regular files and symbolic links in the tree setup prepared",
            found=f"a {kind} at {path!r}",
            fix="Make setup remove it (or create it outside the clone), or use `trial: {setup: "
                "each}` so setup runs in every trial's own clone.")


def _kind(mode: int) -> str | None:
    """The name of a special file's type; None for a folder, a regular file or a link."""
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


def manifest(root: Path, *, skip: frozenset[str] = frozenset({".git"})) -> str:
    """sha256 over every entry under `root` (names at the top in `skip` left out), each as its
    path, type and permission bits, size, modification time and, for a link, its target; raises
    `SpecialFileInTree` at the first FIFO, socket or device. Nothing is followed or read but links'
    targets."""
    lines: list[bytes] = []
    fd = os.open(root, _DIRECTORY)
    try:
        for listing in walk(fd):
            if listing.path == "":
                listing.enter[:] = [n for n in listing.enter if n not in skip]
            for entry in listing.entries:
                if listing.path == "" and entry.name in skip:
                    continue
                path = listing.path + entry.name
                info = entry.stat(follow_symlinks=False)
                kind = _kind(info.st_mode)
                if kind is not None:
                    raise SpecialFileInTree(path, kind)
                size = 0 if stat.S_ISDIR(info.st_mode) else info.st_size
                line = f"{info.st_mode:o} {size} {info.st_mtime_ns} ".encode() + os.fsencode(path)
                if stat.S_ISLNK(info.st_mode):
                    line += b" -> " + os.readlink(entry.name, dir_fd=listing.fd).encode(
                        errors="surrogateescape")
                lines.append(line)
    finally:
        os.close(fd)
    digest = hashlib.sha256()
    for line in sorted(lines):
        digest.update(line + b"\0")
    return digest.hexdigest()


def copy_tree(source: Path, dest: Path) -> None:
    """Copy the folder `source` to the new path `dest` as it is: links as links, modes, times,
    sparse files sparse, copy-on-write where the file system can (`cp -a --reflink=auto`, which
    walks any depth and never follows a link in the tree)."""
    done = subprocess.run(["cp", "-a", "--no-target-directory", "--reflink=auto", "--",
                           str(source), str(dest)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        full = "No space left on device" in said[0] or "Disk quota exceeded" in said[0]
        raise OSError(errno.ENOSPC if full else errno.EIO, f"cp could not copy {source} to {dest}: {said[0]}")


def cache_dir() -> Path:
    """Where `workflows.setup_cache: true` keeps prepared trees between runs:
    `~/.armbench/cache/prepared` (hidden from every sandboxed step, as all of armbench's home)."""
    return armbench_home() / "cache" / "prepared"


def host_facts() -> tuple[str, str]:
    """What a tree kept between runs is keyed by besides its run's key: the host's architecture
    and armbench's version (`source` when run from a source tree)."""
    try:
        version = importlib.metadata.version("armbench")
    except importlib.metadata.PackageNotFoundError:
        version = "source"
    return platform.machine(), version


@contextmanager
def locked(lock: Path, *, shared: bool = False) -> Iterator[None]:
    """Hold `lock` (a file, made when missing): exclusively, or shared with other readers. Each
    call opens the file anew, so two threads of one process exclude each other as two processes
    do; the kernel lets go when the process dies."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield


def clear_cache(folder: Path) -> tuple[int, int, int]:
    """Remove every prepared tree kept in `folder` that no process holds now (and what an
    interrupted build left); the trees removed, the bytes freed, and the folders left in use."""
    removed = freed = busy = 0
    if not folder.is_dir():
        return 0, 0, 0
    for entry in sorted(folder.iterdir()):
        if entry.suffix == ".lock" or not entry.is_dir() or entry.is_symlink():
            continue
        lock = folder / f"{entry.name.lstrip('.').split('-')[0]}.lock"
        with open(lock, "a") as held:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                busy += 1
                continue
            freed += tree_bytes(entry)
            remove_tree(entry)
            removed += 0 if entry.name.startswith(".") else 1
    return removed, freed, busy  # the lock files stay: one another process opened must go on locking


_REFLINKS: dict[int, bool] = {}


def copy_method(folder: Path) -> Literal["reflink", "copy"]:
    """What `copy_tree` does in `folder`'s file system: share blocks (`reflink`: Btrfs, XFS,
    bcachefs) or copy them (`copy`: ext4, tmpfs). Tried once per file system and process, with
    `cp --reflink=always` of a one-byte file."""
    device = folder.stat().st_dev
    if device not in _REFLINKS:
        with tempfile.TemporaryDirectory(prefix=".armbench-reflink-", dir=folder) as temp:
            source = Path(temp) / "a"
            source.write_bytes(b"x")
            done = subprocess.run(["cp", "--reflink=always", "--", str(source), f"{temp}/b"],
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, check=False)
            _REFLINKS[device] = done.returncode == 0
    return "reflink" if _REFLINKS[device] else "copy"
