"""A trial's check tree: what the check (and the judge) of a trial reads, made by armbench from
what the trial started from, with the tool's change written onto it (`check.tree: change`).

The tree is made the way the trial's own clone was, but never shown to the tool:

- with `trial: {setup: once}`, a new copy of (or overlay over) the task's prepared tree;
- with setup run in each clone, from the copy of the clone that `TrialSources.keep_setup_tree`
  took once setup had run and before the tool started (an overlay over it, or a copy);
- with no setup, a new clone at the starting commit (an overlay over its pristine tree, or
  checked out).

Onto it goes the tool's change (`TrialSources.grade_onto`, `edge.change`), and only that. Then
the check restores protect and writes check.add as it always has (`checks.run_trial_check`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from armbench.benchmark.trials.checks import Graded
from armbench.benchmark.trials.workspace import TrialSources, discard
from armbench.ledger.events import PlannedTask

__all__ = ["graded_tree"]


def graded_tree(sources: TrialSources, task: PlannedTask, clone: Path, *, step: str,
                setup: bool, prepared: Callable[[str], Path] | None,
                overlays: bool) -> Graded:
    """The trial's check tree for `step` (`<check or judge step>#graded`), the tool's change
    from `clone` written onto it. `prepared(step)` makes a step's copy of the task's prepared
    tree (`setup: once`); `setup` says whether the suite has setup at all. Raises
    ChangeUnreadable, an EdgeError or OSError (nothing is left behind then)."""
    name = f"{step}#graded"
    if prepared is not None:
        tree = prepared(name)
    elif setup:
        tree = sources.tree_from_setup(name, clone, overlays=overlays)
    elif overlays:
        try:
            tree = sources.overlay_clone(name, task.starting_commit)
        except OSError:
            tree = sources.fresh_clone(name, task.starting_commit)
    else:
        tree = sources.fresh_clone(name, task.starting_commit)
    try:
        return tree, sources.grade_onto(clone, tree, task.starting_commit, setup=setup)
    except BaseException:
        discard(tree)
        raise
