"""Parse and validate the team repo's benchmark files: a value, or None, with every diagnostic.

Nothing here reads a disk: callers pass file texts (bytes or str) and repo-relative names.
A file with an error gives None; warnings leave the value usable.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TypeVar

from msgspec import Struct

from armbench.suites.arms import ResolvedArm, resolve_arms
from armbench.suites.credentials import credential_problem
from armbench.suites.diagnostics import Diagnostic, has_errors, sorted_by_line
from armbench.suites.findings import Findings
from armbench.suites.model import Aliases, AliasTarget, Roles, Suite, Task, TeamFile, ToolFile
from armbench.suites.protect_advice import warn_weak_protect
from armbench.suites.shape import decode_file
from armbench.suites.suite_rules import check_scorer_names, check_suite
from armbench.suites.task_rules import check_task
from armbench.suites.values import name_problem, unpublishable

__all__ = [
    "ResolvedArm", "SuiteCheck", "TaskEntry", "parse_aliases", "parse_roles", "parse_suite", "parse_task",
    "parse_task_advised", "parse_team_file", "parse_tool", "protect_advice", "resolve_arms",
    "validate_suite_dir",
]

T = TypeVar("T")
Text = str | bytes


class TaskEntry(Struct, frozen=True, kw_only=True):
    """One valid task of a suite directory."""

    id: str
    """The task's id: its file name without `.yaml`."""
    file: str
    """The task file's repo-relative path."""
    task: Task
    """The decoded task."""


class SuiteCheck(Struct, frozen=True, kw_only=True):
    """One suite directory, validated as pull does."""

    suite: Suite | None
    """The decoded suite, or None when `suite.yaml` is missing or has an error."""
    tasks: tuple[TaskEntry, ...]
    """The valid tasks, in file name order."""
    diagnostics: tuple[Diagnostic, ...]
    """Every diagnostic of the suite file and the task files, file by file."""
    valid: bool
    """Whether the suite may be cached: its suite file is valid and at least one task is."""


def parse_suite(text: Text, *, file: str, aliases: Collection[str] | None = None,
                dir_name: str | None = None, scorers: Collection[str] | None = None,
                tools: Collection[str] | None = None) -> tuple[Suite | None, list[Diagnostic]]:
    """A `suite.yaml`; `aliases` (alias names) enables the model-name warning, `dir_name` the name
    check, `scorers` (the scorer names the suite can reach) the check that each scorer exists,
    `tools` (the team's tool folders) the warning on an arm's tool that is not there or built in."""
    def rules(suite: Suite, report: Findings) -> None:
        check_suite(suite, report, aliases, tools)
        if scorers is not None:
            check_scorer_names(suite, report, scorers)
        if dir_name is not None and suite.name != dir_name:
            report.error("$.name", "suite_name_mismatch", f"expected `{dir_name}`, the suite's directory "
                         f"name, found `{suite.name}`. Rename the suite or its directory so they match.")
    return _parse(text, Suite, file, rules)


def parse_task(text: Text, *, file: str, task_id: str) -> tuple[Task | None, list[Diagnostic]]:
    """A `tasks/<task_id>.yaml`."""
    return _parse(text, Task, file, lambda task, report: _task_rules(task, report, task_id))


def parse_task_advised(text: Text, *, file: str, task_id: str
                       ) -> tuple[Task | None, list[Diagnostic], list[Diagnostic]]:
    """`parse_task` and `protect_advice` of one task file from one decode of it: the task, its
    diagnostics, and the advice."""
    advice: list[Diagnostic] = []

    def rules(task: Task, report: Findings) -> None:
        _task_rules(task, report, task_id)
        weak = Findings(report.loaded)
        warn_weak_protect(task, weak)
        advice.extend(d for d in sorted_by_line(weak.diagnostics) if d.code == "protect_weak")
    value, found = _parsed_task(text, file, rules)
    return value, found, advice


def _parsed_task(text: Text, file: str, rules: Callable[[Task, Findings], None]
                 ) -> tuple[Task | None, list[Diagnostic]]:
    return _parse(text, Task, file, rules)


def _task_rules(task: Task, report: Findings, task_id: str) -> None:
    if problem := name_problem(task_id):
        report.error("$", "task_id_invalid", f"The task id is the file name without `.yaml`: {problem}. "
                     "Rename the file.")
    check_task(task, report)


def protect_advice(text: Text, *, file: str) -> list[Diagnostic]:
    """`try`'s and `review`'s warnings about a task file's `check.protect`: the files the
    check's test runner reads that it leaves to the agent (`suites.protect_advice`). Nothing
    for a file that does not decode (`parse_task` says why)."""
    found = _parse(text, Task, file, warn_weak_protect)[1]
    return [d for d in found if d.code == "protect_weak"]


def parse_aliases(text: Text, *, file: str) -> tuple[Aliases | None, list[Diagnostic]]:
    """A `models/aliases.yaml`."""
    def rules(value: Aliases, report: Findings) -> None:
        for alias, tools in value.aliases.items():
            if not tools:
                report.error(f"$.aliases[{alias}]", "alias_empty", f"alias `{alias}` names no tool's model. "
                             "Add `<tool>: <model>` lines, or remove the alias.")
            for tool, target in tools.items():
                model = target.model if isinstance(target, AliasTarget) else target
                where = f"$.aliases[{alias}][{tool}]"
                if not model.strip():
                    report.error(where, "alias_model_empty", f"expected the model alias `{alias}` gives "
                                 f"{tool}, found an empty text. Write the model's name.")
                elif unpublishable(model):
                    report.error(where, "alias_unpublishable", f"expected a plain model name, found "
                                 f"`{model}`, which looks like a URL or a local path and would reach the "
                                 "published record. Use the model's plain name.")
    return _parse(text, Aliases, file, rules)


def parse_tool(text: Text, *, file: str, folder_name: str,
               armbench_home: str | None = None) -> tuple[ToolFile | None, list[Diagnostic]]:
    """A `tools/<folder_name>/tool.yaml`; `armbench_home` is armbench's own home relative to
    the member's (where it lies inside), which no credential may name either."""
    def rules(tool: ToolFile, report: Findings) -> None:
        if tool.name != folder_name:
            report.error("$.name", "tool_name_mismatch", f"expected `{folder_name}`, the tool's folder name, "
                         f"found `{tool.name}`. Rename the tool or its folder so they match.")
        if not tool.run.strip():
            report.error("$.run", "tool_run_empty", "expected the shell command that runs one prompt, found "
                         "an empty text. Write the command.")
        for i, path in enumerate(tool.credentials):
            if not path or path.startswith(("/", "~")) or ".." in path.split("/"):
                report.error(f"$.credentials[{i}]", "tool_credentials_path",
                             f"expected a path relative to the home folder, such as "
                             f"`.config/{folder_name}/auth.json`, found `{path}`. Write it relative to "
                             "the home, without `..`.")
            elif (problem := credential_problem(path, armbench_home)) is not None:
                report.error(f"$.credentials[{i}]", "tool_credentials_secret",
                             f"expected the tool's own login file, such as "
                             f"`.config/{folder_name}/auth.json`, found `{path}`: {problem}, and "
                             "every trial's agent could read it. Remove it from `credentials`.")
    return _parse(text, ToolFile, file, rules)


def parse_team_file(text: Text, *, file: str) -> tuple[TeamFile | None, list[Diagnostic]]:
    """The team repo's `armbench.yaml`."""
    return _parse(text, TeamFile, file, lambda value, report: None)


def parse_roles(text: Text, *, file: str) -> tuple[Roles | None, list[Diagnostic]]:
    """A `manifest/roles.yaml` (keys other than roles, projects, id and resources.benchmarks are ignored)."""
    return _parse(text, Roles, file, lambda value, report: None)


def validate_suite_dir(files: Mapping[str, Text], *, suite_dir: str,
                       aliases: Collection[str] | None = None,
                       scorers: Collection[str] | None = None,
                       tools: Collection[str] | None = None) -> SuiteCheck:
    """`suite.yaml` and `tasks/*.yaml` of one suite directory; keys of `files` are repo-relative paths."""
    suite_dir = suite_dir.strip("/")
    suite_file = f"{suite_dir}/suite.yaml"
    diagnostics: list[Diagnostic] = []
    suite = None
    if suite_file in files:
        suite, found = parse_suite(files[suite_file], file=suite_file, aliases=aliases,
                                   dir_name=suite_dir.rsplit("/", 1)[-1], scorers=scorers, tools=tools)
        diagnostics += found
    else:
        diagnostics.append(_error(suite_file, "suite_missing", f"The suite directory {suite_dir}/ has no "
                                  "suite.yaml. Add one, or move the tasks to a suite's directory."))
    tasks = []
    prefix = f"{suite_dir}/tasks/"
    for name in sorted(path for path in files if path.startswith(prefix) and "/" not in path[len(prefix):]):
        if not name.endswith(".yaml"):
            diagnostics.append(Diagnostic(file=name, line=None, severity="warning", code="task_file_ignored",
                message="This file is not read: task files end in `.yaml`. Rename it, or move it elsewhere."))
            continue
        task_id = name[len(prefix):].removesuffix(".yaml")
        task, found = parse_task(files[name], file=name, task_id=task_id)
        diagnostics += found
        if task is not None:
            tasks.append(TaskEntry(id=task_id, file=name, task=task))
    if suite is not None and not tasks:
        diagnostics.append(_error(suite_file, "suite_no_valid_task", f"The suite has no valid task under "
                                  f"{prefix}, so it is not cached and its last valid version is kept. Fix "
                                  "the task files reported here, or add one."))
    return SuiteCheck(suite=suite, tasks=tuple(tasks), diagnostics=tuple(diagnostics),
                      valid=suite is not None and bool(tasks))


def _parse(text: Text, kind: type[T], file: str,
           rules: Callable[[T, Findings], None]) -> tuple[T | None, list[Diagnostic]]:
    value, loaded, diagnostics = decode_file(text, kind, file=file)
    if value is None:
        return None, sorted_by_line(diagnostics)
    report = Findings(loaded)
    rules(value, report)
    found = sorted_by_line(report.diagnostics)
    return (None if has_errors(found) else value), found


def _error(file: str, code: str, message: str) -> Diagnostic:
    return Diagnostic(file=file, line=None, severity="error", code=code, message=message)
