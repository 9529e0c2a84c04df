"""The change a trial's tool made, as the check grades it: read from the tool's clone, written
onto a tree the tool never touched.

A trial's check does not run in the clone the tool worked in. It runs in a new tree made from
what the trial started from (the starting commit, and what setup made there), onto which goes
the tool's change, and only that (`read_change`, then `apply_change`):

- every path tracked at the starting commit whose content, kind or mode the tool changed, or
  that it removed;
- every untracked file git's status shows (the tool's own `.gitignore` read as git reads it:
  a file hidden by it is left out, which only loses the tool its own work), that the starting
  tree's ignore rules, as setup left them, do not ignore (`ignored_by`: read in the new tree
  before anything is written, so a rule the tool added or removed never decides);
- never a path setup made, changed or removed (`settled`): setup's work is the new tree's own.

So a line the tool wrote into setup's venv, a planted `__pycache__` or any other ignored file
never reaches the check, and the trial's diff, read over the same paths, is the change graded.
Files are copied as git would keep them: a regular file's bytes with its executable bit, a
link as a link; anything else (a FIFO, a socket, a nested repository, a file over
`GRADED_FILE_LIMIT`, a file the disk has no room for above its reserve, as a tool stopped by its
`disk` limit may leave) is left out and named.

No git data of the clone is used: as for the diff (`edge.gitclone.work_diff`), git reads a
throwaway repository whose objects borrow the trusted commit source, with the index armbench
kept when it made the clone, no config, no attributes file of the member's and no hooks.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from armbench.edge import nofollow
from armbench.edge.diskguard import reserve
from armbench.edge.errors import EdgeError
from armbench.edge.gitclone import git_env, ignored_in, inside, settled_changes
from armbench.edge.tree import clear_at

__all__ = ["Change", "ChangeUnreadable", "apply_change", "ignored_by", "read_change", "read_upper"]

READ_TIMEOUT_S = 120.0
"""The most seconds git's status of a trial's clone may take (every file the tool touched is
hashed once); past it the change cannot be read, and the check does not run."""
GRADED_FILE_LIMIT = 256 * 1024 * 1024
"""A file of the change over this many bytes is not written onto the check's tree (a 20 GiB
sparse file would be written whole); it is named in `left_out`, as is anything git would not
keep."""
_STATUS_BUDGET = 256 * 1024 * 1024
"""The most bytes of status output read (about two million paths): past it, unreadable."""


class ChangeUnreadable(EdgeError):
    """git could not say what the tool changed in a trial's clone."""

    code = "change_unreadable"

    def __init__(self, clone: Path, found: str) -> None:
        super().__init__(expected=f"git's status of the trial's clone {clone}", found=found,
                         fix="Look at what the trial's tool left in its clone (a tree too large "
                             "to read in time, most often); its check did not run.")


@dataclass(frozen=True)
class Change:
    """What a trial's tool changed, by path as the file system names it (relative to the tree)."""

    written: tuple[str, ...] = ()
    """Paths whose content the check gets from the tool's clone: changed, or added and not
    ignored by the starting tree's rules."""
    removed: tuple[str, ...] = ()
    """Tracked paths the tool removed."""
    added: frozenset[str] = frozenset()
    """The written paths the starting commit lacks (untracked): only they are asked whether the
    starting tree's rules ignore them; a tracked path is graded whatever the rules say."""
    left_out: tuple[str, ...] = field(default=())
    """Untracked paths git showed that are not graded: ignored by the starting tree's rules, a
    nested repository, or not a file or a link."""

    oversized: tuple[str, ...] = ()
    """The files of `left_out` over `GRADED_FILE_LIMIT`: the trial's diff names them (as it
    names every file over its own limit), though the check did not get them."""

    @property
    def paths(self) -> frozenset[str]:
        """Every graded path (written or removed)."""
        return frozenset((*self.written, *self.removed))

    @property
    def shown(self) -> frozenset[str]:
        """The paths the trial's diff reads: the graded ones, and the oversized ones it names."""
        return self.paths | frozenset(self.oversized)


def read_change(clone: Path, base: str, *, source: Path, index: Path | None,
                settled: Collection[str] = (), copied: bool = False,
                timeout_s: float = READ_TIMEOUT_S) -> Change:
    """The tool's change in `clone` from `base` (its starting commit), before the starting
    tree's ignore rules are applied (`ignored_by`): what git's status shows against the index
    armbench kept when it made the clone (`index`; without one, the index of `base`, which hashes
    every file), setup's paths (`settled`) left out. `copied`: the tree is a copy (`cp -a`) of
    the one the index was made in, which keeps each file's mtime and size but not its inode or
    ctime, so only those are compared (for a tree armbench made, never a tool's clone: there a
    file rewritten with its old mtime and size would go unseen). Raises ChangeUnreadable."""
    if index is not None and not copied:  # in process, one walk of libgit2 (`settled_changes`)
        walked = settled_changes(clone, source=source, index=index)
        if walked is not None:
            return _from_walk(walked, frozenset(settled))
    with _throwaway(source, base) as gitdir:
        index_file = gitdir / "index"
        steps: list[list[str]] = []
        if index is not None and index.exists():
            shutil.copyfile(index, index_file)
        else:
            steps.append(["read-tree", base])
        excludes = gitdir / "excludes"
        excludes.write_bytes(b"".join(_ignore_rule(p) for p in settled))
        quick = ["-c", "core.checkStat=minimal", "-c", "core.trustctime=false"] if copied else []
        steps.append([*quick, "-c", f"core.excludesFile={excludes}",
                      "-c", "status.showUntrackedFiles=all",
                      "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                      "--ignore-submodules=all"])
        out = b""
        deadline = time.monotonic() + timeout_s
        for args in steps:
            out = _git(clone, gitdir, index_file, args, deadline)
    return _parsed(out, frozenset(settled))


def read_upper(upper: Path, clone: Path, tree: Path, base_paths: frozenset[str], *,
               settled: Collection[str] = ()) -> Change:
    """The tool's change in an overlay clone whose upper layer holds the tool's work alone (its
    lower layers are `tree`'s: no setup ran in the clone), read from that layer instead of a walk
    of the whole merged tree: every file, link or whiteout there is a path the tool wrote or
    removed; a folder the overlay marks opaque or redirected (`*.overlay.opaque`,
    `*.overlay.redirect`: recreated, or renamed from elsewhere) has its whole content, as the
    clone and `tree` have it, as candidates. Each candidate is graded when `base_paths` (the
    starting commit's tracked paths) has it; an untracked one is graded unless `tree`'s rules
    ignore it (`ignored_by`, as for `read_change`); setup's paths never. What a candidate is now
    is read from the merged `clone`, never from the layer."""
    candidates: set[str] = set()
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = list(os.scandir(upper / rel if rel else upper))
        except OSError:
            continue
        for entry in entries:
            path = f"{rel}{entry.name}"
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:  # a whiteout: removed
                candidates.add(path)
                candidates.update(_files_below(tree, path))
            elif stat.S_ISDIR(info.st_mode):
                if _replaced(entry.path):
                    candidates.update(_files_below(clone, path) | _files_below(tree, path))
                else:
                    stack.append(path + "/")
            else:
                candidates.add(path)
    made = frozenset(settled)
    written: list[str] = []
    removed: list[str] = []
    for path in sorted(candidates - made):
        if ".git" in path.split("/"):
            continue  # the clone's git data, or a repository of the tool's own: never the change
        if os.path.lexists(clone / path):
            if not (clone / path).is_dir() or (clone / path).is_symlink():
                written.append(path)
        elif path in base_paths:
            removed.append(path)
    return Change(written=tuple(written), removed=tuple(removed),
                  added=frozenset(p for p in written if p not in base_paths))


def _replaced(folder: str) -> bool:
    """Whether the overlay marks an upper folder as hiding the lower ones' (opaque) or as one
    renamed from elsewhere (redirect), under either kind of holder's attribute names."""
    try:
        names = os.listxattr(folder, follow_symlinks=False)
    except OSError:
        return True  # not readable: take the whole folder, never too little
    return any(n.endswith(("overlay.opaque", "overlay.redirect")) for n in names)


def _files_below(root: Path, rel: str) -> set[str]:
    """The files and links below `root/rel` (a folder; nothing for anything else), as paths
    from `root`, no link followed."""
    found: set[str] = set()
    stack = [rel]
    while stack:
        at = stack.pop()
        try:
            entries = list(os.scandir(root / at))
        except OSError:
            continue
        for entry in entries:
            path = f"{at}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                if entry.name != ".git":
                    stack.append(path)
            else:
                found.add(path)
    return found


def _from_walk(walked: Mapping[str, tuple[object, bool]], settled: frozenset[str]) -> Change:
    """libgit2's walk of the clone against the kept index: a path with no stamp is gone."""
    written = sorted(p for p, (stamp, _) in walked.items() if stamp is not None and p not in settled)
    removed = sorted(p for p, (stamp, _) in walked.items() if stamp is None and p not in settled)
    return Change(written=tuple(written), removed=tuple(removed),
                  added=frozenset(p for p in written if not walked[p][1]))


def _parsed(out: bytes, settled: frozenset[str]) -> Change:
    """Porcelain v1 status, against HEAD (the starting commit) through the kept index: a path
    the work tree lacks that the index or HEAD has is removed; one whose work tree differs from
    the index, or whose index differs from HEAD, is written; an untracked one is added."""
    written: set[str] = set()
    added: set[str] = set()
    removed: set[str] = set()
    left: list[str] = []
    for entry in out.split(b"\0"):
        if len(entry) < 4:
            continue
        staged, worked, path = entry[0:1], entry[1:2], os.fsdecode(entry[3:])
        if path.rstrip("/") in settled:
            continue
        if entry[:2] == b"??":
            if path.endswith("/"):  # a folder git shows whole: a nested repository
                left.append(path.rstrip("/"))
            else:
                written.add(path)
                added.add(path)
        elif worked == b"D" or (staged == b"D" and worked == b" "):
            removed.add(path)
        elif worked in (b"M", b"T") or staged in (b"M", b"T", b"A"):
            written.add(path)
    return Change(written=tuple(sorted(written)), removed=tuple(sorted(removed - written)),
                  left_out=tuple(left), added=frozenset(added))


def ignored_by(tree: Path, change: Change, *, timeout_s: float = READ_TIMEOUT_S) -> Change:
    """`change` with the added paths that `tree`'s ignore rules ignore (its `.gitignore` files,
    read where armbench made the tree, before the change is written) moved to `left_out`. A
    tracked path is never ignored: only paths the starting commit lacks are asked about."""
    asked = sorted(change.added)
    if not asked:
        return change
    found = ignored_in(tree, asked)  # in process, where libgit2 reaches the tree
    if found is not None:
        return _moved(change, found)
    with _throwaway(None, None) as gitdir:
        index_file = gitdir / "index"
        done = _git(tree, gitdir, index_file, ["-c", f"core.excludesFile={os.devnull}",
                                               "check-ignore", "--no-index", "-z", "--stdin"],
                    time.monotonic() + timeout_s,
                    stdin=b"\0".join(os.fsencode(p) for p in asked) + b"\0", codes=(0, 1))
    return _moved(change, frozenset(os.fsdecode(p) for p in done.split(b"\0") if p))


def _moved(change: Change, ignored: frozenset[str]) -> Change:
    ignored = ignored & change.added
    return Change(written=tuple(p for p in change.written if p not in ignored),
                  removed=change.removed, added=change.added - ignored,
                  left_out=(*change.left_out, *(p for p in change.written if p in ignored)))


def apply_change(change: Change, clone: Path, tree: Path) -> Change:
    """Write `change` from the tool's `clone` onto `tree` (made by armbench, never seen by the
    tool): removals first, then each written path as the clone has it, whatever `tree` had on
    its way replaced. Nothing is followed: a link in the clone is copied as a link, a link on a
    path's way in either tree is never gone through. Returns the change as written (a path
    that turned out to be neither a file nor a link, over `GRADED_FILE_LIMIT`, or gone, moved
    to `left_out`)."""
    for path in change.removed:
        _remove(tree, path)
    written: list[str] = []
    left = list(change.left_out)
    oversized: list[str] = []
    info = os.statvfs(tree)
    room = [info.f_bavail * info.f_frsize - reserve(info.f_blocks * info.f_frsize)]
    for path in sorted(change.written):
        copied = _copy(clone, tree, path, room)
        if copied is True:
            written.append(path)
        else:
            left.append(path)
            if copied == "oversized":
                oversized.append(path)
    return Change(written=tuple(written), removed=change.removed, left_out=tuple(left),
                  added=change.added & frozenset(written), oversized=tuple(oversized))


def _copy(clone: Path, tree: Path, path: str, room: list[int]) -> bool | Literal["oversized"]:
    """Copy one path; `room` holds the bytes the disk may still take, less the file's."""
    *folders, name = _parts(path)
    try:
        with nofollow.directory(clone, folders) as source:
            info = os.stat(name, dir_fd=source, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(name, dir_fd=source)
                with nofollow.directory(tree, folders, make=True, replace=True, mode=0o755) as dest:
                    clear_at(dest, name)
                    os.symlink(target, name, dir_fd=dest)
                return True
            if not stat.S_ISREG(info.st_mode) or info.st_size > min(GRADED_FILE_LIMIT, room[0]):
                _remove(tree, path)  # a FIFO, a socket, a device, a huge file: not graded
                return "oversized" if stat.S_ISREG(info.st_mode) else False
            room[0] -= info.st_size
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=source)
        with os.fdopen(fd, "rb") as read, \
                nofollow.directory(tree, folders, make=True, replace=True, mode=0o755) as dest:
            clear_at(dest, name)
            out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                          dir_fd=dest)
            with os.fdopen(out, "wb") as write:
                shutil.copyfileobj(read, write, 1 << 20)
                os.fchmod(write.fileno(), 0o755 if info.st_mode & 0o100 else 0o644)
        return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a link on the way in the clone
            return False
        raise


def _remove(tree: Path, path: str) -> None:
    *folders, name = _parts(path)
    try:
        with nofollow.directory(tree, folders) as parent:
            clear_at(parent, name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise


def _parts(rel: str) -> list[str]:
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in rel:
        raise ValueError(f"expected a relative path inside the tree, found {rel!r}")
    return parts


@contextmanager
def _throwaway(source: Path | None, base: str | None) -> Iterator[Path]:
    """An empty repository whose HEAD is `base` and whose objects borrow `source`'s."""
    scratch = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="armbench-change-", dir=scratch) as tmp:
        gitdir = Path(tmp) / "git"
        (gitdir / "objects" / "info").mkdir(parents=True)
        (gitdir / "refs" / "heads").mkdir(parents=True)
        (gitdir / "HEAD").write_text("ref: refs/heads/armbench-change\n")
        if source is not None:
            (gitdir / "objects" / "info" / "alternates").write_text(
                f"{(source / 'objects').resolve()}\n")
        if base is not None:
            (gitdir / "refs" / "heads" / "armbench-change").write_text(f"{base}\n")
        yield gitdir


_SPECIAL = (b"\\", b"*", b"?", b"[", b"]", b"!", b"#", b" ")


def _ignore_rule(path: str) -> bytes:
    """A gitignore line matching `path` from the top and nothing else."""
    raw = os.fsencode(path)
    for char in _SPECIAL:
        raw = raw.replace(char, b"\\" + char)
    return b"/" + raw + b"\n"


def _git(tree: Path, gitdir: Path, index_file: Path, args: list[str], deadline: float, *,
         stdin: bytes | None = None, codes: tuple[int, ...] = (0,)) -> bytes:
    """Run git over `tree` (reached inside an overlay's namespace where it is one) with the
    throwaway `gitdir` and `index_file`, no hooks, no fsmonitor, no attributes file or config of
    the member's; its stdout. ChangeUnreadable when it fails, overruns or says too much."""
    prefix, start, named = inside(tree)
    env = {**git_env(), "GIT_DIR": str(gitdir), "GIT_WORK_TREE": str(named),
           "GIT_INDEX_FILE": str(index_file)}
    argv = [*prefix, "git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
            "-c", f"core.attributesFile={os.devnull}", "-c", "core.untrackedCache=false",
            "-c", "core.quotePath=false", *args]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            done = subprocess.run(argv, cwd=start, env=env, input=stdin,
                                  stdin=None if stdin is not None else subprocess.DEVNULL,
                                  stdout=out, stderr=err,
                                  timeout=max(0.1, deadline - time.monotonic()), check=False)
        except OSError as exc:  # the tree is gone
            raise ChangeUnreadable(tree, f"no tree to read ({exc.strerror})") from None
        except subprocess.TimeoutExpired:
            verb = next((a for a in args if not a.startswith("-") and "=" not in a), "")
            raise ChangeUnreadable(tree, f"git {verb} still running after its time "
                                         "limit") from None
        err.seek(0)
        if done.returncode not in codes:
            said = err.read(600).decode(errors="replace").strip()
            raise ChangeUnreadable(tree, f"git exited {done.returncode}: {said}")
        if out.tell() > _STATUS_BUDGET:
            raise ChangeUnreadable(tree, f"over {_STATUS_BUDGET} bytes of status")
        out.seek(0)
        return out.read()
