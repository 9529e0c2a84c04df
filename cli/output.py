"""What every verb shares and nothing heavy: the clock, fresh ids, and progress lines on stderr."""

from __future__ import annotations

import secrets
import sys
from datetime import UTC, datetime

from projections.text import printable

__all__ = ["clock", "new_id", "progress"]


def clock() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """A fresh id: `r` for runs, `l` for leases."""
    return prefix + secrets.token_hex(8 if prefix == "r" else 6)


def progress(message: str) -> None:
    """A line for people, on stderr (control characters from a team file or a tool escaped)."""
    print(printable(message), file=sys.stderr, flush=True)
