"""What every verb shares and nothing heavy: the clock, fresh ids, and progress lines on stderr."""

from __future__ import annotations

import os
import secrets
import sys
import threading
from datetime import UTC, datetime
from typing import NoReturn

from armbench.projections.text import printable

__all__ = ["clock", "exit_code", "exit_now", "new_id", "progress"]


def clock() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """A fresh id: `r` for runs, `l` for leases."""
    return prefix + secrets.token_hex(8 if prefix == "r" else 6)


def progress(message: str) -> None:
    """A line for people, on stderr (control characters from a team file or a tool escaped)."""
    print(printable(message), file=sys.stderr, flush=True)


def exit_code(code: object) -> int:
    """The process exit status `sys.exit(code)` would give (None is 0, a message is 1)."""
    if code is None:
        return 0
    if isinstance(code, int) and not isinstance(code, bool):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def exit_now(code: object) -> NoReturn:
    """End the process once the command is done, without the interpreter's teardown.

    Freeing every module and object at exit costs a short command about a third of its time
    (30 ms of `armbench verify`'s 170; an external driver starts armbench three times a trial),
    and nothing is left to do by then: the ledger's writes are committed, the envelope and the
    messages are flushed here. Where a thread that is not a daemon still runs, the interpreter
    must wait for it, so the exit is the ordinary one."""
    status = exit_code(code)
    usernet = sys.modules.get("armbench.edge.usernet")  # the tool steps' networks, where a run made any
    if usernet is not None:
        usernet.close()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`armbench runs | head`): nothing to add
            pass
    if any(t.is_alive() and not t.daemon for t in threading.enumerate()
           if t is not threading.main_thread()):
        raise SystemExit(status)
    os._exit(status)
