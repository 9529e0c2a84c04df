"""An image's layers applied to a folder, safely and in one pass (issue 28).

Each entry gets the checks of `tarfile`'s `data` filter, made here without its two `realpath`s per
entry: no device files or FIFOs, no absolute or `..` names, no hard link out of the root, owners
dropped (files belong to the unpacking user), set-uid bits and group/other write cleared. On top
of it a symbolic link may point anywhere (it resolves inside the sandbox's root), but nothing is
ever written through one: every folder on an entry's way is checked with `lstat` once and then
known to be a real folder until something at or above it is removed, files are created
`O_EXCL | O_NOFOLLOW`, and hard links are made without following a link. OCI whiteouts
(`.wh.<name>`, `.wh..wh..opq`) are applied.

From an uncompressed layer a regular file's bytes are copied by the kernel straight from the image
file at their offset (`os.copy_file_range`; `os.preadv` and `os.write` through one reused buffer
where the filesystems refuse it), not through `tarfile`'s file objects, and the file is hashed
on a thread of its own (`_Hasher`) from what was written, while the next entries are applied:
the manifest of the unpacked tree needs no second pass. A file from a compressed layer is hashed
while it is written.
"""

from __future__ import annotations

import errno
import hashlib
import io
import os
import queue
import re
import stat
import struct
import tarfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Self, TypeVar

from armbench.edge.tree import remove_tree

__all__ = ["Entry", "Span", "Tree", "UnsafeEntry", "layer_tar", "members"]

_CHUNK = 1 << 20
_CREATE = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_BATCH = 32
"""Written files handed to the hasher at once."""
_PENDING = 128
"""Written files at most handed to the hasher and waiting, each holding its file open."""
_NO_KERNEL_COPY = frozenset((errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP,
                             errno.EBADF, errno.EPERM))
"""What `copy_file_range` answers where the filesystems (or the kernel) cannot copy between
these two files: the bytes then go through a buffer instead."""
_COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")
"""gzip, bzip2, xz and zstd's magic numbers: a layer that starts with none is a plain tar."""
_NORMAL = re.compile(r"(?!\.\.?(?:/|$))[^/]+(?:/(?!\.\.?(?:/|$))[^/]+)*")
"""A relative name of no empty, `.` or `..` part: `os.path.normpath` leaves it as it is."""
T = TypeVar("T")


class UnsafeEntry(Exception):
    """An entry the data filter (or the no-write-through-a-link rule) refuses."""


class Span(io.RawIOBase):
    """`size` bytes of an open file from `start`, read with `pread` (a layer inside an archive)."""

    def __init__(self, fd: int, start: int, size: int) -> None:
        super().__init__()
        self.fd, self.start, self.size, self.pos = fd, start, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        wanted = min(len(buffer), self.size - self.pos)
        if wanted <= 0:
            return 0
        got = os.preadv(self.fd, [memoryview(buffer)[:wanted]], self.start + self.pos)
        self.pos += got
        return got


class Entry(tarfile.TarInfo):
    """A layer's entry: a plain header (ustar or GNU, a file, folder or link, octal numbers, the
    checksum over unsigned bytes) read with one `struct` unpack instead of `tarfile`'s eighteen
    field calls; any other header (base-256 numbers, sparse files, long names, pax, the end of
    the archive, a bad checksum) is read by `tarfile` itself, so the result is always its own."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        return cls.plain(buf, encoding, errors) or super().frombuf(buf, encoding, errors)

    @classmethod
    def plain(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self | None:
        """The entry of a plain header, None for any other (a base-256 number is no octal
        number: its field fails to parse as one)."""
        if len(buf) != tarfile.BLOCKSIZE:
            return None
        fields = _HEADER.unpack(buf)
        if fields[7] not in _PLAIN_TYPES:
            return None
        try:
            mode, uid, gid, size, mtime, chksum, devmajor, devminor = [
                int(fields[n].split(b"\0", 1)[0].strip() or b"0", 8) for n in _NUMBERS]
        except ValueError:
            return None
        if chksum != 256 + sum(buf) - sum(buf[148:156]):
            return None
        name, linkname, uname, gname, prefix = (
            fields[n].split(b"\0", 1)[0].decode(encoding, errors) for n in (0, 8, 10, 11, 14))
        obj = cls()
        obj.name, obj.mode, obj.uid, obj.gid, obj.size, obj.mtime = name, mode, uid, gid, size, mtime
        obj.chksum, obj.type, obj.linkname, obj.uname, obj.gname = (
            chksum, fields[7], linkname, uname, gname)
        obj.devmajor, obj.devminor = devmajor, devminor
        if obj.type == tarfile.AREGTYPE and obj.name.endswith("/"):
            obj.type = tarfile.DIRTYPE  # the old V7 form of a folder
        if obj.isdir():
            obj.name = obj.name.rstrip("/")
        if prefix:  # none of these types is GNU's own
            obj.name = prefix + "/" + obj.name
        return obj


_HEADER = struct.Struct("100s8s8s8s12s12s8sc100s8s32s32s8s8s155s12x")
_NUMBERS = (1, 2, 3, 4, 5, 6, 12, 13)
"""mode, uid, gid, size, mtime, chksum, devmajor, devminor."""
_PLAIN_TYPES = frozenset((tarfile.REGTYPE, tarfile.AREGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE,
                          tarfile.LNKTYPE))


def members(tar: tarfile.TarFile, plain: Span | None) -> Iterator[tarfile.TarInfo]:
    """The layer's entries in order, as iterating `tar` gives them. From a plain layer each plain
    header is read with one `pread` where the entry before it ends (`tarfile` seeks, reads a
    byte to check the entry before is whole, reads the block through the file object and keeps
    every entry in a list); any other header (and the archive's end) is read by `tarfile` from
    there, and after a pax global header every entry is, as it applies to them."""
    if plain is None:
        yield from tar
        return
    member = tar.next()  # the first entry, which opening the tar read
    block = bytearray(tarfile.BLOCKSIZE)
    while member is not None:
        yield member
        offset = tar.offset
        while (not tar.pax_headers and offset + tarfile.BLOCKSIZE <= plain.size
               and os.preadv(plain.fd, [block], plain.start + offset) == tarfile.BLOCKSIZE
               and (member := Entry.plain(block, tar.encoding, tar.errors)) is not None):
            member.offset, member.offset_data = offset, offset + tarfile.BLOCKSIZE
            offset += tarfile.BLOCKSIZE
            if member.isreg():
                offset += -(-member.size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE
            yield member
        tar.offset = offset
        member = tar.next()


def layer_tar(span: Span) -> tuple[tarfile.TarFile, bool]:
    """The layer's tar, read with random access, and whether it is plain (its files' bytes can be
    read at `span.start + member.offset_data`)."""
    head = span.read(6)
    span.seek(0)
    plain = not head.startswith(_COMPRESSED)
    if plain:
        return tarfile.open(fileobj=span, mode="r:", tarinfo=Entry), True
    return tarfile.open(fileobj=io.BufferedReader(span, _CHUNK), mode="r:*", tarinfo=Entry), False


class _Hasher:
    """Hashes written files on a thread of its own, each read back from the file as written (its
    descriptor handed over, then closed here), while the layers go on being applied: sha256
    costs about as much as writing the bytes, and the two run on two cores. Files are handed
    over `_BATCH` at a time (a thread woken for each file costs more than the hash of a small
    one), and at most `_PENDING` more wait, so the open descriptors stay bounded whatever the
    image holds."""

    def __init__(self) -> None:
        self.digests: dict[int, str] = {}
        self._jobs: queue.SimpleQueue[list[tuple[int, int, int]] | None] = queue.SimpleQueue()
        self._batch: list[tuple[int, int, int]] = []
        self._thread: threading.Thread | None = None
        self._issued = self._handed = self._closed = 0
        self._failure: BaseException | None = None

    def add(self, fd: int, size: int) -> int:
        """Hash the `size` bytes of the file open at `fd`, and close it; the number that stands
        for its `size:sha256` until `finish`."""
        token = self._issued = self._issued + 1
        self._batch.append((token, fd, size))
        if len(self._batch) >= _BATCH:
            self._hand_over()
        return token

    def finish(self) -> dict[int, str]:
        """Wait for every file handed over; their `size:sha256` by number."""
        if self._batch:
            self._hand_over()
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join()
            self._thread = None
        if self._failure is not None:
            raise self._failure
        return self.digests

    def _hand_over(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="armbench-unpack-hash",
                                            daemon=True)
            self._thread.start()
        pause = 0.0001
        while self._handed - self._closed >= _PENDING and self._failure is None:
            time.sleep(pause)
            pause = min(pause * 2, 0.005)
        batch, self._batch = self._batch, []
        self._handed += len(batch)
        self._jobs.put(batch)

    def _work(self) -> None:
        view = memoryview(bytearray(_CHUNK))
        while (batch := self._jobs.get()) is not None:
            for token, fd, size in batch:
                try:
                    if self._failure is None:
                        self.digests[token] = f"{size}:{_read_hash(fd, size, view)}"
                except BaseException as exc:  # noqa: BLE001 - raised again by `finish`
                    self._failure = exc
                finally:
                    os.close(fd)
                    self._closed += 1


def _read_hash(fd: int, size: int, view: memoryview) -> str:
    """The sha256 of the first `size` bytes of the file open at `fd`."""
    digest, at = hashlib.sha256(), 0
    while at < size:
        got = os.preadv(fd, [view[:min(size - at, _CHUNK)]], at)
        if got == 0:
            raise EOFError(f"a written file ends at {at} of its {size} bytes")
        digest.update(view[:got])
        at += got
    return digest.hexdigest()


class Tree:
    """A folder that layers are applied to, in order: the folders known to be real folders (no
    link), and the size and sha256 of each regular file written, as the manifest has them
    (`hashes`, once `finish` has waited for the hasher)."""

    def __init__(self, dest: Path) -> None:
        self.dest = str(dest)
        self.folders: set[str] = {""}
        self.hashes: dict[str, str | int] = {}
        """`size:sha256` by path; a file the hasher has yet to read has its number there."""
        self._buffer = memoryview(bytearray(_CHUNK))
        self._hasher = _Hasher()
        self._kernel_copy = True

    def finish(self) -> dict[str, str]:
        """The size and sha256 of every regular file in the tree, by path."""
        digests = self._hasher.finish()
        return {rel: digests[h] if isinstance(h, int) else h for rel, h in self.hashes.items()}

    def close(self) -> None:
        """Stop the hasher (the tree is abandoned: a layer failed)."""
        try:
            self._hasher.finish()
        except Exception:  # noqa: BLE001 - the layer's own failure is the one reported
            pass

    def apply(self, tar: tarfile.TarFile, member: tarfile.TarInfo, plain: Span | None) -> None:
        """Apply one entry of a layer; `plain` is the layer's span when it is a plain tar."""
        rel = _relative(member.name, member.name)
        if rel == "":
            return
        parent, _, base = rel.rpartition("/")
        if base.startswith(".wh."):
            self._whiteout(member, parent, base)
            return
        if not (member.isreg() or member.isdir() or member.issym() or member.islnk()):
            raise UnsafeEntry(f"{member.name!r} is a special file")
        self._reach(parent, member.name, create=True)
        path = f"{self.dest}/{rel}"
        if member.isdir():
            self._folder(rel, path, member)
        elif member.issym():  # its target is not checked: it resolves inside the sandbox's root
            self._make(rel, lambda: os.symlink(member.linkname, path))
        elif member.islnk():
            self._hard_link(rel, path, member)
        else:
            self._file(tar, member, rel, path, plain)

    # ---- entries

    def _file(self, tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str, path: str,
              plain: Span | None) -> None:
        mode = _file_mode(member.mode)
        fd = self._make(rel, lambda: os.open(path, _CREATE, mode))
        try:
            os.fchmod(fd, mode)
            if plain is not None and not member.issparse():
                self._place(member, fd, plain)
                os.utime(fd, (member.mtime, member.mtime))
            else:
                digest = self._copy(tar, member, fd)
                os.utime(fd, (member.mtime, member.mtime))
                self.hashes[rel] = f"{member.size}:{digest}"
                return
        except BaseException:
            os.close(fd)
            raise
        self.hashes[rel] = self._hasher.add(fd, member.size)  # which closes fd

    def _place(self, member: tarfile.TarInfo, fd: int, plain: Span) -> None:
        """Copy the member's bytes from the plain layer at their offset into `fd`."""
        at, left = plain.start + member.offset_data, member.size
        while left > 0 and self._kernel_copy:
            try:
                got = os.copy_file_range(plain.fd, fd, left, at)
            except OSError as exc:
                if exc.errno not in _NO_KERNEL_COPY:
                    raise
                self._kernel_copy = False
                break
            if got == 0:  # the image ends early, or the filesystem copies nothing: the buffer
                break     # tells which
            at, left = at + got, left - got
        view = self._buffer
        while left > 0:
            got = os.preadv(plain.fd, [view[:min(left, _CHUNK)]], at)
            if got == 0:
                raise EOFError(f"{member.name} ends early")
            _write_all(fd, view[:got])
            at, left = at + got, left - got

    def _copy(self, tar: tarfile.TarFile, member: tarfile.TarInfo, fd: int) -> str:
        """Copy the member through `tarfile` (a compressed layer, a sparse file), hashing it."""
        digest, view = hashlib.sha256(), self._buffer
        source = tar.extractfile(member)
        if source is None:
            raise tarfile.ExtractError(f"{member.name} cannot be read")
        with source:
            while got := source.readinto(view):  # type: ignore[attr-defined]
                _write_all(fd, view[:got])
                digest.update(view[:got])
        return digest.hexdigest()

    def _folder(self, rel: str, path: str, member: tarfile.TarInfo) -> None:
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                self._discard(rel)
                os.mkdir(path, 0o755)
        os.chmod(path, 0o755)  # the data filter keeps no folder's mode; the owner may write
        os.utime(path, (member.mtime, member.mtime))
        self.folders.add(rel)

    def _hard_link(self, rel: str, path: str, member: tarfile.TarInfo) -> None:
        source = _relative(member.linkname, member.name, what="a hard link to")
        if source == "":
            raise UnsafeEntry(f"a hard link {member.name!r} to the root")
        folder = source.rpartition("/")[0]
        if not self._reach(folder, member.name, create=False):
            raise FileNotFoundError(f"{member.name} links to {member.linkname}, which is missing")
        origin = os.path.join(self.dest, source)
        self._make(rel, lambda: os.link(origin, path, follow_symlinks=False))
        found = os.lstat(path)
        if stat.S_ISREG(found.st_mode):
            os.chmod(path, _file_mode(member.mode))
            os.utime(path, (member.mtime, member.mtime))
        if source in self.hashes:
            self.hashes[rel] = self.hashes[source]
        else:
            self.hashes.pop(rel, None)

    def _whiteout(self, member: tarfile.TarInfo, parent: str, base: str) -> None:
        if member.issym() or member.islnk() or member.isdir():
            raise UnsafeEntry(f"a whiteout {member.name!r} that is not a file")
        if not self._reach(parent, member.name, create=False):
            return
        folder = os.path.join(self.dest, parent)
        if base == ".wh..wh..opq":
            for child in os.listdir(folder):
                self._discard(f"{parent}/{child}" if parent else child)
            return
        gone = base.removeprefix(".wh.")
        if gone in ("", ".", "..") or "/" in gone:
            raise UnsafeEntry(f"a whiteout {member.name!r} that names no entry")
        self._discard(f"{parent}/{gone}" if parent else gone)

    # ---- the tree

    def _make(self, rel: str, make: Callable[[], T]) -> T:
        """`make()`, once more after removing what was at `rel` when something was there."""
        try:
            return make()
        except FileExistsError:
            self._discard(rel)
            return make()

    def _reach(self, folder: str, name: str, *, create: bool) -> bool:
        """Whether `folder` exists as a real folder, every folder on its way checked not to be a
        link (missing ones made when `create`). Raises UnsafeEntry for a link on the way."""
        if folder in self.folders:
            return True
        at = ""
        for part in folder.split("/"):
            at = f"{at}/{part}" if at else part
            if at in self.folders:
                continue
            path = os.path.join(self.dest, at)
            try:
                found = os.lstat(path)
            except FileNotFoundError:
                if not create:
                    return False
                os.mkdir(path, 0o755)
                self.folders.add(at)
                continue
            if stat.S_ISLNK(found.st_mode):
                raise UnsafeEntry(f"a path written through a link ({name!r} via {at!r})")
            if not stat.S_ISDIR(found.st_mode):
                raise NotADirectoryError(f"{at} is not a folder, on the way to {name}")
            self.folders.add(at)
        return True

    def _discard(self, rel: str) -> None:
        """Remove whatever is at `rel`, and forget what was known at and below it."""
        path = os.path.join(self.dest, rel)
        try:
            found = os.lstat(path)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(found.st_mode):
            remove_tree(Path(path))
            below = rel + "/"
            self.folders = {f for f in self.folders if f != rel and not f.startswith(below)}
            self.hashes = {f: h for f, h in self.hashes.items() if not f.startswith(below)}
        else:
            os.unlink(path)
        self.hashes.pop(rel, None)


def _relative(name: str, entry: str, what: str = "a path") -> str:
    """`name` normalised inside the root ("" for the root itself); UnsafeEntry when it leaves."""
    if _NORMAL.fullmatch(name):
        return name  # what normpath gives back unchanged, and inside the root
    rel = os.path.normpath(name)
    if os.path.isabs(rel) or rel == ".." or rel.startswith("../"):
        raise UnsafeEntry(f"{what} {name!r} leaving the root, outside it ({entry!r})")
    return "" if rel == "." else rel


def _file_mode(mode: int | None) -> int:
    """The data filter's mode for a file: no high bits, no group/other write, executable only if
    the owner may run it, and the owner may read and write."""
    if mode is None:
        return 0o644
    mode &= 0o755
    if not mode & 0o100:
        mode &= ~0o111
    return mode | 0o600


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        data = data[os.write(fd, data):]
