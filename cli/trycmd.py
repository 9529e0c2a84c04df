"""`armbench try`: try one task's check before it joins its suite (a thin adapter)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.output import progress
from armbench.ledger.errors import ArmbenchError, Refusal

__all__ = ["REPEAT_MAX", "register_try"]

REPEAT_MAX = 100


class TaskTryFailed(ArmbenchError):
    """The task is not ready to join its suite, or could not be tried (exit 1)."""

    code = "task_try_failed"


def register_try(app: typer.Typer) -> None:
    """Add `armbench try` to the app."""
    app.command("try")(guarded(try_))


def try_(
    task_file: Annotated[Path, typer.Argument(
        help="The task file, benchmarks/<suite>/tasks/<id>.yaml; its suite.yaml is read two "
             "directories up.")],
    repeat: Annotated[int, typer.Option(
        help=f"Run the check this many times at each commit (1 to {REPEAT_MAX}), each in a fresh "
             "clone, and report a check that disagrees with itself as flaky.")] = 1,
) -> None:
    """Try one task's check at startingCommit and at source.fix, before the task joins its suite.

    Reads the task file and its suite.yaml as written and validates both as pull does. Runs in a
    checkout of the suite's repo; a commit it lacks is fetched by SHA into a temporary cache. No
    agent, no run, no record, no `armbench init` and no --sandbox. Progress on stderr; on stdout
    {"data":{"try":{"task","message"}}} with exit 0, or {"error":{"code":"task_try_failed",
    "message"}} with exit 1.
    """
    from armbench.benchmark.tryout.task import try_task
    from armbench.cli.compose import try_sandbox
    from armbench.edge.sandbox import probe

    if not 1 <= repeat <= REPEAT_MAX:
        raise Refusal(f"--repeat must be a whole number from 1 to {REPEAT_MAX}, not {repeat}.",
                      code="invalid_inputs")
    sandbox = try_sandbox(Path.cwd())
    probe(sandbox)
    result = try_task(task_file, cwd=Path.cwd(), sandbox=sandbox, repeat=repeat, progress=progress)
    if not result.ok:
        raise TaskTryFailed(result.message)
    progress(result.message)
    emit_data("try", {"task": result.task, "message": result.message})

