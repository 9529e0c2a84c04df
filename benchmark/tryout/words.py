"""What `armbench try` says: the spec's sentences, word for word, and the flake counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

__all__ = ["add_missing", "bad_fix", "could_not_run", "criteria_only", "flaky", "fix_changes",
           "no_fix", "old_bug", "setup_failed", "stable", "startup", "suite_file_missing", "tally"]

_FLAKY_END = ("A flaky check makes every trial's result a coin toss: make it deterministic before the "
              "task joins the suite.")
_VERBS = {"failed": "failed", "passed": "passed", "could_not_run": "could not run"}
_SHOWN = 5


def startup(task: str, start: str, fix: str) -> str:
    """The check fails at the start and passes at the fix: the task is ready."""
    return (f'Task "{task}": the check fails at {start[:7]} and passes at the fix {fix[:7]}, '
            f"with the protected paths as {start[:7]} has them.")


def no_fix(task: str, start: str) -> str:
    """The check fails at the start, and there is no fix to try it on."""
    return (f'Task "{task}": the check fails at {start[:7]}, as the task expects. The task has no '
            "source.fix, so the check was not tried on a fix.")


def old_bug(task: str, start: str) -> str:
    """The check passes before any change."""
    return (f'Task "{task}": the check passes without changes at {start[:7]}, so it cannot tell a '
            "fix from no change. Pick a startingCommit where the check fails, or fix the check.")


def bad_fix(task: str, start: str, fix: str, exit_code: int | None, changed: Sequence[str]) -> str:
    """The check fails at the fix too; names the protected files the fix changed, if any."""
    text = (f'Task "{task}": the check fails at the fix {fix[:7]} (exit {exit_code}), with the '
            f"protected paths as {start[:7]} has them.")
    return f"{text} {fix_changes(start, changed)}" if changed else text


def fix_changes(start: str, changed: Sequence[str]) -> str:
    """The sentence for a fix that changes protected files check.add does not list."""
    return (f"The fix changes {_listed(changed)}, which protect puts back as {start[:7]} has "
            "them: list a test the fix brought in check.add.")


def add_missing(task: str, start: str, path: str, fix: str) -> str:
    """A check.add path is not a file at the fix (the full fix commit is named)."""
    return (f'Task "{task}" could not be tried at {start[:7]}: check.add path {path} is not a file '
            f"at the fix {fix}. List files the fix has in check.add, or fix source.fix.")


def suite_file_missing(task: str, start: str, path: str) -> str:
    """A `{from, to}` entry of check.add names a file the suite's folder does not have."""
    return (f'Task "{task}" could not be tried at {start[:7]}: check.add reads {path} from the '
            "suite folder, and there is no file there. Add it, or fix the entry's `from`.")


def could_not_run(task: str, run: str, where: str, cause: str) -> str:
    """The check could not start or finish; `where` is `3f2c9a7` or `the fix 9a1d4e7`."""
    if cause == "no_tests_ran":
        return (f'Task "{task}": the check "{run.strip()}" ran no test at {where} (its runner '
                "counted every test skipped or deselected, or found none) and exited 0, so it "
                "cannot tell a fix from no change (no_tests_ran). Make check.run run the tests the "
                "fix makes pass, by their names where the runner takes them.")
    return (f'Task "{task}": the check "{run.strip()}" could not run at {where} ({cause}). Make '
            "the command runnable after setup there, or fix check.run.")


def setup_failed(task: str, setup: str, where: str, cause: str) -> str:
    """The suite's setup did not succeed in a fresh clone."""
    return (f'Task "{task}": setup "{setup.strip()}" did not succeed at {where} ({cause}). Make it '
            "succeed in a fresh clone there, or fix setup in suite.yaml.")


def criteria_only(task: str) -> str:
    """A task judged by successCriteria has no check to try."""
    return (f'Task "{task}" is judged by successCriteria, so there is no check to try. '
            "Its files are valid.")


def tally(outcomes: Sequence[str], expected: str) -> str:
    """`it passed 5 of 5`, or `it failed 3 of 5 times and passed 2` (the expected result first)."""
    counts = Counter(outcomes)
    order = sorted(counts, key=lambda o: (o != expected, -counts[o], list(_VERBS).index(o)))
    first, *rest = order
    n = len(outcomes)
    if not rest:
        return f"it {_VERBS[first]} {n} of {n}"
    others = [f"{_VERBS[o]} {counts[o]}" for o in rest]
    return f"it {_VERBS[first]} {counts[first]} of {n} times and " + _joined(others)


def flaky(task: str, start: str, at_start: Sequence[str], fix: str | None,
          at_fix: Sequence[str] | None) -> str:
    """The check disagreed with itself at one commit or both."""
    return f'Task "{task}": the check is flaky: {_sides(start, at_start, fix, at_fix)}. {_FLAKY_END}'


def stable(start: str, at_start: Sequence[str], fix: str | None, at_fix: Sequence[str] | None) -> str:
    """The sentence a repeated try adds when the check agreed with itself every time."""
    return f"It gave the same result every time: {_sides(start, at_start, fix, at_fix)}."


def _sides(start: str, at_start: Sequence[str], fix: str | None, at_fix: Sequence[str] | None) -> str:
    text = f"at {start[:7]} {tally(at_start, 'failed')}"
    if fix is not None and at_fix:
        text += f"; at the fix {fix[:7]} {tally(at_fix, 'passed')}"
    return text


def _listed(paths: Sequence[str]) -> str:
    shown = list(paths[:_SHOWN])
    if len(paths) > _SHOWN:
        shown.append(f"{len(paths) - _SHOWN} more files")
    return _joined(shown)


def _joined(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
