"""docs/guide/dashboard.md runs as written on the bundled example, and its zh-CN page keeps the
same commands and outputs; every screenshot either page shows exists.

Conventions (stated in the page's own comment): `sh` blocks run with bash in the folder the
previous block ended in, with the variables it exported; each line of a `text` block must appear,
in order, in the output (stdout and stderr) of the `sh` block before it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from guides import ROOT, assert_lines_in_order, fenced, guide_env, run_block

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GUIDE = ROOT / "docs" / "guide" / "dashboard.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "dashboard.md"
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def blocks(page: Path, kinds: tuple[str, ...] = ("sh", "text")) -> list[tuple[str, str]]:
    return [(kind, body) for kind, _, body in fenced(page) if kind in kinds]


def test_the_dashboard_guide_runs_as_written(tmp_path: Path) -> None:
    work, env = guide_env(tmp_path)
    cwd, output, ran = work, None, 0
    for kind, body in blocks(GUIDE):
        if kind == "sh":
            code, output, cwd = run_block(body, cwd, env, tmp_path / "state.sh")
            assert code == 0, f"exit {code}:\n{body}\n--- output\n{output}"
            ran += 1
        else:
            assert output is not None, "a text block before any sh block"
            assert_lines_in_order(body, output)
    assert ran == 2
    assert (cwd / "site" / "index.html").read_bytes().startswith(b"<!doctype html>")


def test_the_zh_cn_page_has_the_same_commands_and_outputs() -> None:
    assert blocks(ZH, ("sh", "text", "console")) == blocks(GUIDE, ("sh", "text", "console"))


@pytest.mark.parametrize("page", [GUIDE, ZH], ids=["en", "zh-CN"])
def test_every_screenshot_the_page_shows_is_there(page: Path) -> None:
    images = IMAGE.findall(page.read_text())
    assert len(images) == 5  # the runs list, explain, a trial's evidence, history, compare
    assert all((page.parent / image).is_file() for image in images)
