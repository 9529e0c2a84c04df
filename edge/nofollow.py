"""Single files in a tree an untrusted process could write, touched from the host without
following a link: the prompt and usage files in a tool step's io folder, its login files in the
trial's home.

Each path is opened one name at a time from a directory file descriptor with `O_NOFOLLOW`, so a
link planted at any level is refused (or removed as an entry), never followed to a host file; a
file is created with `O_EXCL`, so neither a link nor a hard link is written through. Walks and
whole trees are `edge.tree`'s.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from armbench.edge import tree

__all__ = ["directory", "read_file", "remove", "write_file"]

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _parts(rel: str) -> list[str]:
    """A relative path's names; refuses an absolute path, `..` and NUL."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if rel.startswith("/") or ".." in parts or "\0" in rel or not parts:
        raise ValueError(f"expected a relative path inside the folder, found {rel!r}")
    return parts


@contextmanager
def directory(root: Path, names: Sequence[str] = (), *, make: bool = False, replace: bool = False,
              mode: int = 0o700) -> Iterator[int]:
    """A descriptor of `root/names...`, every name opened with O_NOFOLLOW (`root` too); `make`
    creates a missing folder (`mode`, owner only by default) but never replaces a link or a file
    (that raises), unless `replace`: then whatever is on the way is removed first and a folder
    made in its place, as git's checkout of a path would (the tree a check's change is written to)."""
    descriptor = os.open(root, _DIRECTORY)
    try:
        for name in names:
            try:
                inner = os.open(name, _DIRECTORY, dir_fd=descriptor)
            except OSError as exc:
                in_the_way = replace and exc.errno in (errno.ENOTDIR, errno.ELOOP)
                if not make or not (exc.errno == errno.ENOENT or in_the_way):
                    raise
                if in_the_way:
                    tree.clear_at(descriptor, name)
                os.mkdir(name, mode, dir_fd=descriptor)
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


def _remove_entry(parent: int, name: str) -> None:
    """Remove `name` in `parent`: a file or link itself, or a folder and all in it (`edge.tree`,
    iterative, no link followed)."""
    tree.clear_at(parent, name)
