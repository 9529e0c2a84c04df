"""What a check's test runner reads that `check.protect` leaves to the agent: advice that `try`
and `review` give (pull and plan do not: it is a warning about the author's choice).

A check runs a test runner in the trial's clone, and the runner reads files beside the tests: a
root `conftest.py` and pytest's ini files, vitest's config, `package.json`'s scripts, a crate's
`build.rs`. One that protect does not cover is the agent's to write, and a root `conftest.py`
that skips every test passes a check that protects only `tests/**`. A protected path the
starting commit lacks is removed before the check, so protecting a file that is not there yet
is the fix. What protect cannot stop (an object whose `__eq__` is always true, `os._exit(0)` at
import) the authoring guide names, with its defence: a hidden test written by `check.add`.
Pure: the task's check in, warnings out."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from armbench.suites.findings import Findings
from armbench.suites.model import Task
from armbench.suites.pathspec import matches_any

__all__ = ["RUNNERS", "Runner", "unprotected_config", "warn_weak_protect"]

_JS = ("js", "mjs", "cjs", "ts", "mts", "cts")


@dataclass(frozen=True)
class Runner:
    """A test runner a check's command may start, and the files at the repo root it reads."""

    name: str
    command: re.Pattern[str]
    """Matches a check's command that runs it."""
    reads: tuple[str, ...]
    """Paths it reads; a `.*` ending stands for its JavaScript and TypeScript extensions."""


RUNNERS: tuple[Runner, ...] = (
    Runner("pytest", re.compile(r"(?<![\w.-])(pytest|py\.test)(?![\w-])"),
           ("conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini")),
    Runner("vitest", re.compile(r"(?<![\w.-])vitest(?![\w-])"),
           ("vitest.config.*", "vite.config.*", "vitest.workspace.*", "package.json")),
    Runner("jest", re.compile(r"(?<![\w.-])jest(?![\w-])"),
           ("jest.config.*", "babel.config.*", "package.json")),
    Runner("npm test", re.compile(r"(?<![\w.-])(npm|pnpm|yarn|bun)\s+(run\s+)?test\b"),
           ("package.json",)),
    Runner("go test", re.compile(r"(?<![\w.-])go\s+test\b"), ("go.mod", "go.work")),
    Runner("cargo", re.compile(r"(?<![\w.-])cargo\s+(\+\S+\s+)?(test|nextest)\b"),
           ("Cargo.toml", ".cargo/config.toml", "build.rs")),
)
"""The runners recognised, in the order their warnings are given."""

_PYTHON_M = re.compile(r"(?<![\w.-])python[0-9.]*\s+(?:-\w+\s+)*-m\s+([A-Za-z_][\w]*)")
"""`python -m <module>`: Python puts the current folder first on its path, so a `<module>.py`
or `<module>/` at the repo root runs in its place (unittest, pytest, anything)."""


def _parent_conftests(protect: Sequence[str]) -> tuple[str, ...]:
    """pytest also reads a `conftest.py` in every folder between the repo root and a test's
    folder: those of the folders above each protected folder (`a/b/tests/**`: `a/` and `a/b/`)."""
    found: dict[str, None] = {}
    for pattern in protect:
        parts = pattern.split("/")
        stem = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts))
        for depth in range(1, max(stem - 1, 0) + 1):
            found["/".join(parts[:depth]) + "/conftest.py"] = None
    return tuple(found)


def _candidates(read: str) -> list[str]:
    if read.endswith(".*"):
        return [f"{read[:-1]}{ext}" for ext in _JS]
    if read.endswith("/"):
        return [f"{read}__init__.py", f"{read}__main__.py"]
    return [read]


def unprotected_config(run: str, protect: Sequence[str]) -> list[tuple[str, list[str], str]]:
    """Each runner `run` starts, with the files at the repo root it reads that `protect` leaves
    open (any of a pattern's names open leaves the pattern open), and how it uses them (a
    sentence with `{}` for the files); runners with none open are left out. Paths are from the
    repo root."""
    found: list[tuple[str, list[str], str]] = []
    runners = [(r.name, r.reads + (_parent_conftests(protect) if r.name == "pytest" else ()),
                "reads {}") for r in RUNNERS if r.command.search(run)]
    for module in dict.fromkeys(_PYTHON_M.findall(run)):
        runners.append((f"python -m {module}", (f"{module}.py", f"{module}/"),
                        "would run {} in place of the module"))
    for name, reads, how in runners:
        open_ = [read for read in reads
                 if not all(matches_any(protect, c) for c in _candidates(read))]
        if open_:
            found.append((name, open_, how))
    return found


def _listed(paths: list[str], last: str = "and") -> str:
    quoted = [f"`{p}`" for p in paths]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} {last} {quoted[-1]}"


def warn_weak_protect(task: Task, report: Findings) -> None:
    """A warning at `check.protect` for each runner the check starts whose files protect leaves open."""
    if task.check is None:
        return
    for runner, paths, how in unprotected_config(task.check.run, task.check.protect):
        them = "it" if len(paths) == 1 else "them"
        report.warning(
            "$.check.protect", "protect_weak",
            f"the check runs {runner}, which "
            f"{how.format(_listed(paths, 'or' if 'would' in how else 'and'))} (paths from the repo "
            "root); protect does "
            f"not cover {them}, so the agent could write one that passes a check it should fail. "
            f"Add {them} to check.protect (a protected file the starting commit lacks is removed "
            "before the check). What protect cannot stop, a hidden test in check.add does: see "
            "\"Weak protection\" in the authoring guide.")
