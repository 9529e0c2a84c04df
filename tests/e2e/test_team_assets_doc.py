"""docs/guide/team-assets.md runs as written on the bundled example, and its zh-CN page shows the
same blocks (only the prose is translated).

Conventions (stated in the page's own comment): `sh` blocks run with bash in the folder the
previous block ended in, with the variables it exported; each line of a `text` block must appear,
in order, in the output (stdout and stderr) of the `sh` block before it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from guides import assert_lines_in_order, fenced, run_block

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide" / "team-assets.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "team-assets.md"






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
    for kind, _info, body in fenced(GUIDE):
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
    assert fenced(ZH) == fenced(GUIDE)
