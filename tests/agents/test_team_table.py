"""A pulled arm and a none arm on the real Claude Code: the mock sees the skill only in the
first, and the printed skill-load table counts the loads."""

from __future__ import annotations

import json

import pytest

from agents.conftest import Runs
from agents.mock_model import MockModel

pytestmark = pytest.mark.agents
PLAN = "teamtable"


def test_the_skill_load_table_counts_claude_codes_loads(runs: Runs, mock: MockModel) -> None:
    run = runs.get("teamtable")
    text = run.envelope["data"]["done"]["outputs"]["text"]
    assert "| bare | calc-fix | removed | 0/2 | 2/2 |" in text, text
    assert run.record["skillChanges"] == [{"arm": "bare", "defaults": "with-skill",
                                           "skills": [{"name": "calc-fix", "change": "removed"}]}]
    for rep in (0, 1):
        assert run.trial("fix", "with-skill", rep)["used"] == {"calc-fix": "loaded"}
        bare = run.trial("fix", "bare", rep)
        assert bare["used"] == {} and "team" not in bare["agent"]
    bodies = [json.dumps(r["body"]) for r in mock.requests if "[script: teamtable-" in json.dumps(r["body"])]
    with_skill = [b for b in bodies if "How to fix calc.py" in b]
    assert with_skill and len(with_skill) < len(bodies)
