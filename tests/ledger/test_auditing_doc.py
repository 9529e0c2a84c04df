"""docs/guide/auditing.md (and its zh-CN page, whose blocks are the same) runs as written on the
bundled example (examples/setup.sh).

Conventions (stated in the page's own comment): `sh` blocks run with bash in the folder the
previous block ended in, with the variables it exported; `sh exit=1` must exit 1; each line of a
`text` block must appear, in order, in the output (stdout and stderr) of the `sh` block before it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from guides import ROOT, assert_lines_in_order, fenced, guide_env, run_block

pytestmark = pytest.mark.slow  # the whole auditing guide on the bundled example

GUIDE = ROOT / "docs" / "guide" / "auditing.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "auditing.md"


@pytest.mark.parametrize("page", [GUIDE, ZH], ids=["en", "zh-CN"])
def test_the_auditing_guide_runs_as_written(page: Path, tmp_path: Path) -> None:
    work, env = guide_env(tmp_path)
    cwd, output, ran = work, None, 0
    for kind, info, body in fenced(page):
        if kind == "sh":
            expected = int(info.removeprefix("exit=")) if info.startswith("exit=") else 0
            code, output, cwd = run_block(body, cwd, env, tmp_path / "state.sh")
            assert code == expected, f"exit {code}, expected {expected}:\n{body}\n--- output\n{output}"
            ran += 1
        elif kind == "text":
            assert output is not None, "a text block before any sh block"
            assert_lines_in_order(body, output)
    assert ran == 17


def test_the_line_check_fails_on_a_missing_or_misordered_line() -> None:
    assert_lines_in_order("a\nc\n", "a b c")
    for wrong in ("a\nd\n", "c\na\n"):
        try:
            assert_lines_in_order(wrong, "a b c")
        except AssertionError:
            continue
        raise AssertionError(f"{wrong!r} passed")
