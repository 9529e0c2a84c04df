"""`armbench judge calibrate`: how far the correctness judge can be trusted, against the checks."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.output import progress

__all__ = ["register_judge"]


def register_judge(app: typer.Typer) -> None:
    """Add `armbench judge calibrate` to the app."""
    judge = typer.Typer(name="judge", no_args_is_help=True, add_completion=False,
                        help="The judge that labels trials for scorers and successCriteria tasks.")
    judge.command("calibrate")(guarded(calibrate))
    app.add_typer(judge)


def calibrate(
    run: Annotated[str, typer.Argument(help="A finished run whose tasks have a check.")],
    sandbox: Annotated[bool, typer.Option(
        help="Declare this machine a sandbox, as for run.")] = False,
    tool: Annotated[str | None, typer.Option(
        help="The judge's tool (default: the suite's judge).")] = None,
    model: Annotated[str | None, typer.Option(help="The judge's model.")] = None,
) -> None:
    """Run the correctness judge on every checked trial of a finished run and report how it agrees
    with the checks: confusion matrix, Cohen's kappa, false-pass and false-fail rates."""
    from armbench.benchmark.calibrate import calibrate_run
    from armbench.cli.compose import compose

    a = compose(access="run")
    got = calibrate_run(engine=a.engine, run=run, sandbox=sandbox, isolation=a.sandbox,
                        tools=a.tools(run), progress=progress, tool=tool, model=model)
    print(got["text"], file=sys.stderr, end="")
    emit_data("calibration", got)
