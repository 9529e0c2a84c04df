"""Put protected files back in an agent's clone without running git there and without following links."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from armbench.edge.errors import EdgeError
from armbench.edge.gitclone import FileBlob
from armbench.edge.tree import clear_at, walk
from armbench.suites.pathspec import could_match_inside, matches_any, names_directory

__all__ = ["Stamp", "restore_protected", "stamp_files", "verify_files", "write_files"]

Stamp = tuple[int, int, int, int, int, int]
"""A file's device, inode, ctime, mtime (ns), size and mode, as lstat gives them."""

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_LINK, _EXECUTABLE = 0o120000, 0o100755


def restore_protected(clone: Path, patterns: Sequence[str], expected: Mapping[str, FileBlob],
                      stamps: Mapping[str, Stamp] | None = None) -> list[str]:
    """Remove files and links under `patterns` that `expected` lacks, write back what differs.

    A path whose lstat still equals its stamp (`stamp_files`, taken when the clone held the
    blob's bytes) is unchanged and not read; every other path is read and compared.
    Returns the paths it removed or rewrote, sorted: what the agent had changed.
    """
    removed: list[str] = []
    with _opened(clone) as root:
        _remove_unexpected(root, tuple(patterns), expected, removed)
        changed = {path: expected[path] for path in _differing(root, expected, stamps or {})}
    write_files(clone, changed)
    return sorted([*removed, *changed])


def write_files(clone: Path, files: Mapping[str, FileBlob]) -> None:
    """Write each file's bytes and mode, replacing any link, file or directory in its way."""
    with _opened(clone) as root:
        for path, blob in files.items():
            *directories, name = _parts(path)
            with _directory(root, directories, repair=True) as parent:
                _clear(parent, name)
                _create(parent, name, blob)


def stamp_files(clone: Path, paths: Iterable[str]) -> dict[str, Stamp]:
    """Stamps of the files at `paths` in `clone`, taken before anything untrusted has run in it,
    for `restore_protected` to skip the ones no one has touched since.

    A stamp holds the file's inode and ctime, which nothing without the right to set the clock
    can set back: any write, truncate, chmod, rename or link to the file moves its ctime, and a
    new file at the path has another inode or a later ctime. The kernel stamps ctime from a clock
    that ticks every few milliseconds, so a file changed in the tick it was stamped in could keep
    its ctime: a probe file made now marks the current tick, and only files whose ctime is older
    than the probe's are stamped (the rest are read at restore, as without stamps)."""
    by_directory: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for path in paths:
        *parents, name = _parts(path)
        by_directory.setdefault(tuple(parents), []).append((path, name))
    stamps: dict[str, Stamp] = {}
    with _opened(clone) as root:
        now = _tick(root)
        for directories, files in by_directory.items():
            try:
                with _directory(root, directories, repair=False) as parent:
                    for path, name in files:
                        found = os.stat(name, dir_fd=parent, follow_symlinks=False)
                        if found.st_ctime_ns < now:
                            stamps[path] = _stamp(found)
            except OSError:
                continue
    return stamps


def _tick(root: int) -> int:
    """The ctime a file made now gets on the clone's filesystem (a probe in the clone's `.git`)."""
    name = f"armbench-stamp-probe-{os.getpid()}"
    with _directory(root, [".git"], repair=False) as git:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                     dir_fd=git)
        try:
            return os.fstat(fd).st_ctime_ns
        finally:
            os.close(fd)
            os.unlink(name, dir_fd=git)


def _stamp(found: os.stat_result) -> Stamp:
    return (found.st_dev, found.st_ino, found.st_ctime_ns, found.st_mtime_ns, found.st_size,
            found.st_mode)


def verify_files(clone: Path, expected: Mapping[str, FileBlob]) -> list[str]:
    """The paths whose kind, bytes or executable bit differ from `expected` (links are never followed)."""
    with _opened(clone) as root:
        return sorted(_differing(root, expected, {}))


def _differing(root: int, expected: Mapping[str, FileBlob], stamps: Mapping[str, Stamp]) -> list[str]:
    """Paths of `expected` that differ, opening each directory once (no link is ever followed);
    a path whose lstat equals its stamp is the same without reading it."""
    by_directory: dict[tuple[str, ...], list[tuple[str, str, FileBlob]]] = {}
    for path, blob in expected.items():
        *parents, name = _parts(path)
        by_directory.setdefault(tuple(parents), []).append((path, name, blob))
    differing = []
    for directories, files in by_directory.items():
        try:
            with _directory(root, directories, repair=False) as parent:
                differing += [path for path, name, blob in files
                              if not _unchanged(parent, name, stamps.get(path))
                              and not _same_or_absent(parent, name, blob)]
        except OSError:
            differing += [path for path, _, _ in files]
    return differing


def _unchanged(parent: int, name: str, stamp: Stamp | None) -> bool:
    """Whether `name` is the very file stamped, untouched since (False without a stamp)."""
    if stamp is None:
        return False
    try:
        return _stamp(os.stat(name, dir_fd=parent, follow_symlinks=False)) == stamp
    except OSError:
        return False


def _same_or_absent(parent: int, name: str, blob: FileBlob) -> bool:
    """Whether `name` holds the blob; False when it is missing or cannot be read."""
    try:
        return _same(parent, name, blob)
    except OSError:
        return False


def _remove_unexpected(
    root: int, patterns: tuple[str, ...], keep: Mapping[str, FileBlob], removed: list[str]
) -> None:
    """Walk real directories only (iteratively: any depth); a link to a directory is an entry
    like a file."""
    for listing in walk(root):
        listing.enter[:] = [name for name in listing.enter
                            if listing.path + name != ".git"
                            and could_match_inside(patterns, listing.path + name)]
        for entry in listing.entries:
            path = listing.path + entry.name
            if path == ".git" or entry.is_dir(follow_symlinks=False):
                continue
            if path not in keep and (matches_any(patterns, path) or names_directory(patterns, path)):
                os.unlink(entry.name, dir_fd=listing.fd)
                removed.append(path)


def _same(parent: int, name: str, blob: FileBlob) -> bool:
    if blob.mode == _LINK:
        found = os.stat(name, dir_fd=parent, follow_symlinks=False)
        return stat.S_ISLNK(found.st_mode) and os.fsencode(os.readlink(name, dir_fd=parent)) == blob.data
    # O_NOFOLLOW refuses a link; fstat of what was opened decides the kind: one open, no race
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    try:
        found = os.fstat(fd)
        executable = bool(found.st_mode & stat.S_IXUSR)
        if not stat.S_ISREG(found.st_mode) or executable != (blob.mode == _EXECUTABLE):
            return False
        return found.st_size == len(blob.data) and _read_all(fd, found.st_size) == blob.data
    finally:
        os.close(fd)


def _read_all(fd: int, size: int) -> bytes:
    """A regular file's bytes, and one more read to be sure it ended where fstat said."""
    chunks, left = [], size + 1
    while left > 0:
        chunk = os.read(fd, left)
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _clear(parent: int, name: str) -> None:
    """Remove whatever is at `name`: a directory with everything in it, or a file or link itself."""
    clear_at(parent, name)


def _create(parent: int, name: str, blob: FileBlob) -> None:
    if blob.mode == _LINK:
        os.symlink(os.fsdecode(blob.data), name, dir_fd=parent)
        return
    mode = 0o755 if blob.mode == _EXECUTABLE else 0o644
    with open(
        os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=parent), "wb"
    ) as file:
        file.write(blob.data)
        os.fchmod(file.fileno(), mode)


@contextmanager
def _opened(clone: Path) -> Iterator[int]:
    descriptor = os.open(clone, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


@contextmanager
def _directory(root: int, names: Sequence[str], *, repair: bool) -> Iterator[int]:
    """Open `names` below `root`, one real directory at a time; `repair` makes links and files directories."""
    descriptor = os.dup(root)
    try:
        for name in names:
            inner = _enter(descriptor, name) if repair else os.open(name, _DIRECTORY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        yield descriptor
    finally:
        os.close(descriptor)


def _enter(parent: int, name: str) -> int:
    try:
        return os.open(name, _DIRECTORY, dir_fd=parent)
    except FileNotFoundError:
        pass
    except OSError as error:
        if error.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        os.unlink(name, dir_fd=parent)
    os.mkdir(name, 0o755, dir_fd=parent)
    return os.open(name, _DIRECTORY, dir_fd=parent)


def _parts(path: str) -> list[str]:
    """A repo-relative path's names; refuses `..`, empty names and anything inside a `.git`."""
    parts = path.split("/")
    if "" in parts or "." in parts or ".." in parts or "\0" in path or (
            ".git" in path.lower() and any(part.lower() == ".git" for part in parts)):
        raise EdgeError(expected="a repo-relative file path", found=repr(path), fix="Fix the file list.")
    return parts
