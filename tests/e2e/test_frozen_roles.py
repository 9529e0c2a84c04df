"""What a trial gets is decided at plan, whoever leases it: a run planned with a role and worked
by `armbench work` after the member's config dropped the role still delivers the role's skills,
and its record names the roles its arms' assets were delivered for."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from e2e.conftest import FIX_ADD, World, dump, make_world, visible_task

pytestmark = pytest.mark.e2e

LISTING_AGENT = ("set -eu\ncat >/dev/null\n"
                 "skills=$(cd \"$ARMBENCH_TEAM_DIR/skills\" && ls | LC_ALL=C sort | tr '\\n' ' ')\n"
                 "echo \"$ARMBENCH_MODEL skills: $skills\" >> \"$E2E_OUT/seen\"\n" + FIX_ADD)
ROLES = {"roles": [{"id": "r1", "resources": {"skills": ["r1"]}}]}


def _roles(world: World, roles: list[str] | None) -> None:
    path = world.checkout / ".armbench" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config.pop("roles", None)
    if roles is not None:
        config["roles"] = roles
    path.write_text(dump(config))


@pytest.fixture
def world(tmp_path: Path) -> World:
    world = make_world(tmp_path / "w")
    t = world.team
    t.tool("agent", LISTING_AGENT)
    t.write("manifest/roles.yaml", dump(ROLES))
    t.write("skills/shared/SKILL.md", "---\nname: shared\ndescription: Everyone's.\n---\nAll.\n")
    t.write("skills/r1/only/SKILL.md", "---\nname: only\ndescription: r1's own.\n---\nR1.\n")
    t.suite("s", defaults={"tool": "agent", "model": "m1"}, arms=[{"name": "base"}])
    t.task("s", "a", **visible_task(world.project))
    t.publish()
    init = world.armbench("init", "--team", str(t.bare))
    assert init.code == 0, init
    _roles(world, ["r1"])
    pulled = world.armbench("pull")
    assert pulled.code == 0, pulled
    return world


def test_a_worker_whose_config_dropped_the_role_delivers_what_the_plan_froze(world: World) -> None:
    started = world.armbench("run", "s", "--sandbox", "--driver", "none")
    assert started.code == 0, started
    run = started.data["started"]["run"]
    _roles(world, None)  # the member dropped the role before a worker leased the trial
    worked = world.armbench("work", run, "--sandbox")
    assert worked.code == 0, worked
    assert world.out_lines("seen") == ["m1 skills: only shared "]
    [plan] = [e for e in world.events("PlanFrozen")]
    assert plan["roles"] == ["r1"]
    record = world.record(run)
    assert [a.get("roles") for a in record["arms"]] == [["r1"]]
    frozen = plan["arms"][0]["assets_hash"]
    assert record["arms"][0]["team"]["assets"] == frozen
    [trial] = record["trials"]
    assert trial["agent"]["team"]["assets"] == frozen and trial["agent"]["roles"] == ["r1"]


def test_a_run_planned_without_the_role_delivers_only_the_shared_skills(world: World) -> None:
    _roles(world, None)
    ran = world.armbench("run", "s", "--sandbox")
    assert ran.code == 0, ran
    assert world.out_lines("seen") == ["m1 skills: shared "]
    record = world.record(ran.data["done"]["run"])
    assert [a.get("roles") for a in record["arms"]] == [[]]
    [plan] = [e for e in world.events("PlanFrozen")]
    assert record["arms"][0]["team"]["assets"] == plan["arms"][0]["assets_hash"]

