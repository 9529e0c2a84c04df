"""docs/guide/authoring.md (and its zh-CN page, whose blocks are the same) runs as written: its
shell blocks, files and printed lines, in order.

Conventions (stated in the page's own comment): `sh` blocks run with bash in the folder the
previous block ended in, `sh exit=1` must exit 1, a `yaml title="<path>"` block is written to
that path relative to the project checkout, and each line of a `text` block must appear, in
order, in the output (stdout and stderr) of the `sh` block before it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from guides import ROOT, assert_lines_in_order, fenced, guide_env, run_block

from e2e.conftest import base_env, git
from e2e.test_schema import problems

pytestmark = pytest.mark.e2e

GUIDE = ROOT / "docs" / "guide" / "authoring.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "authoring.md"
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$", re.MULTILINE)


@pytest.mark.parametrize("page", [GUIDE, ZH], ids=["en", "zh-CN"])
def test_the_authoring_guide_runs_as_written(page: Path, tmp_path: Path) -> None:
    work, env = guide_env(tmp_path, base=base_env(tmp_path / "home", tmp_path / "out"))
    cwd, last_output, ran, written = work, None, 0, 0
    for kind, info, body in fenced(page):
        if kind == "sh":
            expected = int(info.removeprefix("exit=")) if info.startswith("exit=") else 0
            code, last_output, cwd = run_block(body, cwd, env, tmp_path / "cwd")
            assert code == expected, f"exit {code}, expected {expected}:\n{body}\n--- output\n{last_output}"
            ran += 1
        elif kind == "yaml" and (title := re.fullmatch(r'title="([^"]+)"', info)):
            target = (work / "calc" / title[1]).resolve()
            target.write_text(body)
            schema_file = target.parent / MODELINE.search(body)[1]  # type: ignore[index]
            schema = yaml.safe_load(schema_file.read_text())
            assert problems(yaml.safe_load(body), schema, schema) == [], title[1]
            written += 1
        elif kind == "text":
            assert last_output is not None, "a text block before any sh block"
            assert_lines_in_order(body, last_output)
    assert (ran, written) == (8, 3)  # 8: the last two draft and harvest from the history
    checkout = work / "calc"
    assert git(checkout, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (checkout / ".armbench").exists() and not (tmp_path / "home").exists()
