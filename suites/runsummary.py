"""How many tests a check ran, from its test runner's own summary. Pure: it reads text it is given.

A check that exits 0 having run no test (every test skipped by a planted `conftest.py`, all of
them deselected, `Ran 0 tests ... OK`) decided nothing. The runners armbench reads: pytest,
unittest, vitest, jest, `go test` and `cargo test`; for any other output the count is unknown
(None), and the exit code alone decides, as before.
"""

from __future__ import annotations

import re

__all__ = ["NoTestRan", "no_test_ran"]


class NoTestRan:
    """What a runner printed that says it ran no test (the line, for people)."""

    __slots__ = ("runner", "said")

    def __init__(self, runner: str, said: str) -> None:
        self.runner = runner
        """pytest, unittest, vitest, jest, go test or cargo test."""
        self.said = said
        """The runner's own summary line."""

    def __repr__(self) -> str:
        return f"NoTestRan({self.runner!r}, {self.said!r})"


_COLOUR = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PYTEST_LINE = re.compile(r"^=*\s*(?P<body>(?:\d+ \w+(?:, )?)+|no tests ran)(?: in [\d.]+s.*)?\s*=*$")
_PYTEST_PART = re.compile(r"(\d+) (passed|failed|errors?|xfailed|xpassed|skipped|deselected|warnings?"
                          r"|rerun)")
_PYTEST_RAN = {"passed", "failed", "error", "errors", "xfailed", "xpassed"}
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s$")
_UNITTEST_END = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$")
_VITEST = re.compile(r"^\s*Tests\s+(?P<body>.*?)\s*\((\d+)\)\s*$")
_JEST = re.compile(r"^Tests:\s+(?P<body>.*\d+ total)\s*$")
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|todo|pending|total)")
_CARGO = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed;")
_GO_PACKAGE = re.compile(r"^(?:ok|FAIL|\?)\s+[\w./-]+\s+(?:[\d.]+s|\(cached\)|\[no test files\])")


def no_test_ran(output: str) -> NoTestRan | None:
    """What the runner said, when the check's output holds a runner's summary and it counts no
    test that ran (passed or failed); None when it ran some, or when no summary is recognised."""
    lines = [line.strip() for line in _COLOUR.sub("", output).splitlines()]
    for runner, read in _RUNNERS:
        found = read(lines)
        if found is not None:
            ran, said = found
            return NoTestRan(runner, said) if ran == 0 else None
    return None


def _pytest(lines: list[str]) -> tuple[int, str] | None:
    """pytest's last summary line: `3 passed, 1 skipped in 0.1s`, `no tests ran in 0.01s`."""
    for line in reversed(lines):
        match = _PYTEST_LINE.match(line)
        if match is None or (" in " not in line and "no tests ran" not in line):
            continue
        body = match["body"]
        if body == "no tests ran":
            return 0, line
        counts = {kind: int(n) for n, kind in _PYTEST_PART.findall(body)}
        if not counts:
            continue
        return sum(n for kind, n in counts.items() if kind in _PYTEST_RAN), line
    return None


def _unittest(lines: list[str]) -> tuple[int, str] | None:
    """unittest's `Ran 3 tests in 0.001s`, then `OK (skipped=3)` or `FAILED (failures=1)`."""
    for at in range(len(lines) - 1, -1, -1):
        match = _UNITTEST_RAN.match(lines[at])
        if match is None:
            continue
        ran = int(match[1])
        end = next((_UNITTEST_END.match(x) for x in lines[at + 1:] if _UNITTEST_END.match(x)), None)
        skipped = 0
        if end is not None and end[2]:
            skipped = sum(int(n) for key, n in re.findall(r"(\w+)=(\d+)", end[2]) if key == "skipped")
        return ran - skipped, " ".join(filter(None, [lines[at], end[0] if end else None]))
    return None


def _vitest(lines: list[str]) -> tuple[int, str] | None:
    """vitest's `Tests  1 failed | 2 passed (3)`; `No test files found` is none."""
    return _counted(lines, _VITEST, "No test files found")


def _jest(lines: list[str]) -> tuple[int, str] | None:
    """jest's `Tests:       1 failed, 2 passed, 3 total`; `No tests found` is none."""
    return _counted(lines, _JEST, "No tests found")


def _counted(lines: list[str], summary: re.Pattern[str], none: str) -> tuple[int, str] | None:
    """The last line that says there was no test, or that counts them: passed plus failed."""
    for line in reversed(lines):
        if line.startswith(none):
            return 0, line
        match = summary.match(line)
        if match is not None and _COUNT.search(match["body"]):
            counts = {kind: int(n) for n, kind in _COUNT.findall(match["body"])}
            return counts.get("passed", 0) + counts.get("failed", 0), line
    return None


def _cargo(lines: list[str]) -> tuple[int, str] | None:
    """Each test binary's `test result: ok. 3 passed; 0 failed; 1 ignored; ...`, summed."""
    found = [(int(m[1]) + int(m[2]), line) for line in lines if (m := _CARGO.match(line))]
    if not found:
        return None
    return sum(n for n, _ in found), found[-1][1]


def _go(lines: list[str]) -> tuple[int, str] | None:
    """`go test`: a line per package, `ok  pkg 0.1s [no tests to run]` or `?  pkg [no test
    files]` when it ran none of that package's tests. Only "none" is known for sure: a package
    that ran tests prints no count without `-v` (then 1 stands for "some")."""
    packages = [line for line in lines if _GO_PACKAGE.match(line)]
    if not packages:
        return None
    if all(line.endswith(("[no tests to run]", "[no test files]")) for line in packages):
        return 0, packages[-1]
    return 1, packages[-1]


_RUNNERS = (("pytest", _pytest), ("unittest", _unittest), ("vitest", _vitest), ("jest", _jest),
            ("cargo test", _cargo), ("go test", _go))
