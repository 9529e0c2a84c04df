"""The team-arm examples of docs/guide/benchmarks.md and its zh-CN page run as written: each suite
decodes without a problem, and the matrix makes the arms and pairs the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from armbench.projections.arm_keys import arm_pairs
from armbench.projections.record_types import RecordArm, RecordTeam
from armbench.suites.armflows import pin_workflow
from armbench.suites.arms import resolve_arms, team_kind
from armbench.suites.validate import parse_suite

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "docs" / "guide" / "benchmarks.md", ROOT / "docs" / "guide" / "zh-CN" / "benchmarks.md"]
BLOCK = re.compile(r"^```yaml\n(# (benchmarks/[^\n]+)\n.*?)^```$", re.MULTILINE | re.DOTALL)


def example(page: Path, file: str) -> str:
    [body] = [m[1] for m in BLOCK.finditer(page.read_text()) if m[2] == file]
    return body


@pytest.mark.parametrize("page", PAGES, ids=["en", "zh-CN"])
def test_the_team_arms_example_decodes_with_each_kind_of_team(page: Path) -> None:
    file = "benchmarks/release/suite.yaml"
    suite, found = parse_suite(example(page, file), file=file, dir_name="release")
    assert found == [] and suite is not None
    assert [(a.name, team_kind(a.team)) for a in resolve_arms(suite)] == [
        ("with-skill", "pulled"), ("without-skill", "ref"), ("no-release", "without"),
        ("no-commit-rules", "without"), ("bare", "none")]


@pytest.mark.parametrize("page", PAGES, ids=["en", "zh-CN"])
def test_the_matrix_example_makes_the_arms_and_pairs_the_page_names(page: Path) -> None:
    file = "benchmarks/onboarding-docs/suite.yaml"
    suite, found = parse_suite(example(page, file), file=file, dir_name="onboarding-docs")
    assert found == [] and suite is not None
    arms = resolve_arms(suite)
    names = [a.name for a in arms]
    assert names == ["claude-pulled", "claude-none", "codex-pulled", "codex-none"]
    assert all(f"`{name}`" in page.read_text() for name in names)
    entries = [RecordArm(name=a.name, tool=a.tool, team=RecordTeam(kind=team_kind(a.team)))
               for a in arms]
    assert sorted((key, a.name, b.name) for a, b, key in arm_pairs(entries)) == [
        ("team", "claude-none", "claude-pulled"), ("team", "codex-none", "codex-pulled"),
        ("tool", "claude-none", "codex-none"), ("tool", "claude-pulled", "codex-pulled")]


FLOW = re.compile(r"^```yaml\n# (workflows/[^\n]+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", PAGES, ids=["en", "zh-CN"])
def test_the_workflow_arm_example_pins_both_steps_of_its_workflow(page: Path) -> None:
    file = "benchmarks/release-flow/suite.yaml"
    suite, found = parse_suite(example(page, file), file=file, dir_name="release-flow")
    assert found == [] and suite is not None
    assert [(a.name, a.workflow) for a in resolve_arms(suite)] == [
        ("one-shot", None), ("plan-first", "plan-then-fix")]
    flows = {m[1]: m[2].encode() for m in FLOW.finditer(page.read_text())}
    pinned = pin_workflow("plan-first", "plan-then-fix", flows, frozenset(), "r" * 40)
    assert pinned.file == "workflows/plan-then-fix.yaml"
    assert [(t.id, t.outputs) for t in pinned.steps] == [("plan", ["plan"]), ("fix", [])]


FENCE = re.compile(r"^```\w*\n.*?^```$", re.MULTILINE | re.DOTALL)


def test_the_zh_cn_page_shows_every_code_block_of_the_english_page_byte_for_byte() -> None:
    english, chinese = (FENCE.findall(page.read_text()) for page in PAGES)
    assert english and chinese == english
