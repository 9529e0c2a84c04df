"""What a driver that died left running: each leased tool's marker, so `resume` can stop it.

A tool runs in its own session, so killing a driver (kill -9) does not kill its tool. Before
launching, the runner writes the step's marker (the `ARMBENCH_STEP_TOKEN` every process of the
step carries) to `<work>/<run>/procs/<lease>`; when the lease lapses, the host kills whatever
still carries it, then removes the clone.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from armbench.benchmark.trials.workfolder import work_root
from armbench.edge.proc_sweep import sweep

__all__ = ["kill_left", "mark", "unmark"]


def _file(run: str, lease: str) -> Path:
    return work_root(run) / "procs" / lease


def mark(run: str, lease: str) -> str:
    """A fresh marker for the lease's step, written where a later resume finds it."""
    token = f"{lease}-{secrets.token_hex(12)}"
    path = _file(run, lease)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(token)
    return token


def unmark(run: str, lease: str) -> None:
    """The step ended normally: its processes were swept already."""
    _file(run, lease).unlink(missing_ok=True)


def kill_left(run: str, lease: str) -> bool:
    """Kill every process still carrying the lapsed lease's marker; whether it had one."""
    path = _file(run, lease)
    if not path.exists():
        return False
    sweep(path.read_text().strip(), -1)
    path.unlink(missing_ok=True)
    return True
