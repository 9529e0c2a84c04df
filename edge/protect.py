"""Put protected files back in an agent's clone without running git there and without following links."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from edge.errors import EdgeError
from edge.gitclone import FileBlob
from suites.pathspec import could_match_inside, matches_any, names_directory

__all__ = ["restore_protected", "verify_files", "write_files"]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_LINK, _EXECUTABLE = 0o120000, 0o100755


def restore_protected(clone: Path, patterns: Sequence[str], expected: Mapping[str, FileBlob]) -> list[str]:
    """Remove files and links under `patterns` that `expected` lacks, write back what differs.

    Returns the paths it removed or rewrote, sorted: what the agent had changed.
    """
    removed: list[str] = []
    with _opened(clone) as root:
        _remove_unexpected(root, "", tuple(patterns), expected, removed)
        changed = {path: expected[path] for path in _differing(root, expected)}
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


def verify_files(clone: Path, expected: Mapping[str, FileBlob]) -> list[str]:
    """The paths whose kind, bytes or executable bit differ from `expected` (links are never followed)."""
    with _opened(clone) as root:
        return sorted(_differing(root, expected))


def _differing(root: int, expected: Mapping[str, FileBlob]) -> list[str]:
    """Paths of `expected` that differ, opening each directory once (no link is ever followed)."""
    by_directory: dict[tuple[str, ...], list[tuple[str, str, FileBlob]]] = {}
    for path, blob in expected.items():
        *parents, name = _parts(path)
        by_directory.setdefault(tuple(parents), []).append((path, name, blob))
    differing = []
    for directories, files in by_directory.items():
        try:
            with _directory(root, directories, repair=False) as parent:
                differing += [path for path, name, blob in files if not _same_or_absent(parent, name, blob)]
        except OSError:
            differing += [path for path, _, _ in files]
    return differing


def _same_or_absent(parent: int, name: str, blob: FileBlob) -> bool:
    """Whether `name` holds the blob; False when it is missing or cannot be read."""
    try:
        return _same(parent, name, blob)
    except OSError:
        return False


def _remove_unexpected(
    directory: int, prefix: str, patterns: tuple[str, ...], keep: Mapping[str, FileBlob], removed: list[str]
) -> None:
    """Walk real directories only; a link to a directory is an entry like a file."""
    with os.scandir(directory) as listing:
        entries = list(listing)
    for entry in entries:
        path = prefix + entry.name
        if path == ".git":
            continue
        if not entry.is_dir(follow_symlinks=False):
            if path not in keep and (matches_any(patterns, path) or names_directory(patterns, path)):
                os.unlink(entry.name, dir_fd=directory)
                removed.append(path)
        elif could_match_inside(patterns, path):
            with _directory(directory, [entry.name], repair=False) as inside:
                _remove_unexpected(inside, path + "/", patterns, keep, removed)


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
    try:
        found = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(found.st_mode):
        shutil.rmtree(name, dir_fd=parent)
    else:
        os.unlink(name, dir_fd=parent)


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
    if any(part in ("", ".", "..") or part.lower() == ".git" or "\0" in part for part in parts):
        raise EdgeError(expected="a repo-relative file path", found=repr(path), fix="Fix the file list.")
    return parts
