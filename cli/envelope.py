"""The machine-readable envelope on stdout; everything for people goes to stderr."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import typer

from armbench.projections.text import printable

if TYPE_CHECKING:
    from armbench.benchmark.run import RunOutcome

__all__ = ["emit", "emit_data", "emit_error", "finish"]


def emit(value: dict[str, Any]) -> None:
    """One JSON object on stdout: a verb whose shape the specification gives (`check`'s
    `{"result"}`, `report`'s `{text, table}`), with armbench's `data` beside it."""
    sys.stdout.write(msgspec.json.encode(value).decode() + "\n")
    sys.stdout.flush()


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


def finish(outcome: RunOutcome, record: Path) -> None:
    """A driven run's ending: the table on stderr, then the done envelope, or, when its report
    step failed, the error envelope naming why; exit with the run's code."""
    if outcome.text:
        print(outcome.text, file=sys.stderr, end="")
    if outcome.closing:
        print("", *outcome.closing, sep="\n", file=sys.stderr)
    if outcome.failure is None:
        print(f"Record: {record}", file=sys.stderr)
    for line in outcome.regression:
        print(line, file=sys.stderr)
    if outcome.failure is not None:
        emit_error(*outcome.failure)
    else:
        emit_data("done", {"run": outcome.run, "state": outcome.done.state,
                           "outputs": outcome.done.outputs})
    raise typer.Exit(code=outcome.exit_code)
