"""docs/guide/auditing.md runs as written on the bundled example (examples/setup.sh).

Conventions (stated in the page's own comment): `sh` blocks run with bash in the folder the
previous block ended in, with the variables it exported; `sh exit=1` must exit 1; each line of a
`text` block must appear, in order, in the output (stdout and stderr) of the `sh` block before it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the whole auditing guide on the bundled example

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "auditing.md"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str, str]]:
    """(kind, info, body) of every fenced block, in page order."""
    return [(m[1], m[2].strip(), m[3]) for m in BLOCK.finditer(GUIDE.read_text())]


def run_block(body: str, cwd: Path, env: dict[str, str], state: Path) -> tuple[int, str, Path]:
    """Run one sh block; return its exit code, its output and the folder it ended in."""
    where = state.with_suffix(".cwd")
    script = (f"set -euo pipefail\n[ -f '{state}' ] && source '{state}'\n"
              f"trap 'pwd > \"{where}\"; export -p > \"{state}\"' EXIT\n{body}")
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, text=True, timeout=300,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, Path(where.read_text().strip())


def assert_lines_in_order(expected: str, output: str) -> None:
    at = 0
    for line in filter(None, (line.rstrip() for line in expected.splitlines())):
        found = output.find(line, at)
        assert found >= 0, f"missing, in order: {line!r}\n--- output\n{output}"
        at = found + len(line)


def test_the_auditing_guide_runs_as_written(tmp_path: Path) -> None:
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "GIT_"))}
    env.update(ARMBENCH_SRC=str(ROOT), ARMBENCH_HOME=str(tmp_path / "home"), TMPDIR=str(tmp),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    cwd, output, ran = work, None, 0
    for kind, info, body in blocks():
        if kind == "sh":
            expected = int(info.removeprefix("exit=")) if info.startswith("exit=") else 0
            code, output, cwd = run_block(body, cwd, env, tmp_path / "state.sh")
            assert code == expected, f"exit {code}, expected {expected}:\n{body}\n--- output\n{output}"
            ran += 1
        elif kind == "text":
            assert output is not None, "a text block before any sh block"
            assert_lines_in_order(body, output)
    assert ran == 12


def test_the_line_check_fails_on_a_missing_or_misordered_line() -> None:
    assert_lines_in_order("a\nc\n", "a b c")
    for wrong in ("a\nd\n", "c\na\n"):
        try:
            assert_lines_in_order(wrong, "a b c")
        except AssertionError:
            continue
        raise AssertionError(f"{wrong!r} passed")
