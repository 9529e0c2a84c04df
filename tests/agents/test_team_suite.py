"""A suite through `armbench run` with the real Claude Code and a team that has a skill and a rule:
the team reaches each trial's own home, the mock sees the rule, the agent loads the skill, and the
record says which trials loaded it and which team revision their install held."""

from __future__ import annotations

import json

import pytest

from agents.conftest import TEAM_RULE, Runs
from agents.evidence import prompt_report
from agents.mock_model import MockModel
from agents.world import git

pytestmark = pytest.mark.agents
PLAN = "team"


def test_each_trial_records_the_skill_it_loaded_and_the_revision_its_install_held(runs: Runs) -> None:
    run = runs.get("team")
    team_head = git(runs.world("team").root / "team", "rev-parse", "HEAD")
    assets = run.record["arms"][0]["team"]["assets"]
    for repetition in (0, 1):
        fix, wrong = run.trial("fix", repetition=repetition), run.trial("wrong", repetition=repetition)
        report = prompt_report(runs.world("team").checkout, fix["step"])
        assert fix["result"] == "passed", (report.get("cause"), report.get("message"))
        assert fix["used"] == {"calc-fix": "loaded"}
        assert wrong["result"] == "failed" and wrong["used"] == {}
        for trial in (fix, wrong):
            assert trial["agent"]["team"] == {"revision": team_head, "assets": assets}
    assert run.record["arms"][0]["team"] == {"kind": "pulled", "revision": team_head, "assets": assets}
    assert "skillChanges" not in run.record  # one pulled arm changes no skill


def test_the_model_saw_the_teams_rule_and_the_loaded_skills_body(runs: Runs, mock: MockModel) -> None:
    runs.get("team")
    bodies = [json.dumps(r["body"]) for r in mock.requests if "[script: team-" in json.dumps(r["body"])]
    assert bodies and all(TEAM_RULE in body for body in bodies)
    assert any("TEAM-SKILL-BODY" in body for body in bodies)


def test_the_members_checkout_and_home_are_as_before(runs: Runs) -> None:
    world = runs.world("team")
    runs.get("team")
    assert git(world.checkout, "status", "--porcelain") == ""
    assert not list((world.root / "home").glob(".claude/skills/*"))
    assert not (world.root / "home" / ".claude" / "CLAUDE.md").exists()
