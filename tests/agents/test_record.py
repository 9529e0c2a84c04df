"""The real-CLI record (team-asset-arms.md's definition of done): one suite through the installed
`armbench run --sandbox` with the real pinned Claude Code in bubblewrap and three arms on it: the
pulled team (its skill delivered), a ref arm whose branch removes the skill, and an arm that runs
the team's two-step workflow `plan-then-fix`, whose fix turn is told the plan turn's answer.

With ARMBENCH_WRITE_EXAMPLE=1 the test also writes the record it read to
docs/examples/claude-team-and-workflow.json (timings and ids as the run made them), once every assertion held.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from agents.conftest import NO_SKILL, PLAN_TEXT, PLAN_THEN_FIX, PROMPTS, Runs
from agents.evidence import prompt_report
from agents.mock_model import MockModel
from agents.world import git

pytestmark = pytest.mark.agents
PLAN = "record"
EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "claude-team-and-workflow.json"


def rows(text: str, header_start: str) -> dict[str, dict[str, str]]:
    """The Markdown table whose header starts with `header_start`, as {first cell: {column: cell}}."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    names = [c.strip() for c in lines[start].strip().strip("|").split("|")]
    found: dict[str, dict[str, str]] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        found[cells[0]] = dict(zip(names, cells, strict=True))
    return found


def _bodies(mock: MockModel, key: str) -> list[str]:
    return [text for r in mock.requests if key in (text := json.dumps(r["body"]))]


def _prompts(mock: MockModel, key: str) -> list[str]:
    """The text blocks of the user's messages the model was sent that hold `key`."""
    return [block["text"] for r in mock.requests for m in r["body"].get("messages", [])
            if m.get("role") == "user" and isinstance(m.get("content"), list)
            for block in m["content"] if block.get("type") == "text" and key in block.get("text", "")]


def test_the_record_of_a_team_arm_a_ref_arm_and_a_workflow_arm_on_claude(runs: Runs, mock: MockModel) -> None:
    run = runs.get("record")
    world = runs.world("record")
    head, branch = git(world.root / "team", "rev-parse", "main"), world.branches[NO_SKILL]
    assert run.code == 0, run.stderr

    arms: dict[str, dict[str, Any]] = {a["name"]: a for a in run.record["arms"]}
    assets = {name: a["team"].pop("assets") for name, a in arms.items()}
    assert assets["pulled"] == assets["plan-first"] != assets["no-skill"]  # the branch drops a skill
    assert [(n, a["tool"]) for n, a in arms.items()] == [
        ("pulled", "claude"), ("no-skill", "claude"), ("plan-first", "claude")]
    assert arms["pulled"]["team"] == arms["plan-first"]["team"] == {"kind": "pulled", "revision": head}
    assert arms["no-skill"]["team"] == {"kind": "ref", "ref": NO_SKILL, "revision": branch}
    assert arms["plan-first"]["workflow"] == {
        "name": "plan-then-fix", "sourceHash": hashlib.sha256(PLAN_THEN_FIX.encode()).hexdigest()}
    assert "workflow" not in arms["pulled"] and "workflow" not in arms["no-skill"]

    trials = {arm: run.trial("fix", arm) for arm in arms}
    for arm, trial in trials.items():
        report = prompt_report(world.checkout, trial["step"])
        assert trial["result"] == "passed", (arm, report.get("cause"), report.get("message"))
        assert isinstance(trial["durationMs"], int) and trial["durationMs"] > 0, (arm, trial)
    assert {arm: t["agent"]["team"].pop("assets") for arm, t in trials.items()} == assets  # as planned
    assert trials["pulled"]["agent"]["team"] == trials["plan-first"]["agent"]["team"] == {"revision": head}
    assert trials["no-skill"]["agent"]["team"] == {"revision": branch}  # the branch's install
    prints = {arm: t["agent"]["fingerprint"] for arm, t in trials.items()}  # claude says its version
    assert len(set(prints.values())) == 3  # another team, another workflow: another agent
    assert trials["pulled"]["used"] == {"calc-fix": "loaded"}
    assert trials["no-skill"]["used"] == {}  # asked for, and not there to load
    assert trials["plan-first"]["used"] == {"calc-fix": "loaded"}  # loaded in the fix turn
    assert run.record["skillChanges"] == [{"arm": "no-skill", "defaults": "pulled",
                                           "skills": [{"name": "calc-fix", "change": "removed"}]}]

    # the plan turn answered the plan, and the fix turn's prompt carried it
    assert _bodies(mock, "[script: record-plan]")
    task = PROMPTS["fix"] + "\n[script: record-fix]\n"
    assert set(_prompts(mock, "Follow this plan:")) == {f"{task}\nFollow this plan: {PLAN_TEXT}"}

    text = run.envelope["data"]["done"]["outputs"]["text"]
    teams = {arm: row["Team"] for arm, row in rows(text, "| Arm | Tool |").items()}
    assert teams == {"pulled": f"pulled {head[:7]}", "no-skill": f"{NO_SKILL} {branch[:7]}",
                     "plan-first": f"pulled {head[:7]}"}, text
    assert "| no-skill | calc-fix | removed | 0/1 | 1/1 |" in text, text
    if os.environ.get("ARMBENCH_WRITE_EXAMPLE") == "1":
        EXAMPLE.parent.mkdir(parents=True, exist_ok=True)
        EXAMPLE.write_text(json.dumps(run.record, indent=2, ensure_ascii=False) + "\n")
