"""What armbench asks of a CLI once per process: its version, and any warm-up before a first launch."""

from __future__ import annotations

import os
import re
import shlex
import tempfile
import threading
from pathlib import Path

from armbench.edge.proc import WITHHELD, ProcResult, run_step, step_env

__all__ = ["run_once", "tool_version"]

_VERSION = re.compile(r"\d+\.\d+\.\d+[0-9A-Za-z.+-]*")
_once: dict[tuple[str, tuple[str, ...]], ProcResult] = {}
_once_locks: dict[tuple[str, tuple[str, ...]], threading.Lock] = {}
_guard = threading.Lock()


def run_once(executable: str, *args: str) -> ProcResult:
    """Run `<executable> <args>` once per process, outside any clone; later calls get that result."""
    key = (executable, args)
    with _guard:
        lock = _once_locks.setdefault(key, threading.Lock())
    with lock:
        if key not in _once:
            _once[key] = run_step(shlex.join([executable, *args]), cwd=Path(tempfile.gettempdir()),
                                  env=step_env(os.environ, withhold=WITHHELD, extra={}), timeout_s=60)
        return _once[key]


def tool_version(executable: str) -> str | None:
    """The version `<cli> --version` prints, asked once per process and executable."""
    proc = run_once(executable, "--version")
    found = _VERSION.search(proc.stdout_tail.decode(errors="replace"))
    return found.group(0) if found and proc.cause == "ok" else None
