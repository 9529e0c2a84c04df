"""The machine-readable envelope on stdout; everything for people goes to stderr."""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from projections.text import printable

__all__ = ["emit_data", "emit_error"]


def emit_data(key: str, value: Any) -> None:
    """`{"data": {key: value}}` on stdout."""
    sys.stdout.write(msgspec.json.encode({"data": {key: value}}).decode() + "\n")
    sys.stdout.flush()


def emit_error(code: str, message: str) -> None:
    """`{"error": {"code", "message"}}` on stdout, and the message on stderr (control characters
    from a team file or a tool shown escaped)."""
    sys.stdout.write(msgspec.json.encode({"error": {"code": code, "message": message}}).decode()
                     + "\n")
    sys.stdout.flush()
    print(f"error: {printable(message)}", file=sys.stderr)
