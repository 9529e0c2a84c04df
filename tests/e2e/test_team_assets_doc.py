"""docs/guide/team-assets.md runs as written on the bundled example, and its zh-CN page shows the
same blocks (only the prose is translated).

Conventions (stated in the page's own comment): `sh` blocks run with bash in the folder the
previous block ended in, with the variables it exported; each line of a `text` block must appear,
in order, in the output (stdout and stderr) of the `sh` block before it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from e2e.test_authoring_doc import BLOCK, assert_lines_in_order

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "team-assets.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "team-assets.md"


def blocks(page: Path) -> list[tuple[str, str, str]]:
    """(kind, info, body) of every fenced block, in page order."""
    return [(m[1], m[2].strip(), m[3]) for m in BLOCK.finditer(page.read_text())]


def run_block(body: str, cwd: Path, env: dict[str, str], state: Path) -> tuple[int, str, Path]:
    """Run one sh block with the variables the previous one exported; its exit code, output and
    the folder it ended in."""
    where = state.with_suffix(".cwd")
    script = (f"set -euo pipefail\n[ -f '{state}' ] && source '{state}'\n"
              f"trap 'pwd > \"{where}\"; export -p > \"{state}\"' EXIT\n{body}")
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, text=True, timeout=300,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, Path(where.read_text().strip())


def test_the_team_assets_guide_runs_as_written(tmp_path: Path) -> None:
    work, tmp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "GIT_"))}
    env.update(ARMBENCH_SRC=str(ROOT), ARMBENCH_HOME=str(tmp_path / "home"), TMPDIR=str(tmp),
               HOME=str(tmp_path / "member"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    (tmp_path / "member").mkdir()
    cwd, output, ran = work, None, 0
    for kind, _info, body in blocks(GUIDE):
        if kind == "sh":
            code, output, cwd = run_block(body, cwd, env, tmp_path / "state.sh")
            assert code == 0, f"exit {code}:\n{body}\n--- output\n{output}"
            ran += 1
        elif kind == "text":
            assert output is not None, "a text block before any sh block"
            assert_lines_in_order(body, output)
    assert ran == 2
    assert list((tmp_path / "member").iterdir()) in ([], [tmp_path / "member" / ".cache"])


def test_the_zh_cn_page_shows_the_same_blocks() -> None:
    assert blocks(ZH) == blocks(GUIDE)
