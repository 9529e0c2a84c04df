"""Running a guide page as written: its fenced blocks, one `sh` block at a time, and its `text`
blocks held to what the `sh` block before printed, in the environment `guide_env` builds. The
executed guides (authoring, auditing, team assets, dashboard, scale-out) share these rules, which
each page states in its own comment:

- an `sh` block runs with bash in the folder the previous block ended in, with the variables it
  exported;
- each line of a `text` block appears, in order, in the output (stdout and stderr) of the `sh`
  block before it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["BLOCK", "ROOT", "assert_lines_in_order", "fenced", "guide_env", "run_block", "run_page"]

BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
ROOT = Path(__file__).resolve().parents[1]


def fenced(page: Path) -> list[tuple[str, str, str]]:
    """(kind, info, body) of every fenced block of the page, in page order."""
    return [(m[1], m[2].strip(), m[3]) for m in BLOCK.finditer(page.read_text())]


def guide_env(tmp_path: Path, *, base: Mapping[str, str] | None = None,
              home: Path | None = None) -> tuple[Path, dict[str, str]]:
    """The work folder a guide starts in and the environment its blocks run with, both under
    `tmp_path`: `base` (by default the caller's environment without ARMBENCH_ and GIT_
    variables), plus ARMBENCH_SRC (this checkout, for examples/setup.sh), ARMBENCH_HOME
    (`tmp_path/home`), TMPDIR (`tmp_path/tmp`) and the venv's bin, where `armbench` is, first on
    PATH; with `home`, HOME too (the folder is made, so a test can see what the guide left in it)."""
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    env = dict(base) if base is not None else {
        k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "GIT_"))}
    env.update(ARMBENCH_SRC=str(ROOT), ARMBENCH_HOME=str(tmp_path / "home"), TMPDIR=str(tmp),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    if home is not None:
        home.mkdir()
        env["HOME"] = str(home)
    return work, env


def run_block(body: str, cwd: Path, env: dict[str, str], state: Path,
              timeout: float = 300) -> tuple[int, str, Path]:
    """Run one sh block with the variables the previous one exported (kept in `state`); return
    its exit code, its output and the folder it ended in."""
    where = state.with_suffix(".cwd")
    script = (f"set -euo pipefail\n[ -f '{state}' ] && source '{state}'\n"
              f"trap 'pwd > \"{where}\"; export -p > \"{state}\"' EXIT\n{body}")
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, text=True, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, Path(where.read_text().strip())


def assert_lines_in_order(expected: str, output: str) -> None:
    """Each non-blank line of `expected` (its surrounding spaces aside) is in `output`, in order."""
    at = 0
    for line in filter(None, (line.strip() for line in expected.splitlines())):
        found = output.find(line, at)
        assert found >= 0, f"missing, in order: {line!r}\n--- output\n{output}"
        at = found + len(line)


def run_page(page: Path, cwd: Path, env: dict[str, str], state: Path) -> int:
    """Run every `sh` block of the page in order, each expected to exit 0, and hold each `text`
    block to the output of the `sh` block before it; how many `sh` blocks ran."""
    output, ran = None, 0
    for kind, _info, body in fenced(page):
        if kind == "sh":
            code, output, cwd = run_block(body, cwd, env, state)
            assert code == 0, f"exit {code}:\n{body}\n--- output\n{output}"
            ran += 1
        elif kind == "text":
            assert output is not None, "a text block before any sh block"
            assert_lines_in_order(body, output)
    return ran
