"""`armbench try`: a task's check at startingCommit and at source.fix, before the task joins its suite.

No agent, no run, no ledger, no record, no `armbench init` and no `--sandbox` (setup and the check
still run in armbench's own sandbox, as a run's do): the files are read as written, and the
commits come from the checkout or a temporary cache (see `benchmark.tryout.bench`).
With `repeat` above 1 the check runs that many times at each commit, each in a fresh clone, and a
check that disagrees with itself is reported flaky.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec

from armbench.benchmark.tryout import words
from armbench.benchmark.tryout.bench import Attempt, SharedCommits, TryBench
from armbench.benchmark.tryout.files import TryStopped, load_task_files
from armbench.benchmark.tryout.strength import Strength, measure_strength, strength_words
from armbench.edge.errors import EdgeError
from armbench.edge.sandbox import Sandbox
from armbench.projections.text import plain

__all__ = ["TryResult", "try_task"]


class TryResult(msgspec.Struct, frozen=True, kw_only=True):
    """How a try ended: the spec's message, and whether the task may join its suite."""

    task: str
    """The task id."""
    message: str
    """One of the spec's sentences (plus the counts of a repeated try)."""
    ok: bool
    """True for exit 0 (the task behaves as a task should), False for task_try_failed."""
    row: str = ""
    """The spec's row: `startup`, `no_fix`, `criteria_only`, `old_bug`, `bad_fix`,
    `could_not_run`, `flaky`, or `stopped` (it could not be tried: the message says why)."""
    failing_output: str = ""
    """What the check printed at startingCommit when it failed there (the tails of its output)."""
    strength: Strength | None = None
    """With `--strength`, what the check made of the fix's mutants (a valid task only)."""


def try_task(task_file: Path, *, cwd: Path, sandbox: Sandbox, repeat: int = 1,
             progress: Callable[[str], None], shared: SharedCommits | None = None,
             mutants: int | None = None, lanes: int = 1) -> TryResult:
    """Validate the task and its suite, then try the check as a run would, `repeat` times a commit
    (the commits from `shared` when several tries share them, a harvest's); with `mutants`, a
    valid task's check strength too, from at most that many mutants of the fix on `lanes`."""
    task_id = task_file.name.removesuffix(".yaml")
    try:
        files = load_task_files(task_file, cwd)
        for warning in files.warnings:
            progress(warning)
        if files.task.check is None:
            return TryResult(task=task_id, message=words.criteria_only(task_id), ok=True,
                             row="criteria_only")
        suite_dir = (task_file if task_file.is_absolute() else cwd / task_file).resolve().parent.parent
        seen = sandbox.of_repo(files.suite.repo, cwd)
        bench = TryBench(files, cwd, progress, dataclasses.replace(
            seen, hide=(*seen.hide, task_file.resolve().parent.parent)), suite_dir, shared)
        try:
            result, fix_run = _tried(bench, repeat)
            if mutants is not None and result.ok and fix_run is not None:
                measured = measure_strength(bench, fix_run, limit=mutants, lanes=lanes)
                for line in strength_words(task_id, measured):
                    progress(line)
                result = msgspec.structs.replace(result, strength=measured)
            return result
        finally:
            bench.close()
    except TryStopped as stop:
        return TryResult(task=task_id, message=stop.message, ok=False, row="stopped")
    except EdgeError as error:
        return TryResult(task=task_id, message=f'Task "{task_id}" could not be tried: {error}', ok=False,
                         row="stopped")


def _tried(bench: TryBench, repeat: int) -> tuple[TryResult, Attempt | None]:
    """The try's result, and the check's first run at the fix where it passed there."""
    task, start, fix = bench.files.task_id, bench.start, bench.fix
    at_start = _runs(bench, start, repeat)
    seen = {a.outcome for a in at_start}
    at_fix = _runs(bench, fix, repeat) if fix and seen != {"passed"} and seen != {"could_not_run"} else []
    start_words, fix_words = [a.outcome for a in at_start], [a.outcome for a in at_fix]
    if len(seen) > 1 or len({a.outcome for a in at_fix}) > 1:
        return TryResult(task=task, ok=False, message=words.flaky(task, start, start_words, fix, fix_words),
                         row="flaky"), None
    message, ok, row = _row(bench, at_start[0], at_fix[0] if at_fix else None)
    if row == "bad_fix":  # the cause a person needs (a ModuleNotFoundError, say) is in its output
        _show_tail(bench, f"the fix {fix[:7] if fix else ''}", at_fix[0].output)
    if repeat > 1:
        message += " " + words.stable(start, start_words, fix, fix_words)
    failing = at_start[0].output if at_start[0].outcome == "failed" else ""
    fix_run = at_fix[0] if at_fix and at_fix[0].outcome == "passed" else None
    return TryResult(task=task, message=message, ok=ok, row=row, failing_output=failing), fix_run


def _row(bench: TryBench, start_run: Attempt, fix_run: Attempt | None) -> tuple[str, bool, str]:
    """The table's row for a check that gave one result at each commit: message, ok, row."""
    task, start, fix = bench.files.task_id, bench.start, bench.fix
    run = bench.check.run
    if start_run.outcome == "passed":
        return words.old_bug(task, start), False, "old_bug"
    if start_run.outcome == "could_not_run":
        return words.could_not_run(task, run, start[:7], start_run.cause), False, "could_not_run"
    if fix is None or fix_run is None:
        return words.no_fix(task, start), True, "no_fix"
    if fix_run.outcome == "passed":
        return words.startup(task, start, fix), True, "startup"
    if fix_run.outcome == "could_not_run":
        return words.could_not_run(task, run, f"the fix {fix[:7]}", fix_run.cause), False, "could_not_run"
    return words.bad_fix(task, start, fix, fix_run.exit_code, _changed_by_fix(bench)), False, "bad_fix"


def _show_tail(bench: TryBench, where: str, output: str, lines: int = 12) -> None:
    """The last lines the check printed, shown to the person trying the task."""
    tail = [line for line in output.splitlines() if line.strip()][-lines:]
    if tail:
        bench.progress(f"The check's last {len(tail)} lines at {where}:")
        for line in tail:
            bench.progress(f"  | {plain(line)}")


def _runs(bench: TryBench, commit: str, repeat: int) -> list[Attempt]:
    where = commit[:7] if commit == bench.start else f"the fix {commit[:7]}"
    runs = []
    for n in range(1, repeat + 1):
        count = f" ({n} of {repeat})" if repeat > 1 else ""
        bench.progress(f"Task {bench.files.task_id}: trying the check at {where}{count}")
        runs.append(bench.attempt(commit, restore=commit != bench.start))
    return runs


def _changed_by_fix(bench: TryBench) -> Sequence[str]:
    """Protected paths the fix adds, changes or removes that check.add does not list."""
    before, after = bench.protected, bench.at_fix_protected()
    listed = {entry for entry in bench.check.add if isinstance(entry, str)}
    changed = (p for p in before.keys() | after.keys() if before.get(p) != after.get(p))
    return sorted(p for p in changed if p not in listed)

