"""A subset of a suite's run (`--task`, `--arm`, `--repetitions`): asked for, checked, frozen. Pure.

`Selection` is what the member asked for; `select` checks it against the suite's tasks and arms
and gives the `PlanSubset` the plan freezes (None when the selection is the whole suite), or a
refusal that names what armbench has. The selection travels to the plan step as one run input
(`SUBSET_INPUT`), so a team's benchmark workflow override freezes the same subset.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase

import msgspec

from armbench.ledger.errors import Refusal
from armbench.ledger.events import PlanSubset

__all__ = ["ROLES_INPUT", "SUBSET_INPUT", "Selection", "roles_from_inputs", "roles_inputs", "select",
           "selection_from_inputs", "subset_inputs", "subset_words"]

SUBSET_INPUT = "subset"
"""The run input that carries a selection (JSON) from `run`/`workflow start` to the plan step."""
ROLES_INPUT = "roles"
"""The run input that carries the member's roles and projects (a JSON list) to the plan step."""


class Selection(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What the member asked for: task ids or globs, arm names, a number of repetitions."""

    tasks: list[str] = []
    """Task ids or globs (`fnmatch`: `*`, `?`, `[...]`); empty: every task."""
    arms: list[str] = []
    """Arm names; empty: every arm."""
    repetitions: int | None = None
    """Repetitions of each trial; None: the suite's."""

    @property
    def empty(self) -> bool:
        """Nothing was asked for: the whole suite."""
        return not self.tasks and not self.arms and self.repetitions is None


def subset_inputs(selection: Selection | None) -> dict[str, str]:
    """The run inputs that carry `selection` (none for the whole suite)."""
    if selection is None or selection.empty:
        return {}
    return {SUBSET_INPUT: msgspec.json.encode(selection).decode()}


def roles_inputs(roles: list[str]) -> dict[str, str]:
    """The run input that carries the starter's roles and projects to the plan step, which may
    run in another process (a worker, with a config of its own)."""
    return {ROLES_INPUT: msgspec.json.encode(sorted(roles)).decode()}


def roles_from_inputs(inputs: Mapping[str, str]) -> list[str] | None:
    """The roles a run's inputs carry, or None (a run started before roles were carried)."""
    text = inputs.get(ROLES_INPUT)
    return None if text is None else msgspec.json.decode(text, type=list[str])


def selection_from_inputs(inputs: Mapping[str, str]) -> Selection | None:
    """The selection a run's inputs carry, or None."""
    text = inputs.get(SUBSET_INPUT)
    return None if text is None else msgspec.json.decode(text, type=Selection)


def subset_words(subset: PlanSubset) -> str:
    """The subset in words: `tasks a, b; arms x; 1 repetition`."""
    reps = subset.repetitions
    return (f"{'task' if len(subset.tasks) == 1 else 'tasks'} {', '.join(subset.tasks)}; "
            f"{'arm' if len(subset.arms) == 1 else 'arms'} {', '.join(subset.arms)}; "
            f"{reps} {'repetition' if reps == 1 else 'repetitions'}")


def _names(values: Sequence[str]) -> str:
    return ", ".join(values) if values else "none"


def select(selection: Selection | None, *, suite: str, tasks: Sequence[str], arms: Sequence[str],
           repetitions: int) -> PlanSubset | None:
    """The subset the plan freezes: the tasks (in suite order) some pattern matched, the arms
    named, the repetitions; None when that is the whole suite. Refuses (exit 2) a task pattern
    that matches no task, an arm the suite does not have, or repetitions outside 1..the suite's."""
    if selection is None or selection.empty:
        return None
    unmatched = [p for p in selection.tasks if not any(fnmatchcase(t, p) for t in tasks)]
    if unmatched:
        raise Refusal(f'Suite "{suite}" has no task matching --task {", ".join(unmatched)}. '
                      f"Its tasks are: {_names(tasks)}. Give a task id or a glob of them and "
                      "start again.", code="unknown_task")
    unknown = [a for a in selection.arms if a not in arms]
    if unknown:
        raise Refusal(f'Suite "{suite}" has no arm {", ".join(unknown)}. Its arms are: '
                      f"{_names(arms)}. Give an arm's name and start again.", code="unknown_arm")
    reps = selection.repetitions
    if reps is not None and not 1 <= reps <= repetitions:
        raise Refusal(f"--repetitions is {reps}; suite \"{suite}\" runs {repetitions}, so a subset "
                      f"runs 1 to {repetitions}. Give a number in that range and start again.",
                      code="bad_option")
    chosen_tasks = [t for t in tasks if not selection.tasks
                    or any(fnmatchcase(t, p) for p in selection.tasks)]
    chosen_arms = [a for a in arms if not selection.arms or a in selection.arms]
    chosen_reps = repetitions if reps is None else reps
    if len(chosen_tasks) == len(tasks) and len(chosen_arms) == len(arms) \
            and chosen_reps == repetitions:
        return None
    return PlanSubset(tasks=chosen_tasks, arms=chosen_arms, repetitions=chosen_reps)
