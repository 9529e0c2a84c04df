"""Walking a tree an agent left: iteratively, never following a link, with few descriptors open.

A trial's clone, home and /tmp can hold any shape: folders nested thousands deep (deeper than
Python's recursion limit, and with paths longer than `PATH_MAX`, so only `dir_fd`-relative calls
reach them), names that are not UTF-8, files of any size. `walk` visits such a tree with an
explicit stack: it holds one directory open at a time and climbs back through `..`, checking
that it lands on the very directory it came from (device and inode), so a moved folder stops the
walk (`TreeMoved`) instead of taking it elsewhere. Only `read_files` reads a file's bytes, and at
most as many as it is told; sizes come from lstat.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from armbench.edge.errors import EdgeError

__all__ = ["Listing", "TreeMoved", "clear_at", "copy_read_only", "empty_at", "large_files", "lstats",
           "read_files", "remove_tree", "tree_bytes", "walk"]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_NOT_NAMES = frozenset({"", ".", ".."})
_OPEN_FOLDERS = 64
"""How many folders `lstats` keeps open at most between two calls."""


class TreeMoved(EdgeError):
    """A folder of the tree was moved or replaced while armbench walked it."""

    code = "tree_moved"

    def __init__(self, path: str) -> None:
        super().__init__(expected=f"the folder above {path!r} to stay where it was during the walk",
                         found="another folder there", fix="Stop whatever still writes the tree.")


@dataclass
class Listing:
    """One directory of the walk: an open descriptor (valid until the walk moves on), its path
    from the root (`""`, or `a/b/` with a slash), and its entries (links and files as they are)."""

    fd: int
    path: str
    entries: list[os.DirEntry[str]]
    enter: list[str] = field(default_factory=list)
    """Names of sub-directories to walk into next; the walk fills it with every real directory,
    and the caller may remove names it wants pruned (or that it removed)."""


@dataclass
class _Frame:
    device: int
    inode: int
    path: str
    pending: list[str]
    child: str = ""


def walk(root: int, *, after: Callable[[int, str], None] | None = None,
         unlock: bool = False) -> Iterator[Listing]:
    """Every directory under the directory descriptor `root` (itself first), top-down.

    The caller acts on each `Listing` before the walk goes on (unlink entries with `dir_fd=
    listing.fd`, prune `listing.enter`). `after(parent_fd, name)` is called once a
    sub-directory's whole tree has been walked, from its parent (for removing it)."""
    fd = os.dup(root)
    try:
        stack: list[_Frame] = []
        path = ""
        listing = _list(fd, path)
        yield listing
        frame = _frame(fd, path, listing.enter)
        while True:
            if frame.pending:
                name = frame.pending.pop()
                child = _enter(fd, name, unlock)
                if child is None:
                    continue  # gone, or no longer a directory: nothing under it to walk
                frame.child = name
                stack.append(frame)
                os.close(fd)
                fd, path = child, frame.path + name + "/"
                listing = _list(fd, path)
                yield listing
                frame = _frame(fd, path, listing.enter)
                continue
            if not stack:
                return
            parent = stack.pop()
            up = os.open("..", _DIRECTORY, dir_fd=fd)
            found = os.fstat(up)
            if (found.st_dev, found.st_ino) != (parent.device, parent.inode):
                os.close(up)
                raise TreeMoved(frame.path)
            os.close(fd)
            fd, frame = up, parent
            if after is not None:
                after(fd, frame.child)
    finally:
        os.close(fd)


def _enter(parent: int, name: str, unlock: bool) -> int | None:
    """The sub-directory `name` opened (never through a link), or None when it cannot be."""
    try:
        return os.open(name, _DIRECTORY, dir_fd=parent)
    except PermissionError:
        if not unlock:
            return None
    except OSError:
        return None
    try:  # an O_PATH descriptor needs no permission; chmod through it names that very inode
        handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        try:
            os.chmod(f"/proc/self/fd/{handle}", stat.S_IRWXU)
        finally:
            os.close(handle)
        return os.open(name, _DIRECTORY, dir_fd=parent)
    except OSError:
        return None


def _list(fd: int, path: str) -> Listing:
    with os.scandir(fd) as found:
        entries = list(found)
    return Listing(fd=fd, path=path, entries=entries,
                   enter=[e.name for e in entries if e.is_dir(follow_symlinks=False)])


def _frame(fd: int, path: str, pending: list[str]) -> _Frame:
    found = os.fstat(fd)
    pending.reverse()  # popped from the end: walked in listing order
    return _Frame(device=found.st_dev, inode=found.st_ino, path=path, pending=pending)


def remove_tree(path: Path) -> None:
    """Remove a folder and everything in it, however deep, without following a link in it:
    each directory is made owner-writable (on its own descriptor) before it is emptied, so one an
    agent made read-only goes too. A missing folder is nothing to do; a link is removed itself."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(found.st_mode):
        path.unlink()
        return
    with _opened_directory(path) as top:
        empty_at(top)
    with contextlib.suppress(FileNotFoundError):
        os.rmdir(path)


def empty_at(directory: int) -> None:
    """Remove everything inside the directory descriptor `directory` (not the directory itself)."""
    def rmdir(parent: int, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(name, dir_fd=parent)

    _writable(directory)
    for listing in walk(directory, after=rmdir, unlock=True):
        if listing.fd != directory:
            _writable(listing.fd)
        for entry in listing.entries:
            if not entry.is_dir(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.name, dir_fd=listing.fd)


def clear_at(parent: int, name: str) -> None:
    """Remove whatever is at `name` in `parent`: a directory with everything in it, or a file or
    link itself (nothing at `name` is nothing to do)."""
    try:
        found = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(found.st_mode):
        os.unlink(name, dir_fd=parent)
        return
    inner = os.open(name, _DIRECTORY, dir_fd=parent)
    try:
        empty_at(inner)
    finally:
        os.close(inner)
    os.rmdir(name, dir_fd=parent)


def _writable(fd: int) -> None:
    with contextlib.suppress(OSError):
        mode = os.fstat(fd).st_mode
        if mode & stat.S_IRWXU != stat.S_IRWXU:
            os.fchmod(fd, mode | stat.S_IRWXU)


@contextlib.contextmanager
def _opened_directory(path: Path) -> Iterator[int]:
    fd = os.open(path, _DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def lstats(root: Path) -> Iterator[Callable[[str], os.stat_result | None]]:
    """A function giving the lstat of a path below `root` (`a/b/c`, names as the file system
    gives them), or None where it is missing or where a folder on its way is a link or not a
    folder: no link is followed, not even on the way. Any other failure (a folder it may not
    read, too many open files) is an OSError: a caller must not take it for a missing file.
    Folders opened stay open for the next calls, at most `_OPEN_FOLDERS` of them (paths in
    order, as a walk gives them, reuse most), and are closed when the block ends."""
    opened: dict[str, int] = {}

    def folder(path: str) -> int:
        fd = opened.get(path)
        if fd is None:
            parent, _, name = path.rpartition("/")
            fd = os.open(root, _DIRECTORY) if path == "" else os.open(name, _DIRECTORY,
                                                                       dir_fd=folder(parent))
            opened[path] = fd
        return fd

    def lstat(path: str) -> os.stat_result | None:
        parent, _, name = path.rpartition("/")
        if any(part in _NOT_NAMES for part in path.split("/")):
            return None
        if len(opened) > _OPEN_FOLDERS:
            for fd in opened.values():
                os.close(fd)
            opened.clear()
        try:
            return os.stat(name, dir_fd=folder(parent), follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a link on the way (O_NOFOLLOW)
                return None
            raise
    try:
        yield lstat
    finally:
        for fd in opened.values():
            os.close(fd)


def large_files(root: Path, limit: int, *, skip: frozenset[str] = frozenset({".git"}),
                deadline: Callable[[], bool] = lambda: False,
                below: list[int] | None = None) -> tuple[list[tuple[str, int]], bool]:
    """Regular files under `root` over `limit` bytes, by their path from the root (names as the
    file system gives them: not UTF-8 ones surrogate-escaped), with their sizes; links are never
    followed and `skip` names at the top are not entered. Sizes come from lstat: no file is read.
    The second value is False when `deadline()` said to stop before the walk ended. `below`,
    when given, gets the bytes of the regular files of at most `limit` bytes added to its one
    item."""
    found: list[tuple[str, int]] = []
    total = 0
    regular = stat.S_ISREG
    with _opened_directory(root) as top:
        for listing in walk(top):
            if deadline():
                if below is not None:
                    below[0] += total
                return found, False
            if listing.path == "":
                listing.enter[:] = [n for n in listing.enter if n not in skip]
            # the walk's hot loop (one lstat a file): a try, not a context manager, per entry
            for entry in listing.entries:
                if entry.is_dir(follow_symlinks=False):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if regular(info.st_mode):
                    if info.st_size > limit:
                        found.append((listing.path + entry.name, info.st_size))
                    else:
                        total += info.st_size
    if below is not None:
        below[0] += total
    return sorted(found), True


def read_files(root: Path, below: str, suffix: str, limit: int) -> list[tuple[int, str, bytes]]:
    """The regular files named `*<suffix>` under `root/below` (every name of `below` a real
    directory, no link followed anywhere), oldest first, as (mtime in ns, path from there,
    bytes), leaving out files over `limit` bytes, and reading only the newest ones whose sizes
    add up to `limit` (what the last `limit` bytes of them all joined need): however many files
    there are, at most about `limit` bytes are read. Nothing when `below` is missing or is not a
    directory."""
    try:
        top = _open_below(root, below)
    except OSError:
        return []
    try:
        found: list[tuple[int, str, int]] = []
        for listing in walk(top):
            for entry in listing.entries:
                if not entry.name.endswith(suffix):
                    continue
                with contextlib.suppress(OSError):
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode) and info.st_size <= limit:
                        found.append((info.st_mtime_ns, listing.path + entry.name, info.st_size))
        wanted: set[str] = set()
        total = 0
        for _mtime, path, size in sorted(found, reverse=True):
            if total >= limit:
                break
            wanted.add(path)
            total += size
        read: list[tuple[int, str, bytes]] = []
        for listing in walk(top):
            for entry in listing.entries:
                if listing.path + entry.name in wanted:
                    with contextlib.suppress(OSError):
                        read.append(_read_at(listing.fd, entry.name, listing.path, limit))
    finally:
        os.close(top)
    return sorted(read)


def _open_below(root: Path, below: str) -> int:
    fd = os.open(root, _DIRECTORY)
    for name in [n for n in below.split("/") if n]:
        try:
            inner = os.open(name, _DIRECTORY, dir_fd=fd)
        finally:
            os.close(fd)
        fd = inner
    return fd


def _read_at(parent: int, name: str, path: str, limit: int) -> tuple[int, str, bytes]:
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path}{name} is not a regular file")
        chunks, left = [], limit
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return info.st_mtime_ns, path + name, b"".join(chunks)
    finally:
        os.close(fd)


def copy_read_only(source: Path, dest: Path) -> None:
    """A copy of `source` at `dest` that keeps links as links and sparse files sparse (GNU `cp
    -a`, which walks any depth), its files then made read-only (never through a link)."""
    done = subprocess.run(["cp", "-a", "--sparse=always", "--reflink=auto", "--",
                           str(source), str(dest)], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no message"]
        raise OSError(f"cp could not copy {source} to {dest}: {said[0]}")
    with _opened_directory(dest) as top:
        for listing in walk(top):
            for entry in listing.entries:
                with contextlib.suppress(OSError):
                    if entry.is_dir(follow_symlinks=False) or entry.is_symlink():
                        continue
                    mode = entry.stat(follow_symlinks=False).st_mode
                    os.chmod(entry.name, mode & ~0o222, dir_fd=listing.fd)


def tree_bytes(path: Path) -> int:
    """The bytes the files below `path` hold: each file once however many links it has, no link
    followed, folders and entries gone meanwhile not counted (what removing it frees)."""
    seen: set[tuple[int, int]] = set()
    size = 0
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            try:
                found = os.lstat(os.path.join(folder, name))
            except FileNotFoundError:
                continue
            if (found.st_dev, found.st_ino) not in seen and not stat.S_ISDIR(found.st_mode):
                seen.add((found.st_dev, found.st_ino))
                size += found.st_size
    return size
