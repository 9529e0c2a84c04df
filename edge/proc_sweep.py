"""Find every process a step started, freeze it, kill it and reap it.

A step's main process leads a new session whose id is its pid. The step's other processes are
found by that session, by a marker variable `ARMBENCH_STEP_TOKEN=<random>` in
`/proc/<pid>/environ` (it survives `setsid`, `nohup` and double forks), by descent from a process
already found, by membership of a session whose leader is already found, and by identity
(pid and start time) for anything `remember` saw while the step ran. A sweep stops everything it
finds until the set stops growing (a stopped process cannot fork), then kills it all with
SIGKILL. armbench is a child subreaper, so orphans of a step re-parent to armbench, not init,
and the sweep reaps the step's zombies; it never waits on any other child.

The limit: a process that clears its environment, leaves the step's session and is orphaned
between two `remember` scans (or after the last one) carries nothing that ties it to its step;
without cgroups it cannot be attributed. Neither can work handed to a daemon (`at`,
`systemd-run`), and a step running as armbench's user can signal armbench itself. The sandbox
the run lives in (a CI runner, a container) is the real boundary.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
import time
from dataclasses import dataclass

__all__ = ["ROUNDS", "TOKEN_VAR", "become_subreaper", "is_subreaper", "remember", "sweep"]

TOKEN_VAR = "ARMBENCH_STEP_TOKEN"
ROUNDS = 20
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_DEAD = ("Z", "X")
_lock = threading.Lock()
_subreaper_pid = 0


@dataclass(frozen=True)
class _Proc:
    """The fields of `/proc/<pid>/stat` the sweep needs; `(pid, start)` names one process."""

    pid: int
    state: str
    ppid: int
    session: int
    start: int


def become_subreaper() -> bool:
    """Make this process a child subreaper (once per process); return whether it is one."""
    global _subreaper_pid
    with _lock:
        if _subreaper_pid != os.getpid():
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0:
                _subreaper_pid = os.getpid()
        return _subreaper_pid == os.getpid()


def is_subreaper() -> bool:
    """Ask the kernel whether this process is a child subreaper."""
    flag = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    return flag.value == 1


def remember(session: int, known: dict[int, int]) -> None:
    """Note in known every process now tied to the running step by session or descent."""
    _step_procs(None, session, known)


def sweep(token: str, session: int, known: dict[int, int] | None = None) -> int:
    """Stop, kill and reap every process of the step but its main; return how many still live."""
    marker = f"{TOKEN_VAR}={token}".encode()
    known = {} if known is None else known
    stopped: set[tuple[int, int]] = set()
    for _ in range(ROUNDS):
        procs = _step_procs(marker, session, known)
        if not procs:
            return 0
        fresh = [p for p in procs.values() if p.state not in _DEAD and (p.pid, p.start) not in stopped]
        if not fresh:
            break
        for p in fresh:
            _send(p, signal.SIGSTOP)
            stopped.add((p.pid, p.start))
    pause = 0.001
    for _ in range(ROUNDS):
        if not _kill_and_reap(_step_procs(marker, session, known)):
            return 0
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return sum(p.state not in _DEAD for p in _step_procs(marker, session, known).values())


def _kill_and_reap(procs: dict[int, _Proc]) -> int:
    """SIGKILL the live, reap our zombies; return how many are still pending."""
    pending = 0
    for p in procs.values():
        if p.state not in _DEAD:
            _send(p, signal.SIGKILL)
            pending += 1
        elif p.ppid == os.getpid():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(p.pid, os.WNOHANG)
        elif p.ppid in procs:
            pending += 1  # a zombie waiting for its dying parent to hand it to us
    return pending


def _step_procs(marker: bytes | None, session: int, known: dict[int, int]) -> dict[int, _Proc]:
    """Every process of the step now but its main, zombies included; remembers them in known.

    A session is made only by its leader, and no process can join a session it was not born in,
    so when a session's leader is found all its members (zombies too, whose environment reads
    empty) descend from the step. A session led by anything else (a daemon that was handed the
    marker, armbench's own) never grows the set. armbench and the main (pid == session, left for
    its caller to reap, which pins that pid until then) are never part of it; the main's children
    are.
    """
    excluded = (os.getpid(), session)
    procs = {p.pid: p for p in map(_stat, _pids()) if p is not None and p.pid not in excluded}
    found = {
        pid: p
        for pid, p in procs.items()
        if p.session == session or p.ppid == session or known.get(pid) == p.start or _carries(pid, marker)
    }
    while grown := {
        pid: p for pid, p in procs.items() if pid not in found and (p.ppid in found or p.session in found)
    }:
        found.update(grown)
    known.update((pid, p.start) for pid, p in found.items())
    return found


def _pids() -> list[int]:
    """Every process id visible in /proc."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _read(path: str) -> bytes:
    """The whole content of a /proc file (plain os calls: a scan reads hundreds of them)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _stat(pid: int) -> _Proc | None:
    """Read one process's stat line, or None when it is gone."""
    try:
        raw = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    f = raw[raw.rindex(b")") + 2 :].split()
    return _Proc(pid, f[0].decode(), int(f[1]), int(f[3]), int(f[19]))


def _carries(pid: int, marker: bytes | None) -> bool:
    """Whether the process's initial environment holds the marker entry."""
    if marker is None:
        return False
    try:
        return marker in _read(f"/proc/{pid}/environ").split(b"\0")
    except OSError:
        return False


def _send(p: _Proc, sig: int) -> None:
    """Signal exactly the process scanned as p (a pidfd pins it), tolerating its exit."""
    try:
        fd: int | None = os.pidfd_open(p.pid)
    except ProcessLookupError:
        return
    except OSError:
        fd = None  # no pidfd (old kernel, seccomp): the start-time check below narrows the race
    try:
        now = _stat(p.pid)
        if now is None or now.start != p.start:
            return
        if fd is None:
            os.kill(p.pid, sig)
        else:
            signal.pidfd_send_signal(fd, sig)
    except (ProcessLookupError, PermissionError):
        pass
    finally:
        if fd is not None:
            os.close(fd)
