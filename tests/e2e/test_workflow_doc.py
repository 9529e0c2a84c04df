"""docs/guide/workflow.md runs as written on the bundled example (a team override without strict
runs best-effort through `workflow start`; with strict it is refused until a sandbox is declared),
and its zh-CN page shows the same blocks (only the prose is translated).

Conventions (stated in the page's own comment): `sh` blocks run with bash in the folder the
previous block ended in, with the variables it exported; each line of a `text` block must appear,
in order, in the output (stdout and stderr) of the `sh` block before it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from guides import ROOT, fenced, guide_env, run_page

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

GUIDE = ROOT / "docs" / "guide" / "workflow.md"
ZH = ROOT / "docs" / "guide" / "zh-CN" / "workflow.md"


def test_the_workflow_guide_runs_as_written(tmp_path: Path) -> None:
    work, env = guide_env(tmp_path, home=tmp_path / "member")
    ran = run_page(GUIDE, work, env, tmp_path / "state.sh")
    assert ran == 3


def test_the_zh_cn_page_shows_the_same_blocks() -> None:
    assert fenced(ZH) == fenced(GUIDE)


def test_the_guide_names_every_generic_key_the_specification_lists() -> None:
    text = GUIDE.read_text()
    for key in ("`finally`", "`workflow: { from: <step> }`", "<name>: workflow", "<name>: json",
                "`done.outputs`", "--timeout <duration>", "`workspace: { clone }`", "`tool:`",
                "`model: { name, effort }`", "`on_limit: end_turn`", "strict: true",
                "`permissions: unattended`", "`can.unattended`", "`scorers.sampling: all`"):
        assert key in text, key
