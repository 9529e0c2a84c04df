"""docs/guide/scale-out.md runs as written on the bundled example with a private PostgreSQL
cluster, and its zh-CN page has the same commands.

Conventions (the page's own comment): `sh` blocks run with bash in the folder the previous
block ended in, with the variables it exported; each line of a `text` block must appear, in
order, in the output of the `sh` block before it; `console` blocks are not run.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from guides import ROOT, assert_lines_in_order, fenced, guide_env, run_block

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GUIDE = ROOT / "docs" / "guide" / "scale-out.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "scale-out.md"


def test_the_zh_cn_page_runs_the_same_commands() -> None:
    english = [body for kind, _, body in fenced(GUIDE) if kind in ("sh", "text")]
    assert english and [body for kind, _, body in fenced(ZH) if kind in ("sh", "text")] == english


def test_the_scale_out_guide_runs_as_written(tmp_path: Path) -> None:
    work, env = guide_env(tmp_path)
    cwd, output, ran = work, None, 0
    try:
        for kind, _, body in fenced(GUIDE):
            if kind == "sh":
                code, output, cwd = run_block(body, cwd, env, tmp_path / "state.sh", timeout=600)
                assert code == 0, f"exit {code}:\n{body}\n--- output\n{output}"
                ran += 1
            elif kind == "text":
                assert output is not None, "a text block before any sh block"
                assert_lines_in_order(body, output)
    finally:  # the cluster stops even when a block failed
        subprocess.run(["bash", str(ROOT / "scripts" / "postgres.sh"), "stop",
                        str(work / "example" / "pg")], capture_output=True, check=False)
    assert ran == 4
