"""docs/guide/scale-out.md runs as written on the bundled example with a private PostgreSQL
cluster, and its zh-CN page has the same commands.

Conventions (the page's own comment): `sh` blocks run with bash in the folder the previous
block ended in, with the variables it exported; each line of a `text` block must appear, in
order, in the output of the `sh` block before it; `console` blocks are not run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "scale-out.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "scale-out.md"
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(page: Path) -> list[tuple[str, str]]:
    """(kind, body) of every fenced block, in page order."""
    return [(m[1], m[3]) for m in BLOCK.finditer(page.read_text())]


def run_block(body: str, cwd: Path, env: dict[str, str], state: Path) -> tuple[int, str, Path]:
    where = state.with_suffix(".cwd")
    script = (f"set -euo pipefail\n[ -f '{state}' ] && source '{state}'\n"
              f"trap 'pwd > \"{where}\"; export -p > \"{state}\"' EXIT\n{body}")
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, text=True, timeout=600,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, Path(where.read_text().strip())


def assert_lines_in_order(expected: str, output: str) -> None:
    at = 0
    for line in filter(None, (line.rstrip() for line in expected.splitlines())):
        found = output.find(line, at)
        assert found >= 0, f"missing, in order: {line!r}\n--- output\n{output}"
        at = found + len(line)


def test_the_zh_cn_page_runs_the_same_commands() -> None:
    english = [body for kind, body in blocks(GUIDE) if kind in ("sh", "text")]
    assert english and [body for kind, body in blocks(ZH) if kind in ("sh", "text")] == english


def test_the_scale_out_guide_runs_as_written(tmp_path: Path) -> None:
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "GIT_"))}
    env.update(ARMBENCH_SRC=str(ROOT), ARMBENCH_HOME=str(tmp_path / "home"), TMPDIR=str(tmp),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    cwd, output, ran = work, None, 0
    try:
        for kind, body in blocks(GUIDE):
            if kind == "sh":
                code, output, cwd = run_block(body, cwd, env, tmp_path / "state.sh")
                assert code == 0, f"exit {code}:\n{body}\n--- output\n{output}"
                ran += 1
            elif kind == "text":
                assert output is not None, "a text block before any sh block"
                assert_lines_in_order(body, output)
    finally:  # the cluster stops even when a block failed
        subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "stop",
                        str(work / "example" / "pg")], capture_output=True, check=False)
    assert ran == 3
