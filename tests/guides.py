"""Running a guide page as written: its fenced blocks, one `sh` block at a time, and its `text`
blocks held to what the `sh` block before printed. The executed guides (authoring, auditing,
team assets, dashboard) share these rules, which each page states in its own comment:

- an `sh` block runs with bash in the folder the previous block ended in, with the variables it
  exported;
- each line of a `text` block appears, in order, in the output (stdout and stderr) of the `sh`
  block before it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["BLOCK", "assert_lines_in_order", "fenced", "run_block"]

BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def fenced(page: Path) -> list[tuple[str, str, str]]:
    """(kind, info, body) of every fenced block of the page, in page order."""
    return [(m[1], m[2].strip(), m[3]) for m in BLOCK.finditer(page.read_text())]


def run_block(body: str, cwd: Path, env: dict[str, str], state: Path) -> tuple[int, str, Path]:
    """Run one sh block with the variables the previous one exported (kept in `state`); return
    its exit code, its output and the folder it ended in."""
    where = state.with_suffix(".cwd")
    script = (f"set -euo pipefail\n[ -f '{state}' ] && source '{state}'\n"
              f"trap 'pwd > \"{where}\"; export -p > \"{state}\"' EXIT\n{body}")
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, text=True, timeout=300,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, Path(where.read_text().strip())


def assert_lines_in_order(expected: str, output: str) -> None:
    """Each non-blank line of `expected` (its surrounding spaces aside) is in `output`, in order."""
    at = 0
    for line in filter(None, (line.strip() for line in expected.splitlines())):
        found = output.find(line, at)
        assert found >= 0, f"missing, in order: {line!r}\n--- output\n{output}"
        at = found + len(line)
