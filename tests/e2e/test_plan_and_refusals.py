"""`armbench plan`, and what pull, plan and run refuse before any run exists.

One team repo holds a valid suite, a suite whose arm uses an alias with no model for its tool,
a suite whose arms carry a URL and a path, and a suite with 7 arms.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from e2e.conftest import Result, World, hidden_task, make_world

pytestmark = pytest.mark.e2e

ALIAS_MESSAGE = ('Arm "quick" uses model alias "fast", which has no model for agent in '
                 "models/aliases.yaml. Add one and start again.")


@dataclass
class Team:
    world: World
    pulled: Result


def line_of(world: World, rel: str, text: str) -> int:
    """The 1-based line of the team file `rel` that starts with `text` (after indentation)."""
    lines = (world.team.work / rel).read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if line.lstrip().startswith(text))


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Team:
    world = make_world(tmp_path_factory.mktemp("refusals"))
    t = world.team
    t.tool("agent", "cat > /dev/null\n")
    t.aliases({"strong": {"agent": "m-strong"}, "fast": {"codex": "m-fast-for-codex"}})
    task = hidden_task(world.project)
    t.suite("ok", defaults={"tool": "agent", "model": "strong"},
            arms=[{"name": "base"}, {"name": "other", "model": "m-other"}], repetitions=2)
    t.suite("bad-alias", defaults={"tool": "agent", "model": "strong"},
            arms=[{"name": "base"}, {"name": "quick", "model": "fast"}])
    t.suite("url-arm", arms=[{"name": "base"}, {"name": "remote", "model": "https://models.example/m1"},
                             {"name": "local", "tool": "./bin/agent"}])
    t.suite("seven", arms=[{"name": "base"}] + [{"name": f"m{i}", "model": f"m-{i}"} for i in range(6)])
    for suite in ("ok", "bad-alias", "url-arm", "seven"):
        t.task(suite, "hidden", **task)
    return Team(world, world.init_and_pull())


def diagnostics_of(team: Team, suite: str) -> list[dict]:
    file = f"benchmarks/{suite}/suite.yaml"
    return [d for d in team.pulled.data["pull"]["diagnostics"] if d["file"] == file]


def test_plan_prints_the_definition_and_the_frozen_plan(team: Team) -> None:
    got = team.world.armbench("plan", "ok")
    assert got.code == 0, got
    assert list(got.envelope) == ["data"] and list(got.data) == ["plan"]
    assert set(got.data["plan"]) == {"definition", "plan"}
    definition, plan = got.data["plan"]["definition"], got.data["plan"]["plan"]
    assert isinstance(definition, list) and isinstance(plan, dict)
    prompts = [s for s in definition if s["kind"] == "prompt"]
    assert len(prompts) == 4  # 1 task x 2 arms x 2 repetitions
    assert [s["id"] for s in definition if s["kind"] == "command"][0] == "trials.baselines.hidden"
    assert [(a["name"], a["model"]) for a in plan["arms"]] == [("base", "m-strong"),
                                                               ("other", "m-other")]
    assert plan["baseline_team_revision"] == json.loads(
        (team.world.checkout / ".armbench" / "pull.json").read_text())["revision"]
    assert team.world.events("RunStarted") == []


def test_an_arm_whose_alias_has_no_model_for_its_tool_is_refused_before_a_run(team: Team) -> None:
    got = team.world.armbench("run", "bad-alias", "--sandbox")
    assert got.code == 2, got
    assert got.envelope == {"error": {"code": "alias_unresolved", "message": ALIAS_MESSAGE}}
    assert team.world.events("RunStarted") == []


def test_an_arm_value_that_looks_like_a_url_or_a_path_is_refused(team: Team) -> None:
    found = [d for d in diagnostics_of(team, "url-arm") if d["code"] == "arm_unpublishable"]
    rel = "benchmarks/url-arm/suite.yaml"
    assert {(d["line"], d["severity"]) for d in found} == {
        (line_of(team.world, rel, "model: https://"), "error"),
        (line_of(team.world, rel, "tool: ./bin/agent"), "error")}
    assert "url-arm" in team.pulled.data["pull"]["cached"]  # with its diagnostics, so run can name it
    for command in (("run", "url-arm", "--sandbox"), ("plan", "url-arm")):
        got = team.world.armbench(*command)
        assert (got.code, got.error["code"]) == (2, "arm_unpublishable"), got
        assert got.error["message"] == (
            f'Arm "remote" ({rel}:{line_of(team.world, rel, "model: https://")}): arms[1].model: '
            "expected a plain model name, found `https://models.example/m1`, which looks like a URL "
            "or a local path and would reach the published record. Use a plain name; "
            f'Arm "local" ({rel}:{line_of(team.world, rel, "tool: ./bin/agent")}): arms[2].tool: '
            "expected a plain tool name, found `./bin/agent`, which looks like a URL or a local path "
            "and would reach the published record. Use a plain name. No run was started: fix the "
            "suite file, push, pull and start again.")
    assert team.world.events("RunStarted") == []


def test_pull_reports_a_suite_with_7_arms_with_its_file_and_line_and_does_not_cache_it(
        team: Team) -> None:
    (found,) = [d for d in diagnostics_of(team, "seven") if d["code"] == "arms_count"]
    assert found["severity"] == "error"
    assert found["line"] == line_of(team.world, "benchmarks/seven/suite.yaml", "- name: m5")  # arms[6]
    assert f"benchmarks/seven/suite.yaml:{found['line']}: error:" in team.pulled.stderr
    pull = team.pulled.data["pull"]
    assert "seven" in pull["rejected"] and "seven" not in pull["cached"]
    cache = json.loads((team.world.checkout / ".armbench" / "cache" / "suites.json").read_text())
    assert "seven" not in cache["suites"] and "ok" in cache["suites"]
