"""Files of a tree an untrusted process could write, touched from the host without following a link.

A trial's clone, private home, `/tmp` and the folder armbench hands files through are written by
the agent's code. Every read, write, chmod and delete armbench makes there afterwards goes
through this module: each path is opened one name at a time from a directory file descriptor
with `O_NOFOLLOW`, so a link planted at any level is refused (or removed as an entry), never
followed to a host file. Walks are iterative, so no depth of folders can exhaust the stack,
and `remove_tree` keeps one descriptor open whatever the depth.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["directory", "files_under", "read_file", "remove", "remove_tree", "write_file"]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_OWNER_ALL = stat.S_IRWXU


def _parts(rel: str) -> list[str]:
    """A relative path's names; refuses an absolute path, `..` and NUL."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if rel.startswith("/") or ".." in parts or "\0" in rel or not parts:
        raise ValueError(f"expected a relative path inside the folder, found {rel!r}")
    return parts


@contextmanager
def directory(root: Path, names: Sequence[str] = (), *, make: bool = False) -> Iterator[int]:
    """A descriptor of `root/names...`, every name opened with O_NOFOLLOW (`root` too); `make`
    creates a missing folder (owner only) but never replaces a link or a file (that raises)."""
    descriptor = os.open(root, _DIRECTORY)
    try:
        for name in names:
            try:
                inner = os.open(name, _DIRECTORY, dir_fd=descriptor)
            except FileNotFoundError:
                if not make:
                    raise
                os.mkdir(name, 0o700, dir_fd=descriptor)
                inner = os.open(name, _DIRECTORY, dir_fd=descriptor)
            os.close(descriptor)
            descriptor = inner
        yield descriptor
    finally:
        os.close(descriptor)


def read_file(root: Path, rel: str, limit: int) -> bytes | None:
    """The bytes of the regular file `root/rel`; None when it (or a folder on its way) is absent.

    Raises ValueError when a link is on its way, when it is not a regular file, or when it holds
    more than `limit` bytes."""
    *folders, name = _parts(rel)
    try:
        with directory(root, folders) as parent:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"it could not be opened as a regular file ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError("it is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"it is over {limit} bytes")
    return data


def write_file(root: Path, rel: str, data: bytes, mode: int, *, replace: bool) -> bool:
    """Create `root/rel` (its folders made owner-only) with O_EXCL and O_NOFOLLOW, so neither a
    link nor a hard link is ever written through. `replace` first removes whatever is at the
    path (a file, a link itself, a folder with all in it); otherwise an existing entry is left
    and False returned. A link among the folders raises OSError (ELOOP or ENOTDIR)."""
    *folders, name = _parts(rel)
    with directory(root, folders, make=True) as parent:
        if replace:
            _remove_entry(parent, name)
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                         dir_fd=parent)
        except FileExistsError:
            return False
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            os.fchmod(f.fileno(), mode)
    return True


def remove(root: Path, rel: str) -> None:
    """Remove the entry `root/rel` (a link itself, never its target); a folder with all in it."""
    *folders, name = _parts(rel)
    try:
        with directory(root, folders) as parent:
            _remove_entry(parent, name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        if exc.errno != errno.ELOOP:  # a link on the way: the entry is not in this tree
            raise


def files_under(root: Path, rel: str, *, suffix: str = "", max_depth: int = 16,
                max_files: int = 10_000) -> list[tuple[str, os.stat_result]]:
    """The regular files under `root/rel` (names ending in `suffix`), as paths relative to
    `root` with their lstat; links (to files or folders) are skipped, never followed. Walked
    iteratively, at most `max_depth` folders deep and `max_files` entries looked at."""
    found: list[tuple[str, os.stat_result]] = []
    try:
        start = _parts(rel)
    except ValueError:
        return found
    pending: list[list[str]] = [start]
    seen = 0
    while pending and seen < max_files:
        names = pending.pop()
        try:
            with directory(root, names) as folder, os.scandir(folder) as listing:
                entries = list(listing)
                for entry in entries:
                    seen += 1
                    if seen > max_files:
                        break
                    if entry.is_dir(follow_symlinks=False):
                        if len(names) - len(start) < max_depth:
                            pending.append([*names, entry.name])
                    elif entry.is_file(follow_symlinks=False) and entry.name.endswith(suffix):
                        info = os.stat(entry.name, dir_fd=folder, follow_symlinks=False)
                        if stat.S_ISREG(info.st_mode):
                            found.append(("/".join([*names, entry.name]), info))
        except OSError:
            continue  # absent, a link, or unreadable: nothing of it is read
    return found


def remove_tree(path: Path) -> None:
    """Delete `path` and everything in it, as root or as a user whose agent made folders
    read-only, never following a link: only folders, opened with O_NOFOLLOW, are ever made
    writable (`fchmod` on their own descriptor), and a link is removed as itself. Iterative,
    one descriptor open at a time whatever the depth."""
    try:
        parent = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return
    try:
        _remove_entry(parent, path.name)
    finally:
        os.close(parent)


@dataclass
class _Level:
    name: str
    ident: tuple[int, int]
    folders: list[str] | None = field(default=None)
    """The sub-folders still to remove (None: not listed yet)."""


def _remove_entry(parent: int, name: str) -> None:
    """Remove `name` in `parent`: a file or link itself, or a folder and all in it."""
    try:
        found = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(found.st_mode):
        _unlink(parent, name)
        return
    current = _enter(parent, name)
    trail = [_Level(name, _ident(current))]
    try:
        while True:
            level = trail[-1]
            if level.folders is None:
                level.folders = _clear_files(current)
            if level.folders:
                sub = level.folders.pop()
                try:
                    child = _enter(current, sub)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                        raise
                    _unlink(current, sub)  # no longer a folder: removed as itself
                    continue
                os.close(current)
                current = child
                trail.append(_Level(sub, _ident(child)))
                continue
            trail.pop()
            if not trail:
                os.rmdir(name, dir_fd=parent)
                return
            up = os.open("..", _DIRECTORY, dir_fd=current)
            os.close(current)
            current = up
            if _ident(up) != trail[-1].ident:
                raise OSError(errno.EXDEV, f"{name} was moved while it was being removed")
            os.rmdir(level.name, dir_fd=up)
    finally:
        os.close(current)


def _enter(parent: int, name: str) -> int:
    """Open the folder `name` (never a link) with all rights for its owner, making it so first
    when the agent took them away (a folder without read or search opened by path, O_PATH, and
    changed through its own /proc descriptor, which names that very inode)."""
    try:
        fd = os.open(name, _DIRECTORY, dir_fd=parent)
    except PermissionError:
        handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
        try:
            os.chmod(f"/proc/self/fd/{handle}", _OWNER_ALL)
        finally:
            os.close(handle)
        fd = os.open(name, _DIRECTORY, dir_fd=parent)
    if os.fstat(fd).st_mode & _OWNER_ALL != _OWNER_ALL:
        try:
            os.fchmod(fd, _OWNER_ALL)
        except PermissionError:
            pass  # not ours: removing its entries fails and says so
    return fd


def _clear_files(folder: int) -> list[str]:
    """Unlink every entry of `folder` that is not a folder; the names of its sub-folders."""
    folders = []
    with os.scandir(folder) as listing:
        entries = list(listing)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            folders.append(entry.name)
        else:
            _unlink(folder, entry.name)
    return folders


def _unlink(parent: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=parent)
    except FileNotFoundError:
        pass


def _ident(fd: int) -> tuple[int, int]:
    found = os.fstat(fd)
    return found.st_dev, found.st_ino
