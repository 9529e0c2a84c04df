"""A trial's clone as an overlay: the task's pristine tree as the read-only lower layer, the
trial's own empty upper layer on top, so preparing a trial writes no file of the tree.

Debian 12's bubblewrap (0.8) has no `--overlay`, so armbench mounts the overlays itself, in a
mount namespace of their own: the `Holder`, a small Python process that calls `unshare` itself
and then mounts and unmounts overlays on request, keeping the capabilities it has there because
it never calls exec. It is one of two kinds (`Mode`), tried in this order:

- `host`, where armbench runs as root: a mount namespace alone (`CLONE_NEWNS`, every mount a
  slave of the host's, so nothing it mounts is seen outside it). The overlay writes its
  `trusted.*` attributes and is mounted with `redirect_dir=on`, so a folder of the lower layer
  renames as in any clone (`git mv` of a folder, a program's own `rename`).
- `user`, for anyone else (Linux 5.11 or later): a user namespace too (`CLONE_NEWUSER |
  CLONE_NEWNS`), its own uid and gid mapped to themselves (so files keep their owner, and
  bubblewrap started inside makes its own user namespace as it does on the host). An
  unprivileged overlay may not write `trusted.*` attributes, so it is mounted with `userxattr`
  (without it, removing a folder of the lower layer fails with EIO), and the kernel refuses
  `userxattr` with `redirect_dir`: renaming a folder of the lower layer fails with EXDEV, which
  `mv` survives by copying and `git mv` of a folder does not.

A new holder probes its kind (`_probe`: a throwaway overlay, a lower folder renamed), and
`renames_folders` says what it found: trials use overlays by default only where it is True
(`benchmark.trials.workspace.overlays_for`).

The merged tree is seen only inside that mount namespace:

- armbench's own code on the host reads and writes it at `/proc/<holder>/root/<merged>`
  (`Overlay.host`, the path a trial's clone has in the log), which leads into the holder's mount
  namespace. Python's file calls work there; git and libgit2 do not (they resolve a work tree's
  path, and `/proc/<pid>/root` resolves to the host's `/`, where the mount point is empty), so
  `edge.gitclone.inside` runs git inside the namespace (`nsenter ... --wd=`);
- a sandboxed step starts inside it (`entered`: `nsenter -t <holder> -m`, and `-U
  --preserve-credentials` for a `user` holder, before bubblewrap, `edge.sandbox.Launch.enter`),
  and bubblewrap binds the merged path as it binds a clone; nothing else of its command line
  changes. A step never sees the layers' folders, and it runs with every capability dropped, so
  it cannot write the `trusted.*` attributes a `host` overlay follows.

The layers live on disk (`layers_of`: `<work>/layers/<key>`, beside the clone's mount point and
its room), the lower layer untouched: the kernel writes only to the upper one (a change of a
lower file is a copy-up, a deletion a whiteout, a character device 0:0). When the holder ends
(its stdin closes, as when armbench exits or is killed) every overlay it held is gone with its
mount namespace; the layers stay, and `reach` mounts them again in a later process (a resumed
run, `armbench workflow launch` after a one-shot `workflow next`). `release` unmounts a finished
clone and removes its layers.

FUSE (`fuse-overlayfs`) was the other candidate: its merged tree would be seen by every host
process, but `/dev/fuse` is root's only on many machines and containers, every read of a trial's
tests would cross a user-space daemon, and it is one more package to install (Debian's
`fuse-overlayfs`).

Where no overlay can be mounted (no user namespaces, a kernel before 5.11 without `userxattr`,
an upper file system without user extended attributes, a path an overlay option cannot spell),
`available()` is False or `mount` raises, and the clone is made as without overlays: checked out
from git (`setup: each`) or copied, reflinked where the file system can
(`edge.prepared.copy_method`), else plain; the record says which.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import contextlib
import ctypes
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

from armbench.edge.tree import remove_tree

__all__ = ["Entered", "Holder", "Joined", "Mode", "Overlay", "available", "clone_over", "current",
           "entered", "holder", "joined", "layers_of", "mount", "reach", "release", "renames_folders"]

T = TypeVar("T")
_CLONE_FS, _CLONE_NEWNS = 0x00000200, 0x00020000
_JOINED_THREADS = 4
"""Threads of this process that join a `host` holder's mount namespace (`Joined`): one per lane
of a run's usual four."""

Mode = Literal["host", "user"]
"""Where the holder mounts: `host`, a mount namespace in the member's own user namespace (as
root: the overlay keeps `trusted.*` attributes and renames any folder); `user`, a mount
namespace in a user namespace it makes (anyone, Linux 5.11 or later: `userxattr`, a lower
folder cannot be renamed)."""

_HOLDER = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def say(text):
    sys.stdout.write(text + "\n"); sys.stdout.flush()
def failed(what):
    return "err " + what + ": " + os.strerror(ctypes.get_errno())
uid, gid = os.getuid(), os.getgid()
if sys.argv[1] == "host":
    # A mount namespace alone, in the member's own user namespace (armbench runs with
    # CAP_SYS_ADMIN there): every mount below the root a slave, so the host's later mounts still
    # reach us and ours never reach the host. The overlay writes `trusted.*` attributes, so it
    # can redirect a renamed folder.
    if libc.unshare(0x00020000) != 0:
        say(failed("unshare")); sys.exit(1)
    if libc.mount(b"none", b"/", None, 0x4000 | 0x80000, None) != 0:
        say(failed("slave")); sys.exit(1)
    extra = "redirect_dir=on"
else:
    if libc.unshare(0x10000000 | 0x00020000) != 0:
        say(failed("unshare")); sys.exit(1)
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                           ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    except OSError as exc:
        say(f"err maps: {exc}"); sys.exit(1)
    extra = "userxattr"
say("ready")
for line in sys.stdin:
    ask = json.loads(line)
    if ask[0] == "mount":
        lower, upper, work, merged = ask[1:]
        options = f"lowerdir={':'.join(lower)},upperdir={upper},workdir={work},{extra}"
        done = libc.mount(b"overlay", os.fsencode(merged), b"overlay", 0, os.fsencode(options))
    else:
        done = libc.umount2(os.fsencode(ask[1]), 2)
    say("ok" if done == 0 else failed(ask[0]))
"""
_UNSPELLABLE = (",", ":", "\\", "\n", "=")
"""Characters a path in an overlay's options cannot hold unescaped."""


class Holder:
    """This process's mount namespace for overlays (`host`: in the member's own user namespace,
    where armbench may mount as it is; `user`: in a user namespace of its own), kept by a process
    of its own that mounts and unmounts on request (one request at a time)."""

    def __init__(self, mode: Mode = "user") -> None:
        self.mode: Mode = mode
        self.renames_folders = False
        """Whether a folder of the lower layer can be renamed in its overlays (`probe`)."""
        self._joined: Joined | None = None
        self._unjoinable = False
        self._proc = subprocess.Popen(
            [sys.executable, "-S", "-E", "-c", _HOLDER, mode], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd="/")
        self._lock = threading.Lock()
        said = self._answer()
        if said != "ready":
            self.close()
            raise OSError(f"no namespace for overlays: {said}")
        self.pid = self._proc.pid

    def _answer(self) -> str:
        assert self._proc.stdout is not None
        return self._proc.stdout.readline().strip() or "the holder ended"

    def _ask(self, request: list[object]) -> None:
        assert self._proc.stdin is not None
        with self._lock:
            try:
                self._proc.stdin.write(json.dumps(request) + "\n")
                self._proc.stdin.flush()
            except OSError as exc:
                raise OSError(f"the overlay holder has ended: {exc}") from None
            said = self._answer()
        if said != "ok":
            raise OSError(said.removeprefix("err "))

    def mount(self, lower: Sequence[Path], upper: Path, work: Path, merged: Path) -> None:
        """Mount the overlay at `merged` (a folder), `lower` read-only (the first on top)."""
        paths = [*lower, upper, work, merged]
        for path in paths:
            if not path.is_absolute() or any(c in str(path) for c in _UNSPELLABLE):
                raise OSError(f"an overlay cannot name the path {str(path)!r}")
        self._ask(["mount", [str(p) for p in lower], str(upper), str(work), str(merged)])

    def unmount(self, merged: Path) -> None:
        """Detach the overlay at `merged`."""
        self._ask(["umount", str(merged)])

    def seen(self, path: Path) -> Path:
        """`path` as armbench's own code on the host reaches it: through the holder's root."""
        return Path(f"/proc/{self.pid}/root") / path.relative_to("/")

    def enter(self) -> list[str]:
        """The command line prefix that starts a process in the holder's namespaces, with its
        own uid and gid (mapped to themselves there)."""
        found = entered(self.seen(Path("/")))
        assert found is not None
        return list(found.enter)

    def alive(self) -> bool:
        return self._proc.poll() is None

    def joined(self) -> Joined | None:
        """Threads of this process that joined this holder's mount namespace (`Joined`), started
        when first asked for; None for a `user` holder (joining its user namespace needs a
        process of one thread) or where joining failed."""
        with self._lock:
            if self._joined is None and not self._unjoinable and self.mode == "host":
                pool = concurrent.futures.ThreadPoolExecutor(
                    _JOINED_THREADS, thread_name_prefix="armbench-overlay",
                    initializer=_join, initargs=(self.pid,))
                try:
                    pool.submit(lambda: None).result()
                except (OSError, concurrent.futures.BrokenExecutor):
                    pool.shutdown(wait=True)
                    self._unjoinable = True
                else:
                    self._joined = Joined(pool=pool, pid=self.pid)
            return self._joined

    def close(self) -> None:
        """End the holder: every overlay it held is unmounted with its namespace (once this
        process's joined threads, which keep it, have ended too)."""
        with self._lock:
            if self._joined is not None:
                self._joined.pool.shutdown(wait=True)
                self._joined = None
        with contextlib.suppress(OSError):
            if self._proc.stdin is not None:
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()


def _join(pid: int) -> None:
    """Move the calling thread (alone: its file system attributes unshared first) into process
    `pid`'s mount namespace; needs CAP_SYS_ADMIN and CAP_SYS_CHROOT (root)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if libc.unshare(_CLONE_FS) != 0 or libc.setns(fd, _CLONE_NEWNS) != 0:
            number = ctypes.get_errno()
            raise OSError(number, f"joining the overlay holder's mount namespace: {os.strerror(number)}")
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Joined:
    """Threads of this process inside a `host` holder's mount namespace: code run there (`run`)
    reaches a merged tree by its own path, as libgit2 and a process started from there need,
    with no `nsenter` in between."""

    pool: concurrent.futures.ThreadPoolExecutor
    pid: int

    def run(self, path: Path, call: Callable[[Path], T]) -> T:
        """`call(path as the namespace names it)`, on one of the joined threads."""
        found = _ROOT.match(str(path))
        inner = Path(found.group(2) or "/") if found and int(found.group(1)) == self.pid else path
        return self.pool.submit(call, inner).result()


def joined(path: Path) -> Joined | None:
    """Where `path` leads into this process's own `host` holder's mount namespace, threads that
    joined it (`Joined`); None for any other path, a `user` holder's, or another process's."""
    found = current()
    into = entered(path)
    if found is None or into is None or into.pid != found.pid:
        return None
    return found.joined()


_ROOT = re.compile(r"^/proc/([1-9][0-9]*)/root(/.*)?$")


@dataclass(frozen=True)
class Entered:
    """A host path that leads into another process's mount namespace, as a process started
    inside that namespace names it."""

    enter: tuple[str, ...]
    """The command line prefix that starts a process there (`Holder.enter`)."""
    pid: int

    def inner(self, path: Path) -> Path:
        """`path` (under the same `/proc/<pid>/root`) as seen inside; other paths as they are."""
        found = _ROOT.match(str(path))
        return Path(found.group(2) or "/") if found and int(found.group(1)) == self.pid else path


def entered(path: Path) -> Entered | None:
    """Where `path` is `/proc/<pid>/root/...` (an overlay's merged tree as `Overlay.host` gives
    it, in this process or another of the member's), how to start a process inside `pid`'s
    mount namespace, and its user namespace where that is not this process's own; None for any
    other path."""
    found = _ROOT.match(str(path))
    if found is None:
        return None
    pid = int(found.group(1))
    nsenter = shutil.which("nsenter") or "nsenter"
    if _same_user_namespace(pid):
        return Entered(enter=(nsenter, "-t", str(pid), "-m", "--"), pid=pid)
    return Entered(enter=(nsenter, "-t", str(pid), "-U", "-m", "--preserve-credentials", "--"),
                   pid=pid)


def _same_user_namespace(pid: int) -> bool:
    """Whether process `pid` is in this process's user namespace (nsenter cannot enter the one
    it is in); False when it cannot be told (then entering it is tried)."""
    try:
        theirs, ours = os.stat(f"/proc/{pid}/ns/user"), os.stat("/proc/self/ns/user")
    except OSError:
        return False
    return (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino)


_holder: Holder | None = None
_holder_lock = threading.Lock()


def current() -> Holder | None:
    """This process's holder, if it started one and it still runs."""
    return _holder if _holder is not None and _holder.alive() else None


def holder() -> Holder:
    """This process's holder, started when first needed (again if it ended): in the member's
    own user namespace where this process may mount there and a folder of an overlay's lower
    layer renames, else in a user namespace of its own (`Mode`)."""
    global _holder
    with _holder_lock:
        if _holder is None or not _holder.alive():
            _holder = _start()
            atexit.register(_holder.close)
        return _holder


def _start() -> Holder:
    """A new holder, its overlays probed (`_probe`): `host` first when this process is root."""
    if os.geteuid() == 0:
        with contextlib.suppress(OSError):
            made = Holder("host")
            try:
                made.renames_folders = _probe(made)
            except OSError:
                made.close()
            else:
                if made.renames_folders:
                    return made
                made.close()
    made = Holder("user")
    with contextlib.suppress(OSError):  # none can be mounted: `available` tells
        made.renames_folders = _probe(made)
    return made


def _probe(found: Holder) -> bool:
    """Mount a throwaway overlay in `found` and rename a folder of its lower layer: whether that
    worked (False for the kernel's EXDEV). OSError when no overlay can be mounted there."""
    with tempfile.TemporaryDirectory(prefix="armbench-overlay-probe-") as temp:
        root = Path(temp).resolve()
        (root / "lower" / "folder").mkdir(parents=True)
        (root / "lower" / "folder" / "probe").write_bytes(b"")
        for name in ("upper", "work", "merged"):
            (root / name).mkdir()
        found.mount([root / "lower"], root / "upper", root / "work", root / "merged")
        try:
            merged = found.seen(root / "merged")
            if not (merged / "folder" / "probe").exists():
                raise OSError("an overlay mounted but shows nothing of its lower layer")
            try:
                os.rename(merged / "folder", merged / "renamed")
            except OSError:
                return False
            return (merged / "renamed" / "probe").exists()
        finally:
            found.unmount(root / "merged")
            _remove(root / "upper")


@dataclass(frozen=True)
class Overlay:
    """One trial's overlay: where its layers are, and the holder it is mounted in."""

    lower: tuple[Path, ...]
    upper: Path
    work: Path
    merged: Path
    """The mount point, as the holder's namespace (and a step started in it) names it."""
    holder: Holder

    @property
    def host(self) -> Path:
        """The merged tree as armbench's code on the host reaches it."""
        return self.holder.seen(self.merged)

    def unmount(self) -> None:
        self.holder.unmount(self.merged)


def mount(lower: Sequence[Path], layers: Path, merged: Path) -> Overlay:
    """A new overlay over `lower` (read-only, the first on top) at the new empty folder
    `merged`, its upper and work folders made empty in `layers` (which must not exist yet). An
    `OSError` says why none could be mounted; nothing is left mounted then."""
    upper, work = layers / "upper", layers / "work"
    layers.mkdir(parents=True)
    upper.mkdir()
    work.mkdir()
    merged.mkdir(parents=True, exist_ok=True)
    found = holder()
    found.mount([p.resolve() for p in lower], upper.resolve(), work.resolve(), merged.resolve())
    return Overlay(lower=tuple(lower), upper=upper, work=work, merged=merged.resolve(), holder=found)


@functools.cache
def available() -> bool:
    """Whether this process can mount an overlay (tried once, on a throwaway tree)."""
    try:
        with tempfile.TemporaryDirectory(prefix="armbench-overlay-probe-") as temp:
            root = Path(temp)
            (root / "lower").mkdir()
            (root / "lower" / "probe").write_bytes(b"")
            made = mount([root / "lower"], root / "layers", root / "merged")
            try:
                seen = (made.host / "probe").exists()
            finally:
                made.unmount()
                _remove(root / "layers")
            return seen
    except OSError:
        return False


def renames_folders() -> bool:
    """Whether this process's overlays behave as a copy would when a folder of the lower layer
    is renamed (a `host` holder, `Mode`); False where none can be mounted."""
    return available() and holder().renames_folders


def layers_of(merged: Path) -> Path:
    """The folder of a clone's upper and work layers: `<work>/layers/<key>` for the clone
    `<work>/clones/<key>` (beside its room, `edge.sandbox.Room.of`)."""
    return merged.parent.parent / "layers" / merged.name


def clone_over(lower: Sequence[Path], merged: Path) -> Path:
    """A trial's clone at the new empty folder `merged`: an overlay over `lower` (the first on
    top), its layers in `layers_of(merged)` with the lower folders named in `lower` there (so a
    later process can mount it again: `reach`). Returns the merged tree as armbench's code
    reaches it (`Overlay.host`). OSError when it could not be mounted (nothing is left then)."""
    layers = layers_of(merged)
    try:
        made = mount(lower, layers, merged)
    except OSError:
        _remove(layers)
        raise
    (layers / "lower").write_text("\n".join(str(p.resolve()) for p in lower) + "\n")
    return made.host


def release(path: Path) -> Path:
    """Unmount the clone at `path` where this process's holder holds it, and remove its layers;
    returns the path the mount point has on the host (to delete with the trial's folders). Any
    other path is returned as it is."""
    into = entered(path)
    if into is None:
        return path
    inner = into.inner(path)
    found = current()
    if found is not None and found.pid == into.pid:
        with contextlib.suppress(OSError):  # not mounted (any more)
            found.unmount(inner)
    _remove(layers_of(inner))
    return inner


def reach(path: Path) -> Path:
    """A clone's path as this process reaches it: the same path while the overlay it names is
    mounted there, else its layers mounted again in this process's holder (a run resumed in a
    new process); any other path as it is. OSError when its layers cannot be mounted."""
    into = entered(path)
    if into is None:
        return path
    inner = into.inner(path)
    with contextlib.suppress(OSError):
        if path.stat().st_dev != inner.stat().st_dev:  # the overlay is there: its own device
            return path
    layers = layers_of(inner)
    lower = [Path(line) for line in (layers / "lower").read_text().splitlines() if line]
    found = holder()
    found.mount(lower, layers / "upper", layers / "work", inner)
    return found.seen(inner)


def _remove(folder: Path) -> None:
    """Remove a clone's layers (the upper layer's whiteouts are character devices: unlinked)."""
    if folder.exists():
        remove_tree(folder)
