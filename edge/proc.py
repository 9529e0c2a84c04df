"""Run one step (setup, the agent tool, a check) with withheld variables, and leave nothing behind.

A step runs as `/bin/bash -c <command>` (not a login shell) in a new session with exactly the
environment it is given plus its marker token. Stdin is a file holding the given bytes (no pipe
to deadlock on); stdout and stderr go through pipes that armbench drains as the step prints: at
most `OUTPUT_CAP` bytes of stdout go to the step's stdout file (when it has one), and only the
last `TAIL_BYTES` of each are kept otherwise, so a step printing gigabytes fills neither memory nor
the host's disk (`ProcResult.stdout_bytes` says how much it printed). A timeout or a cancel sends
SIGTERM to the step's process group, then SIGKILL once the main has exited or `GRACE_S` has
passed. While the step runs, `edge.proc_sweep.remember` notes its processes every `REMEMBER_S`;
whenever the main process ends, `edge.proc_sweep.sweep` kills and reaps whatever else the step
started (see its docstring for what cannot be attributed) before `run_step` returns. The main is
reaped last, so its pid (the step's session and group id) cannot be reused while the sweep runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import secrets
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Literal

from armbench.edge.diskguard import MECHANISM as DISK_MECHANISM
from armbench.edge.limits import Limits, StepGroup, step_group
from armbench.edge.proc_sweep import TOKEN_VAR, become_subreaper, remember, sweep
from armbench.edge.usernet import Namespace, PrivateNet, private_network

__all__ = ["GRACE_S", "OUTPUT_CAP", "REMEMBER_S", "TAIL_BYTES", "WITHHELD", "Cause", "ProcResult",
           "remove_in_process", "run_step", "step_env", "writable"]

WITHHELD: tuple[str, ...] = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "GL_TOKEN",
    "CI_JOB_TOKEN",
    "SSH_AUTH_SOCK",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    # a shared PostgreSQL ledger's URL and password: a trial never reaches armbench's state
    "ARMBENCH_LEDGER_URL",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICEFILE",
)
_LOCATION_VARS = frozenset(
    {"PWD", "OLDPWD", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"}
    | {"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"}
)
TAIL_BYTES = 64 * 1024
OUTPUT_CAP = 64 * 1024 * 1024
"""The most bytes of a step's stdout kept in its stdout file; what it prints past that is read
and dropped (its last TAIL_BYTES still kept as the tail)."""
GRACE_S = 2.0
REMEMBER_S = 0.5
LIMITS_S = 0.1
"""How often a step's limits are read (its group's counters, its disk's free space): a step writing
1 GB/s gets at most 100 MB past its disk's guard, a tenth of a large disk's reserve (1 GiB)."""
_MAX_PAUSE_S = 0.05
_F_SETPIPE_SZ = 1031

Cause = Literal["ok", "exit", "signal", "timeout", "not_found", "not_executable", "cancelled", "start_failed",
                "sandbox_failed", "limit"]
_Stop = Literal["timeout", "cancelled", "limit"]
_CODE_CAUSES: dict[int, Cause] = {0: "ok", 126: "not_executable", 127: "not_found"}


@dataclass(frozen=True)
class ProcResult:
    """How one step's main process ended, and the tails of what it printed."""

    exit_code: int | None
    """bash's exit status; None when it was killed by a signal or never started."""
    signal: int | None
    """The signal that ended it: a real kill, or a shell exit status 129..192 minus 128."""
    timed_out: bool
    """Whether the timeout stopped it."""
    cancelled: bool
    """Whether the cancel event stopped it (or kept it from starting)."""
    cause: Cause
    """One word for how it ended; a stop (timeout, cancel) wins over the status it caused."""
    duration_ms: int
    """From just before the spawn to the main process's exit, on the monotonic clock."""
    stdout_tail: bytes
    """The last TAIL_BYTES of stdout."""
    stderr_tail: bytes
    """The last TAIL_BYTES of stderr (for start_failed: why)."""
    leftovers: int = 0
    """Step processes still alive after the sweep (SIGKILL pending, e.g. stuck in the kernel); 0 normally."""
    limit: str | None = None
    """The limit of armbench's own that stopped it (`pids`, `memory`, `disk`; cause `limit`)."""
    mechanism: str | None = None
    """How its limits were enforced (`cgroup2`, `cgroup1`, `rlimit`); None: no limits."""
    disk: str | None = None
    """How its disk was held (`guard`: `edge.diskguard`); None: no limits."""
    stdout_bytes: int = 0
    """How many bytes the step printed on stdout (over OUTPUT_CAP: its stdout file was cut there)."""
    stderr_bytes: int = 0
    """How many bytes it printed on stderr (only the tail is ever kept)."""
    stdout_kept: int = 0
    """How many of them went to its stdout file (0 when it had none: only the tail was kept)."""

    def cut(self) -> str | None:
        """A sentence saying what of the step's output armbench did not keep, or None."""
        over = [f"{size} bytes on {name}" for name, size in
                (("stdout", self.stdout_bytes), ("stderr", self.stderr_bytes)) if size > OUTPUT_CAP]
        if not over:
            return None
        head = f"the first {self.stdout_kept} bytes of stdout and " if self.stdout_kept else ""
        return (f"It printed {' and '.join(over)}: armbench kept {head}the last {TAIL_BYTES} "
                "of each, and dropped the rest.")


def step_env(base: Mapping[str, str], *, withhold: Sequence[str], extra: Mapping[str, str]) -> dict[str, str]:
    """Copy base without withheld names, PWD/OLDPWD and git location variables, then add extra."""
    dropped = _LOCATION_VARS.union(withhold)
    kept = {k: v for k, v in base.items() if k not in dropped and not k.startswith("GIT_CONFIG")}
    return kept | dict(extra)


def run_step(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    stdin: bytes | None = None,
    timeout_s: float | None = None,
    cancel: threading.Event | None = None,
    stdout_file: Path | None = None,
    token: str | None = None,
    sandbox: Sequence[str] = (),
    merge_stderr: bool = False,
    limits: Limits | None = None,
    net: PrivateNet | None = None,
    enter: Sequence[str] = (),
) -> ProcResult:
    """Run command with bash in a new session; kill everything it started before returning.

    `token` is the step's marker (random unless given, e.g. one a later resume can find).
    `sandbox` is a bubblewrap command line ending in `--` (`edge.sandbox.Launch.argv`): bash runs
    inside it, and a sandbox that never started its child ends as `sandbox_failed`, never as the
    command's own failure (bwrap's `--json-status-fd` reports an `exit-code` only for a child
    that ran). `merge_stderr` sends stderr where stdout goes, so what the step printed is one
    stream in the order it was printed (`stdout_tail` holds both, `stderr_tail` is empty).
    A sandboxed step runs in a group of its own with `limits` (`edge.limits`): one
    that hits a limit is stopped, cause `limit`. With `net`, the sandbox starts in a private
    network made for the step (`edge.usernet`); one that cannot be made is `sandbox_failed`.
    `enter` starts the sandbox in other namespaces (`edge.overlay.Holder.enter`: where the
    step's clone is an overlay), inside the private network's.
    """
    if cancel is not None and cancel.is_set():
        return _not_started("cancelled", b"cancelled before start")
    become_subreaper()
    token = token or secrets.token_hex(16)
    with _stdin_source(stdin) as source, _sink(stdout_file) as out, \
            tempfile.TemporaryFile() as status, tempfile.TemporaryFile() as args, _Drain(out) as drain, \
            step_group(limits if sandbox else None) as group, contextlib.ExitStack() as network:
        argv = ["/bin/bash", "-c", command]
        namespace: Namespace | None = None
        block = _pipe(network) if group is not None else None
        if sandbox:  # the sandbox's own arguments through a file: its pid 1 shows none of them
            waits = ["--block-fd", str(block[0])] if block else []  # until it is in its group
            args.write(b"".join(a.encode() + b"\0" for a in [*sandbox[1:], *waits] if a != "--"))
            args.seek(0)
            argv = [*enter, sandbox[0], "--json-status-fd", str(status.fileno()), "--args",
                    str(args.fileno()), "--", *argv]
            if net is not None:
                try:
                    namespace = network.enter_context(private_network(net))
                    argv = [*namespace.prefix, *argv]
                except OSError as exc:
                    return _not_started("sandbox_failed", f"{exc}. Install passt (Debian and Ubuntu: "
                                        "apt-get install passt) and run as root, or set trial.network: "
                                        "host in the suite".encode())
        started = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env={**env, TOKEN_VAR: token},
                stdin=source,
                stdout=drain.stdout,
                stderr=drain.stdout if merge_stderr else drain.stderr,
                start_new_session=True,
                pass_fds=(status.fileno(), args.fileno(), *(block[:1] if block else ())) if sandbox else (),
            )
        except OSError as exc:
            return _not_started("start_failed", f"could not start {argv[0]} in {cwd}: {exc}".encode())
        drain.start()
        if group is not None and block is not None:
            try:
                group.enter([proc.pid, _child_pid(status, proc)])
            except OSError as exc:  # never run a step outside its limits
                _stop_group(proc.pid, signal.SIGKILL, 0.0)
                proc.wait()
                said = drain.finish()[1].tail().decode(errors="replace").strip()[-300:]
                return _not_started("sandbox_failed", f"the step could not join its limits' group: "
                                    f"{exc}{f' ({said})' if said else ''}".encode())
            group.guard(writable(sandbox, enter))
            os.write(block[1], b"1")
        stop, ended, leftovers = _supervise(proc, token, timeout_s, cancel, sweep_step=not sandbox,
                                            group=group)
        duration_ms = int((ended - started) * 1000)
        out_stream, err_stream = drain.finish()
        result = _result(proc.returncode, stop, duration_ms, out_stream.tail(), err_stream.tail())
        if sandbox and not _sandbox_ended(status):  # the sweep is the fallback
            leftovers = sweep(token, -1)
            if namespace is not None:  # something of the step may still hold its network
                namespace.reusable = False
        if sandbox and stop is None and not _child_ran(status):
            result = replace(result, cause="sandbox_failed", exit_code=None, signal=None)
        elif sandbox and result.signal is not None:  # bwrap exits 128+N when a signal ended bash
            result = replace(result, exit_code=None)
        if group is not None:  # a limit wins (its OOM kill may have taken the sandbox's pid 1)
            result = _limited(result, group, stop)
        if out_stream.error is not None:  # its stdout file could not be written (a full disk)
            raise out_stream.error
        return replace(result, leftovers=leftovers, stdout_bytes=out_stream.size,
                       stderr_bytes=err_stream.size, stdout_kept=out_stream.kept)


class _Stream:
    """One output of a step as it is drained: the bytes kept in its file, its tail, its size."""

    def __init__(self, sink: IO[bytes] | None) -> None:
        self.sink, self.size, self.kept = sink, 0, 0
        self.error: OSError | None = None
        self._tail = bytearray()

    def take(self, chunk: bytes) -> None:
        if self.sink is not None and self.size < OUTPUT_CAP:
            try:
                self.kept += self.sink.write(chunk[:OUTPUT_CAP - self.size])
            except OSError as exc:  # a full disk: keep draining (the step never blocks), say it after
                self.sink, self.error = None, exc
        self.size += len(chunk)
        self._tail += chunk
        if len(self._tail) > 2 * TAIL_BYTES:
            del self._tail[:-TAIL_BYTES]

    def tail(self) -> bytes:
        return bytes(self._tail[-TAIL_BYTES:])


class _Drain:
    """Pipes for a step's stdout and stderr, and one thread that reads both as the step prints
    (stdout into `out` up to OUTPUT_CAP); `finish` reads what is left once the step has ended,
    without waiting for a writer that outlived it."""

    def __init__(self, out: IO[bytes] | None) -> None:
        self._out_r, self.stdout = os.pipe()
        self._err_r, self.stderr = os.pipe()
        for fd in (self._out_r, self._err_r):  # fewer, larger reads for a step that prints a lot
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
        self._streams = {self._out_r: _Stream(out), self._err_r: _Stream(None)}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)

    def __enter__(self) -> _Drain:
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()
        for fd in (self.stdout, self.stderr, self._out_r, self._err_r):
            with contextlib.suppress(OSError):
                os.close(fd)

    def start(self) -> None:
        """Close the write ends (the step holds its own) and start draining."""
        for fd in (self.stdout, self.stderr):
            os.close(fd)
        self.stdout = self.stderr = -1
        self._thread.start()

    def finish(self) -> tuple[_Stream, _Stream]:
        """Stop draining once what is there now is read; (stdout, stderr)."""
        self._done.set()
        self._thread.join()
        return self._streams[self._out_r], self._streams[self._err_r]

    def _pump(self) -> None:
        poll = select.poll()  # not select(): a descriptor past 1024 is fine
        for fd in self._streams:
            poll.register(fd, select.POLLIN)
        left = len(self._streams)
        last: float | None = None  # once the step ended: read for at most GRACE_S more
        while left:
            if last is None and self._done.is_set():
                last = time.monotonic() + GRACE_S
            ready = poll.poll(0 if last else _MAX_PAUSE_S * 1000)
            if last is not None and (not ready or time.monotonic() > last):
                return
            for fd, _event in ready:
                chunk = os.read(fd, 1 << 20)
                if chunk:
                    self._streams[fd].take(chunk)
                else:
                    poll.unregister(fd)
                    left -= 1


def _limited(result: ProcResult, group: StepGroup, stop: _Stop | None) -> ProcResult:
    """The result with its group's mechanism, and `cause: limit` naming the limit it hit when
    that ended it (not a cancel, nor a step that succeeded all the same)."""
    hit = group.hit()
    if hit is not None and stop != "cancelled" and result.cause != "ok":
        result = replace(result, cause="limit", limit=hit, timed_out=False)
    return replace(result, mechanism=group.kind, disk=DISK_MECHANISM)


def writable(sandbox: Sequence[str], enter: Sequence[str] = ()) -> list[Path]:
    """The host folders a bubblewrap command line binds read-write (`--bind SRC DEST`), as this
    process reaches them: through `/proc/<pid>/root` where `enter` starts the sandbox in another
    process's mount namespace (`nsenter -t <pid>`: an overlay's holder)."""
    found = [Path(sandbox[i + 1]) for i, arg in enumerate(sandbox[:-1]) if arg in ("--bind", "--bind-try")]
    pid = next((enter[i + 1] for i, arg in enumerate(enter[:-1]) if arg == "-t"), None)
    return found if pid is None else [Path(f"/proc/{pid}/root") / p.relative_to("/") for p in found]


def _pipe(stack: contextlib.ExitStack) -> tuple[int, int]:
    """A pipe closed with the stack: the sandbox's child waits on it (`--block-fd`)."""
    read, write = os.pipe()
    for fd in (read, write):
        stack.callback(_close, fd)
    return read, write


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _child_pid(status: IO[bytes], proc: subprocess.Popen[bytes], wait_s: float = 10.0) -> int:
    """The sandbox's child: `child-pid` in bwrap's status (read whole, while bwrap still writes
    it), a child of the sandbox's own process. OSError when bwrap ended first or never said."""
    deadline = time.monotonic() + wait_s
    pause = 0.0002
    while True:  # read at 0 without moving the offset bwrap writes at (seek(0) would: it shares it)
        found = re.search(rb'"child-pid": *(\d+)\D', os.pread(status.fileno(), 4096, 0))
        if found is not None:
            child = int(found.group(1))
            if _parent_of(child) != proc.pid:
                raise OSError(f"bwrap's child {child} is not its child")
            return child
        if proc.poll() is not None or time.monotonic() >= deadline:
            raise OSError("the sandbox never reported its child")
        time.sleep(pause)
        pause = min(pause * 2, 0.005)


def _parent_of(pid: int) -> int | None:
    """A process's parent, from `/proc/<pid>/stat` (its fields after the name in parentheses)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[1])


def _sandbox_ended(status: IO[bytes], wait_s: float = 5.0) -> bool:
    """Wait for the sandbox's pid 1 (`child-pid` in bwrap's status) to exit, and reap it.

    When the pid 1 of a PID namespace exits, the kernel has killed every other process in it, so
    nothing the step started is left: True. bwrap exits before its pid 1 does and hands it to us,
    the subreaper (unreaped, it would stay a zombie until armbench exits). False when that cannot
    be seen (no pid 1 reported, or it did not end in time): then the caller sweeps by marker.
    """
    status.seek(0)
    found = re.search(rb'"child-pid": *(\d+)', status.read(4096))
    if found is None:
        return False
    pid = int(found.group(1))
    try:
        with _exit_watch(pid) as watch:
            if watch is None or not select.select([watch], [], [], wait_s)[0]:
                return False
    except ProcessLookupError:
        return False
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    return True


def _child_ran(status: IO[bytes]) -> bool:
    """Whether bwrap's status file says the child ran and exited (`{"exit-code": N}`); a sandbox
    that failed to set up, or could not exec bash, writes only its `child-pid`."""
    status.seek(0)
    return b'"exit-code"' in status.read(4096)


def _supervise(
    proc: subprocess.Popen[bytes], token: str, timeout_s: float | None, cancel: threading.Event | None,
    *, sweep_step: bool = True, group: StepGroup | None = None,
) -> tuple[_Stop | None, float, int]:
    """Wait for the main process (stopping it on timeout or cancel), sweep the step (unless a PID
    namespace ends it instead), then reap it."""
    known: dict[int, int] = {}
    leftovers = 0
    try:
        stop = _await(proc.pid, timeout_s, cancel, known, group.hit if group is not None else None)
    except BaseException:
        _stop_group(proc.pid, signal.SIGKILL, 0.0)
        raise
    finally:
        ended = time.monotonic()
        try:
            if sweep_step:
                leftovers = sweep(token, proc.pid, known)
        finally:
            proc.wait()  # only now: until reaped, the main's pid cannot name another session
    return stop, ended, leftovers


@contextlib.contextmanager
def _stdin_source(data: bytes | None) -> Iterator[IO[bytes] | int]:
    """Stdin as a file holding data (read to its end, then EOF), or /dev/null."""
    if data is None:
        yield subprocess.DEVNULL
        return
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        yield f


@contextlib.contextmanager
def _sink(path: Path | None) -> Iterator[IO[bytes] | None]:
    """The file stdout is kept in (up to OUTPUT_CAP bytes): the caller's, or none (only its tail)."""
    if path is None:
        yield None
        return
    with path.open("wb") as f:
        yield f


def _exited(pid: int) -> bool:
    """Whether our child has exited, without reaping it (its pid keeps naming its session)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _await(
    pid: int, timeout_s: float | None, cancel: threading.Event | None, known: dict[int, int],
    hit: Callable[[], str | None] | None = None,
) -> _Stop | None:
    """Wait for the main process, remembering its processes; on timeout or cancel stop its group.

    The wait wakes the moment the main exits (a pidfd polled with select), not at the next tick
    of a backoff; a timeout, a cancel and the next remembering are looked at every _MAX_PAUSE_S,
    the step's limits (`hit`) every LIMITS_S.
    """
    with _exit_watch(pid) as watch:
        return _await_watched(pid, timeout_s, cancel, known, watch, hit)


@contextlib.contextmanager
def _exit_watch(pid: int) -> Iterator[int | None]:
    """A pidfd that becomes readable when pid exits, or None where the kernel has none."""
    try:
        fd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _await_watched(pid: int, timeout_s: float | None, cancel: threading.Event | None,
                   known: dict[int, int], watch: int | None,
                   hit: Callable[[], str | None] | None = None) -> _Stop | None:
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    pause = 0.001
    look = limits = time.monotonic() + REMEMBER_S
    while not _exited(pid):
        limited = False
        if time.monotonic() >= look:
            remember(pid, known)
            look = time.monotonic() + REMEMBER_S
        if time.monotonic() >= limits:
            limited = hit is not None and hit() is not None
            limits = time.monotonic() + LIMITS_S
        stop: _Stop | None = "cancelled" if cancel is not None and cancel.is_set() else None
        if stop is None and limited:
            stop = "limit"
        if stop is None and deadline is not None and time.monotonic() >= deadline:
            stop = "timeout"
        if stop is not None:
            _stop_group(pid, signal.SIGTERM, GRACE_S)
            return stop
        if watch is not None:
            select.select([watch], [], [], _MAX_PAUSE_S)
        elif cancel is not None:
            cancel.wait(pause)
        else:
            time.sleep(pause)
        pause = min(pause * 2, _MAX_PAUSE_S)
    return None


def _stop_group(pid: int, sig: int, grace_s: float) -> None:
    """Signal the main's group, give the main grace_s to exit, SIGKILL the group, await the main."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)
        os.killpg(pid, signal.SIGCONT)  # a stopped process acts on SIGTERM only once continued
    deadline = time.monotonic() + grace_s
    while not _exited(pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    while not _exited(pid):
        time.sleep(0.01)


def _result(code: int, stop: _Stop | None, duration_ms: int, out: bytes, err: bytes) -> ProcResult:
    """Map bash's return code (and any stop) to a ProcResult."""
    exit_code, sig = (None, -code) if code < 0 else (code, code - 128 if 129 <= code <= 192 else None)
    cause: Cause = stop or ("signal" if sig is not None else _CODE_CAUSES.get(code, "exit"))
    return ProcResult(
        exit_code=exit_code,
        signal=sig,
        timed_out=stop == "timeout",
        cancelled=stop == "cancelled",
        cause=cause,
        duration_ms=duration_ms,
        stdout_tail=out,
        stderr_tail=err,
    )


def _not_started(cause: Cause, message: bytes) -> ProcResult:
    """A result for a step whose process never ran."""
    return ProcResult(
        exit_code=None,
        signal=None,
        timed_out=False,
        cancelled=cause == "cancelled",
        cause=cause,
        duration_ms=0,
        stdout_tail=b"",
        stderr_tail=message,
    )


def remove_in_process(*paths: Path) -> None:
    """`rm -rf` in its own process: it holds no lock of ours, where a Python walk of a clone's
    thousands of files holds the interpreter's. What it could not delete is left for the caller."""
    with contextlib.suppress(OSError):
        subprocess.run(["rm", "-rf", "--", *map(str, paths)], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
