"""armbench's own errors become the error envelope and their exit code, never a traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from armbench.cli.envelope import emit_error
from armbench.ledger.errors import ArmbenchError

__all__ = ["guarded", "protocol"]

F = TypeVar("F", bound=Callable[..., Any])


def guarded(fn: F, *, exit_code: int | None = None) -> F:
    """Wrap a command so a user's mistake is a message and an exit code (the error's own, or
    `exit_code` for every error)."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except ArmbenchError as exc:
            emit_error(exc.code, exc.message)
            raise typer.Exit(code=exc.exit_code if exit_code is None else exit_code) from None
    return wrapper  # type: ignore[return-value]


def protocol(fn: F) -> F:
    """Wrap a verb of the drivers' protocol: every error envelope exits 2, as the drivers guide
    says (a driver tells an answer from an error by the exit code alone)."""
    return guarded(fn, exit_code=2)
