"""The rules a decoded task file must meet beyond its types, `check.add` included."""

from __future__ import annotations

from armbench.suites.durations import parse_duration
from armbench.suites.environment_rules import check_environment
from armbench.suites.findings import Findings
from armbench.suites.model import AddFrom, Check, Task
from armbench.suites.pathspec import is_glob, is_inside, matches_any
from armbench.suites.values import commit_problem, path_problem

__all__ = ["check_task"]


def check_task(task: Task, report: Findings) -> None:
    """Report every rule `task` breaks."""
    for key, value in (("title", task.title), ("prompt", task.prompt)):
        if not value.strip():
            report.error(f"$.{key}", f"{key}_empty",
                         f"expected text, found an empty text. Write the task's {key}.")
    if problem := commit_problem(task.starting_commit):
        report.error("$.startingCommit", "starting_commit_invalid",
                     f"expected a full 40-character commit of the suite's repo, {problem}.")
    fix = task.source.fix if task.source is not None else None
    if fix is not None and (problem := commit_problem(fix)):
        report.error("$.source.fix", "fix_commit_invalid", f"expected the full 40-character commit that "
                     f"fixed the task, {problem}.")
    elif fix is not None and fix == task.starting_commit:
        report.error("$.source.fix", "fix_is_start", "is the startingCommit itself, so it cannot show the "
                     "check passing after a fix. Write the commit that fixed the task, or remove `fix`.")
    if task.check is not None and task.success_criteria is not None:
        report.error("$.successCriteria", "task_check_and_criteria", "the task has both check and "
                     "successCriteria; a task is judged by exactly one. Keep check when a command can decide "
                     "the task, else keep successCriteria.")
    elif task.check is None and task.success_criteria is None:
        report.error("$", "task_check_missing", "The task has neither check nor successCriteria; a task is "
                     "judged by exactly one. Add `check: {run, protect}`, or `successCriteria:` text for a "
                     "correctness judge.")
    if task.success_criteria is not None and not task.success_criteria.strip():
        report.error("$.successCriteria", "criteria_empty", "expected text a correctness judge reads, found "
                     "an empty text. Write what a correct result does.")
    if task.check is not None:
        _check_check(task.check, fix, report)
    check_environment(task.environment, report)


def _check_check(check: Check, fix: str | None, report: Findings) -> None:
    if not check.run.strip():
        report.error("$.check.run", "check_run_empty", "expected the shell command that decides a trial "
                     "(exit 0 passes), found an empty text. Write the command, such as `npx vitest run`.")
    if not check.protect:
        report.error("$.check.protect", "protect_empty", "expected a non-empty list of paths relative to the "
                     "repo, found an empty list. List everything the check reads that the agent must not "
                     "supply, such as `['test/**']`.")
    for index, entry in enumerate(check.protect):
        if problem := path_problem(entry):
            report.error(f"$.check.protect[{index}]", "protect_path_invalid",
                         f"{problem}. Write it relative to the repo root, as git lists it.")
    if check.timeout is not None:
        try:
            parse_duration(check.timeout)
        except ValueError as error:
            report.error("$.check.timeout", "duration_invalid", f"{error}.")
    targets: list[tuple[int, str]] = []
    for index, item in enumerate(check.add):
        path = f"$.check.add[{index}]"
        target = item.to if isinstance(item, AddFrom) else item
        where = f"{path}.to" if isinstance(item, AddFrom) else path
        if isinstance(item, AddFrom):
            _check_from(item.from_, f"{path}.from", report)
        if _add_target_ok(target, where, check, report):
            targets.append((index, target))
        if isinstance(item, str) and fix is None:
            report.error(path, "add_without_fix", f"`{item}` is read from source.fix, and the task has no "
                         "source.fix. Add `source: {fix: <full commit>}`, or write the file from the suite "
                         "directory with `{from: <file>, to: " + item + "}`.")
    _check_overlaps(targets, report)


def _add_target_ok(target: str, where: str, check: Check, report: Findings) -> bool:
    if problem := path_problem(target):
        report.error(where, "add_path_invalid", f"{problem}. Write it relative to the repo root.")
        return False
    if is_glob(target):
        report.error(where, "add_glob", f"expected one file's path, found the glob `{target}`. List each "
                     "file the check needs on its own line.")
        return False
    if check.protect and not matches_any(check.protect, target):
        report.error(where, "add_unprotected", f"`{target}` is matched by no check.protect entry, so the "
                     "agent could supply it. Add it, or a folder or glob that holds it, to check.protect.")
    return True


def _check_overlaps(targets: list[tuple[int, str]], report: Findings) -> None:
    for position, (index, target) in enumerate(targets):
        for other_index, other in targets[:position]:
            if target.rstrip("/") == other.rstrip("/"):
                report.error(f"$.check.add[{index}]", "add_duplicate", f"`{target}` is already listed at "
                             f"check.add[{other_index}]. Remove one of them.")
            elif is_inside(target, other) or is_inside(other, target):
                report.error(f"$.check.add[{index}]", "add_nested", f"`{target}` and `{other}` "
                             f"(check.add[{other_index}]) are a path inside another listed path. List each "
                             "file once, by its own path.")
            else:
                continue
            break


def _check_from(source: str, where: str, report: Findings) -> None:
    if problem := path_problem(source):
        problem = problem.replace("repo root", "suite directory").replace("the repo", "the suite directory")
        report.error(where, "add_path_invalid", f"{problem}. Write the file's path relative to the suite "
                     "directory, such as `fixtures/startup.test.ts`.")
    elif is_glob(source):
        report.error(where, "add_glob", f"expected one file's path, found the glob `{source}`. Write one "
                     "`{from, to}` entry per file.")
