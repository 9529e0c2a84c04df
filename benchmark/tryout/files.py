"""Read a task file and the suite.yaml two directories up, as written, and validate both as pull does."""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from armbench.suites.diagnostics import Diagnostic, has_errors, render
from armbench.suites.model import Suite, Task
from armbench.suites.validate import parse_aliases, parse_suite, parse_task_advised

__all__ = ["TaskFiles", "TryStopped", "load_task_files"]


class TryStopped(Exception):
    """The try cannot go on; `message` says why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class TaskFiles(msgspec.Struct, frozen=True, kw_only=True):
    """A valid task and its suite, read from the files as they are on disk."""

    task_id: str
    """The task file's name without `.yaml`."""
    task: Task
    """The decoded task."""
    suite: Suite
    """The decoded suite."""
    warnings: list[str]
    """Rendered warnings of both files, for people."""


def load_task_files(task_file: Path, cwd: Path) -> TaskFiles:
    """The task and its suite, or `TryStopped` with every diagnostic (file and line) pull would give."""
    task_id = task_file.name.removesuffix(".yaml")
    path = task_file if task_file.is_absolute() else cwd / task_file
    shown, suite_shown = str(task_file), os.path.normpath(task_file.parent.parent / "suite.yaml")
    head = f'Task "{task_id}" could not be tried: '
    if not task_file.name.endswith(".yaml") or path.resolve().parent.name != "tasks":
        raise TryStopped(f"{head}{shown} is not a tasks/<id>.yaml file of a suite directory, so pull "
                         "would not read it. Move it to benchmarks/<suite>/tasks/<id>.yaml.")
    suite_dir = path.resolve().parent.parent
    task_text = _read(path, shown, head)
    suite_text = _read(suite_dir / "suite.yaml", suite_shown, head, what="its suite.yaml")
    suite, suite_found = parse_suite(suite_text, file=suite_shown, aliases=_alias_names(suite_dir),
                                     dir_name=suite_dir.name)
    task, task_found, advice = parse_task_advised(task_text, file=shown, task_id=task_id)
    found = [*suite_found, *task_found]
    if suite is None or task is None or has_errors(found):
        lines = "\n".join(render(d) for d in found)
        raise TryStopped(f"{head}its files are not valid, as pull would report them:\n{lines}")
    return TaskFiles(task_id=task_id, task=task, suite=suite, warnings=_rendered([*found, *advice]))


def _read(path: Path, shown: str, head: str, what: str = "the task file") -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise TryStopped(f"{head}{what} {shown} could not be read ({error.strerror}). A task file is "
                         "benchmarks/<suite>/tasks/<id>.yaml, with the suite's suite.yaml two "
                         "directories up from it.") from None


def _alias_names(suite_dir: Path) -> list[str] | None:
    """The team's alias names, for pull's model-name warning, when the team repo's root is found."""
    for root in (suite_dir.parent.parent, suite_dir.parent.parent.parent):
        if (root / "armbench.yaml").is_file():
            aliases_file = root / "models" / "aliases.yaml"
            if not aliases_file.is_file():
                return []
            aliases, _ = parse_aliases(aliases_file.read_bytes(), file="models/aliases.yaml")
            return sorted(aliases.aliases) if aliases is not None else []
    return None


def _rendered(found: list[Diagnostic]) -> list[str]:
    return [render(d) for d in found if d.severity == "warning"]
