"""The options that run a subset of a suite (`--task`, `--arm`, `--repetitions`), shared by
`plan`, `run` and `workflow start`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from armbench.suites.subset import Selection

__all__ = ["ArmOpt", "RepetitionsOpt", "TaskOpt", "selection"]

TaskOpt = Annotated[list[str] | None, typer.Option(
    "--task", metavar="ID",
    help="Run only this task (an id or a glob such as 'auth-*'); repeat for more. The plan and "
         "the record say the run was a subset.")]
ArmOpt = Annotated[list[str] | None, typer.Option(
    "--arm", metavar="NAME", help="Run only this arm; repeat for more.")]
RepetitionsOpt = Annotated[int | None, typer.Option(
    "--repetitions", metavar="N",
    help="Repeat each trial N times instead of the suite's repetitions (1 to the suite's).")]


def selection(tasks: list[str] | None, arms: list[str] | None,
              repetitions: int | None) -> Selection:
    """The subset asked for (empty: the whole suite)."""
    from armbench.suites.subset import Selection

    return Selection(tasks=list(tasks or []), arms=list(arms or []), repetitions=repetitions)
