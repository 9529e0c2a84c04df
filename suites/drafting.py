"""How a fix commit's tests become a task's check: which files are tests, how the project runs
them, what protect covers (pure: the facts come in from `edge.history` and the sandbox probe).

The runners read, from the project's files at the fix:
- Python: pytest when the sandbox's `python3` can import it, else unittest (a test file that
  imports pytest is then refused);
- Node: vitest or jest, named in package.json's dependencies, devDependencies or `test` script;
- Go: go.mod, the changed `_test.go` files' `Test` functions, per package;
- Rust: Cargo.toml and the changed integration tests under `tests/`.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Callable, Mapping, Sequence

import msgspec

from armbench.suites.protect_advice import unprotected_config

__all__ = ["CheckDraft", "NotDraftable", "ProjectFacts", "draft_check", "is_source_path",
           "is_test_path"]

_TEST_DIRS = {"test", "tests", "__tests__", "spec", "specs", "testing"}
_JS = r"\.(?:[cm]?[jt]sx?)$"
_TEST_NAMES = (re.compile(r"(^|/)test_[^/]*\.py$"), re.compile(r"_test\.py$"),
               re.compile(r"\.(?:test|spec)" + _JS), re.compile(r"_test\.go$"))
_CODE = re.compile(r"\.(?:py|[cm]?[jt]sx?|go|rs|java|kt|kts|rb|php|cs|c|cc|cpp|h|hpp|swift|scala|"
                   r"sh|bash|pl|pm|lua|ex|exs|erl|hs|ml|zig|dart|clj|vue|svelte|sql)$")
_PYTEST_IMPORT = re.compile(rb"^\s*(?:import|from)\s+pytest\b", re.MULTILINE)
_GO_TEST = re.compile(rb"^func\s+(Test\w+)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE)
_RUNNER_CONFIGS = ("pytest.ini", "conftest.py", "tox.ini", "setup.cfg", "package.json",
                   "package-lock.json", "vitest.config.ts", "vitest.config.js", "vitest.config.mjs",
                   "jest.config.js", "jest.config.ts", "jest.config.cjs", "go.mod", "go.sum",
                   "Cargo.toml", "Cargo.lock")
_HAND = ("Write the task by hand: check.run (the command that runs the fix's tests), check.protect "
         "and check.add, as docs/guide/history.md shows.")


class NotDraftable(Exception):
    """The commit cannot become a task by itself; `message` says why and what to write by hand."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ProjectFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What the drafting rules read of the project at the fix."""

    files: frozenset[str]
    """Every file path at the fix."""
    read: Mapping[str, bytes]
    """The bytes of the files the rules look into (package.json, the changed tests), by path."""
    pytest_importable: bool
    """Whether `python3 -c 'import pytest'` succeeds in armbench's sandbox."""


class CheckDraft(msgspec.Struct, frozen=True, kw_only=True):
    """A drafted `check`: the command, protect and add."""

    run: str
    protect: tuple[str, ...]
    add: tuple[str, ...]
    runner: str
    """`pytest`, `unittest`, `vitest`, `jest`, `go` or `cargo`."""


def is_test_path(path: str) -> bool:
    """Whether a path is a test file or lives in a test folder, by the common conventions."""
    parts = path.split("/")
    return any(p in _TEST_DIRS for p in parts[:-1]) or any(r.search(path) for r in _TEST_NAMES)


def is_source_path(path: str) -> bool:
    """Whether a path is code outside the tests (what a fix changes)."""
    return bool(_CODE.search(path)) and not is_test_path(path)


def draft_check(tests: Sequence[str], unchanged: Sequence[str], facts: ProjectFacts) -> CheckDraft:
    """The check that runs exactly `tests` (the test files the fix added or changed) the way the
    project runs them; `unchanged` are paths the fix left alone (runner configs among them are
    protected too). Raises NotDraftable naming the cause."""
    if not tests:
        raise NotDraftable("The commit adds or changes no test file, so there is no test to check "
                           f"a fix with. {_HAND}")
    for kind, drafter in _DRAFTERS:
        if kind(tests, facts):
            run, runner = drafter(tests, facts)
            return CheckDraft(run=run, protect=_protect(tests, unchanged, facts, run), add=tuple(tests),
                              runner=runner)
    raise NotDraftable(f"armbench cannot tell how this project runs {_listed(tests)}: it reads "
                       "pytest or unittest (Python .py tests), vitest or jest in package.json (Node), "
                       f"go.mod (Go) and Cargo.toml (Rust integration tests). {_HAND}")


def _python(tests: Sequence[str], facts: ProjectFacts) -> bool:
    return any(t.endswith(".py") for t in tests)


def _draft_python(tests: Sequence[str], facts: ProjectFacts) -> tuple[str, str]:
    modules = [t for t in tests if re.search(r"(^|/)(test_[^/]*|[^/]*_test)\.py$", t)]
    if not modules:
        raise NotDraftable(f"The commit changes {_listed(tests)} but no test module (test_*.py or "
                           f"*_test.py) to run. {_HAND}")
    if facts.pytest_importable:
        return f"python3 -m pytest -q -p no:cacheprovider {_quoted(modules)}", "pytest"
    uses = [t for t in modules if _PYTEST_IMPORT.search(facts.read.get(t, b""))]
    if uses:
        raise NotDraftable(f"{_listed(uses)} import pytest, and python3 in armbench's sandbox cannot "
                           "import pytest. Install pytest where the sandbox's python3 finds it (or "
                           f"in the suite's setup), or: {_HAND}")
    dotted = [t.removesuffix(".py").replace("/", ".") for t in modules]
    if not all(part.isidentifier() for name in dotted for part in name.split(".")):
        raise NotDraftable(f"unittest cannot import {_listed(modules)} by module name. {_HAND}")
    return f"python3 -m unittest -q {_quoted(dotted)}", "unittest"


def _node(tests: Sequence[str], facts: ProjectFacts) -> bool:
    return "package.json" in facts.files and any(re.search(_JS, t) for t in tests)


def _draft_node(tests: Sequence[str], facts: ProjectFacts) -> tuple[str, str]:
    try:
        manifest = json.loads(facts.read.get("package.json", b"{}"))
    except ValueError:
        raise NotDraftable(f"package.json at the fix is not valid JSON. {_HAND}") from None
    named = set()
    for key in ("dependencies", "devDependencies"):
        named |= set(manifest.get(key) or {}) if isinstance(manifest.get(key), dict) else set()
    script = str((manifest.get("scripts") or {}).get("test", "")) if isinstance(manifest, dict) else ""
    files = [t for t in tests if re.search(_JS, t)]
    if "vitest" in named or "vitest" in script:
        return f"npx vitest run {_quoted(files)}", "vitest"
    if "jest" in named or "jest" in script:
        return f"npx jest {_quoted(files)}", "jest"
    raise NotDraftable("package.json names neither vitest nor jest (in dependencies, "
                       f"devDependencies or the test script), so armbench cannot run {_listed(files)}. "
                       f"{_HAND}")


def _go(tests: Sequence[str], facts: ProjectFacts) -> bool:
    return "go.mod" in facts.files and any(t.endswith("_test.go") for t in tests)


def _draft_go(tests: Sequence[str], facts: ProjectFacts) -> tuple[str, str]:
    by_package: dict[str, list[str]] = {}
    for test in (t for t in tests if t.endswith("_test.go")):
        names = [m.decode() for m in _GO_TEST.findall(facts.read.get(test, b""))]
        by_package.setdefault(posixpath.dirname(test) or ".", []).extend(names)
    empty = [p for p, names in by_package.items() if not names]
    if empty:
        raise NotDraftable(f"The changed _test.go files in {_listed(empty)} hold no Test function. {_HAND}")
    runs = [f"go test {'./' + p if p != '.' else '.'} -run "
            + shlex.quote("^(" + "|".join(sorted(set(names))) + ")$")
            for p, names in sorted(by_package.items())]
    return " && ".join(runs), "go"


def _rust(tests: Sequence[str], facts: ProjectFacts) -> bool:
    return "Cargo.toml" in facts.files and any(re.fullmatch(r"tests/[^/]+\.rs", t) for t in tests)


def _draft_rust(tests: Sequence[str], facts: ProjectFacts) -> tuple[str, str]:
    names = [posixpath.basename(t).removesuffix(".rs") for t in tests if re.fullmatch(r"tests/[^/]+\.rs", t)]
    return "cargo test " + " ".join(f"--test {shlex.quote(n)}" for n in names), "cargo"


_Kind = Callable[[Sequence[str], ProjectFacts], bool]
_Drafter = Callable[[Sequence[str], ProjectFacts], tuple[str, str]]
_DRAFTERS: tuple[tuple[_Kind, _Drafter], ...] = (
    (_go, _draft_go), (_rust, _draft_rust), (_node, _draft_node), (_python, _draft_python))


def _protect(tests: Sequence[str], unchanged: Sequence[str], facts: ProjectFacts,
             run: str = "") -> tuple[str, ...]:
    """The test folders (`tests/**`), or the test-file pattern beside the code (`src/*.test.ts`),
    plus the runner's configuration files the fix left alone, plus every file `run`'s runner
    reads or would run in place of a module that protect would leave open (what `try`'s
    `protect_weak` names, `suites.protect_advice`), where the fix does not change it: so a
    fresh draft draws no warning, and a file the fix changes is never put back."""
    patterns: list[str] = []
    for test in tests:
        parts = test.split("/")
        folders = [i for i, p in enumerate(parts[:-1]) if p in _TEST_DIRS]
        if folders:
            pattern = "/".join(parts[: folders[0] + 1]) + "/**"
        else:
            pattern = posixpath.join(posixpath.dirname(test), _name_pattern(parts[-1]))
        if pattern not in patterns:
            patterns.append(pattern)
    left = set(unchanged)
    patterns += [c for c in _RUNNER_CONFIGS if c in facts.files and c in left and c not in patterns]
    for _runner, reads, _how in unprotected_config(run, patterns) if run else ():
        for read in reads:
            name = read.rstrip("/")
            changed = name in facts.files and name not in left  # the fix's own: never put back
            entry = f"{name}/**" if read.endswith("/") else name
            inside = read.endswith("/") and any(f.startswith(f"{name}/") and f not in left
                                                for f in facts.files)
            if not changed and not inside and entry not in patterns:
                patterns.append(entry)
    return tuple(patterns)


def _name_pattern(name: str) -> str:
    for pattern, glob in ((r"^test_.*\.py$", "test_*.py"), (r"_test\.py$", "*_test.py"),
                          (r"_test\.go$", "*_test.go")):
        if re.search(pattern, name):
            return glob
    found = re.search(r"\.(test|spec)(\.[^.]+)$", name)
    return f"*.{found.group(1)}{found.group(2)}" if found else name


def _quoted(items: Sequence[str]) -> str:
    return " ".join(shlex.quote(i) for i in items)


def _listed(items: Sequence[str]) -> str:
    shown = list(items[:5]) + ([f"{len(items) - 5} more"] if len(items) > 5 else [])
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"
