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

__all__ = ["RUNNERS", "Runner", "path_first_open", "unprotected_config", "warn_weak_protect"]

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


_PYTHONPATH = re.compile(r"(?<![\w-])PYTHONPATH=(?:\"([^\"]*)\"|'([^']*)'|(\S*))")
"""`PYTHONPATH=src:lib` before a command: Python puts those folders before the standard library."""
_TEST_FILE = re.compile(r"(?:test_[^/]*|[^/]*_test|conftest)\.py")
"""A file pytest imports from its folder: its default `python_files`, and `conftest.py`."""
_PROBE = "difflib"
"""A standard-library module's name, to ask protect whether a folder's new modules are covered."""


def _folder(path: str) -> str | None:
    """The literal folder of a path or pattern from the repo root (`tests/unit/test_a.py`:
    `tests/unit`; `tests/**`: `tests`); None at the root or where a glob starts sooner."""
    parts = path.strip("/").split("/")[:-1]
    stem = next((i for i, part in enumerate(parts) if any(c in part for c in "*?[")), len(parts))
    return "/".join(parts[:stem]) or None


def _shadow_open(folder: str, protect: Sequence[str]) -> bool:
    return not all(matches_any(protect, f"{folder}/{probe}")
                   for probe in (f"{_PROBE}.py", f"{_PROBE}/__init__.py"))


def path_first_open(run: str, protect: Sequence[str], tests: Sequence[str] = ()) -> list[str]:
    """The folders below the repo root that the check's Python puts in front of the standard
    library, where protect leaves new modules to the agent: armbench refuses a shadowing module
    only at the root. pytest puts the folder of each test file it collects there (its default
    `prepend` import mode, for a folder without `__init__.py`); the test files are those `tests`
    names (`check.add`'s) and protect's literal ones (`test_*.py`, `*_test.py`, `conftest.py`);
    and `PYTHONPATH=` before the command puts its folders there. In the order found."""
    found: dict[str, None] = {}
    if RUNNERS[0].command.search(run):
        for path in (*tests, *protect):
            if not _TEST_FILE.fullmatch(path.rsplit("/", 1)[-1]):
                continue
            if (folder := _folder(path)) is not None and _shadow_open(folder, protect):
                found[folder] = None
    for match in _PYTHONPATH.finditer(run):
        for entry in "".join(g or "" for g in match.groups()).split(":"):
            entry = entry.strip()
            if entry.startswith(("/", "$", "~", "..")):
                continue  # outside the clone: not the agent's to write
            folder = entry.removeprefix("./").strip("/")
            if folder not in ("", ".") and _shadow_open(folder, protect):
                found[folder] = None
    return list(found)


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
    tests = [entry if isinstance(entry, str) else entry.to for entry in task.check.add]
    if folders := path_first_open(task.check.run, task.check.protect, tests):
        them = "it" if len(folders) == 1 else "them"
        globs = [f"{folder}/**" for folder in folders]
        report.warning(
            "$.check.protect", "protect_weak",
            f"the check's Python puts {_listed([f + '/' for f in folders])} in front of the "
            "standard library on sys.path (pytest puts a test file's folder there, and "
            "PYTHONPATH its folders), and protect does not cover new modules in "
            f"{them}: a `{folders[0]}/{_PROBE}.py` the agent adds would be imported in place of "
            "the standard library's, and armbench refuses such a module only at the clone's "
            f"root. Add {_listed(globs)} to check.protect.")
