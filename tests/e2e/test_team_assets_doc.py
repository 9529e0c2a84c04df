"""docs/guide/team-assets.md runs as written on the bundled example, and its zh-CN page shows the
same blocks (only the prose is translated).

Conventions (stated in the page's own comment): `sh` blocks run with bash in the folder the
previous block ended in, with the variables it exported; each line of a `text` block must appear,
in order, in the output (stdout and stderr) of the `sh` block before it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from guides import ROOT, fenced, guide_env, run_page

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GUIDE = ROOT / "docs" / "guide" / "team-assets.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "team-assets.md"


def test_the_team_assets_guide_runs_as_written(tmp_path: Path) -> None:
    work, env = guide_env(tmp_path, home=tmp_path / "member")
    ran = run_page(GUIDE, work, env, tmp_path / "state.sh")
    assert ran == 2
    assert list((tmp_path / "member").iterdir()) in ([], [tmp_path / "member" / ".cache"])


def test_the_zh_cn_page_shows_the_same_blocks() -> None:
    assert fenced(ZH) == fenced(GUIDE)
