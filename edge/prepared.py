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
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

from edge.errors import EdgeError
from edge.tree import walk

__all__ = ["SpecialFileInTree", "copy_method", "copy_tree", "manifest"]

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
        raise OSError(f"cp could not copy {source} to {dest}: {said[0]}")


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
