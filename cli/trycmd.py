"""`armbench try`: try one task's check before it joins its suite (a thin adapter)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import msgspec
import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.output import progress
from armbench.ledger.errors import ArmbenchError, Refusal

__all__ = ["REPEAT_MAX", "register_try"]

REPEAT_MAX = 100
MUTANTS_MAX = 200


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
    strength: Annotated[bool, typer.Option(
        "--strength", help="Also measure the check's strength: run it at the fix on mutants of "
        "the fix's non-test change (partial fixes and operator mutants) and report how many it "
        "rejects, with an exact 95% interval and each wrong fix that passes.")] = False,
    mutants: Annotated[int, typer.Option(
        help=f"With --strength, at most this many mutants (1 to {MUTANTS_MAX}), the same ones on "
             "every machine.")] = 20,
    lanes: Annotated[int, typer.Option(
        help="With --strength, run this many mutants' checks at once (default: the machine's "
             "cores, at most 4).")] = 0,
) -> None:
    """Try one task's check at startingCommit and at source.fix, before the task joins its suite.

    Reads the task file and its suite.yaml as written and validates both as pull does. Runs in a
    checkout of the suite's repo; a commit it lacks is fetched by SHA into a temporary cache. No
    agent, no run, no record, no `armbench init` and no --sandbox. Progress on stderr; on stdout
    {"data":{"try":{"task","message"}}} with exit 0 (and `strength`: {killed, mutants,
    couldNotRun, strength, lower, upper, survivors: [{kind, file, line, diff}], made} with
    --strength), or {"error":{"code":"task_try_failed", "message"}} with exit 1.
    """
    import os

    from armbench.benchmark.tryout.task import try_task
    from armbench.cli.compose import try_sandbox
    from armbench.edge.sandbox import probe

    if not 1 <= repeat <= REPEAT_MAX:
        raise Refusal(f"--repeat must be a whole number from 1 to {REPEAT_MAX}, not {repeat}.",
                      code="invalid_inputs")
    if not 1 <= mutants <= MUTANTS_MAX:
        raise Refusal(f"--mutants must be a whole number from 1 to {MUTANTS_MAX}, not {mutants}.",
                      code="invalid_inputs")
    if lanes < 0:
        raise Refusal(f"--lanes must be 0 (the machine's cores, at most 4) or more, not {lanes}.",
                      code="invalid_inputs")
    sandbox = try_sandbox(Path.cwd())
    probe(sandbox)
    result = try_task(task_file, cwd=Path.cwd(), sandbox=sandbox, repeat=repeat, progress=progress,
                      mutants=mutants if strength else None,
                      lanes=lanes or min(4, os.cpu_count() or 1))
    if not result.ok:
        raise TaskTryFailed(result.message)
    progress(result.message)
    emit_data("try", {"task": result.task, "message": result.message}
              | ({"strength": msgspec.to_builtins(result.strength)} if result.strength else {}))

