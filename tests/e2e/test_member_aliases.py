"""`run --member-aliases` and `plan --aliases` (benchmark-suites.md criterion 21).

The team maps alias `strong` to `m-team`; the member's own `$ARMBENCH_HOME/models/aliases.yaml`
maps it to `m-member`. Arm `base` uses the alias, arm `plain` a model written out. Only with
`--member-aliases` (`plan --aliases member`) does the member's file decide `base`'s model, and
the table and the record then say `member` for that arm alone. The scripted tool logs the model
each trial was launched with.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pytest

from e2e.conftest import FIX_ADD, Result, World, arm_rows, dump, make_world, visible_task

pytestmark = pytest.mark.e2e

AGENT = "set -eu\ncat >/dev/null\necho \"$E2E_TAG $ARMBENCH_MODEL\" >> \"$E2E_OUT/models\"\n" + FIX_ADD


@dataclass
class Member:
    world: World

    def plan(self, *args: str) -> dict[str, Any]:
        got = self.world.armbench("plan", "s", *args)
        assert got.code == 0, got
        return {a["name"]: (a["model"], a["source"]) for a in got.data["plan"]["plan"]["arms"]}

    def run(self, tag: str, *args: str) -> Result:
        got = self.world.armbench("run", "s", "--sandbox", *args, env={"E2E_TAG": tag})
        assert got.code == 0, got
        return got

    def launched(self, tag: str) -> list[str]:
        return sorted(line.split()[1] for line in self.world.out_lines("models")
                      if line.split()[0] == tag)


@pytest.fixture(scope="module")
def member(tmp_path_factory: pytest.TempPathFactory) -> Member:
    world = make_world(tmp_path_factory.mktemp("member-aliases"))
    world.team.tool("agent", AGENT)
    world.team.aliases({"strong": {"agent": "m-team"}})
    world.team.suite("s", defaults={"tool": "agent", "model": "strong"},
                     arms=[{"name": "base"}, {"name": "plain", "model": "m-plain"}])
    world.team.task("s", "a", **visible_task(world.project))
    world.init_and_pull()
    (world.home / "models").mkdir(parents=True, exist_ok=True)
    (world.home / "models" / "aliases.yaml").write_text(dump(
        {"schemaVersion": "v1alpha1", "aliases": {"strong": {"agent": "m-member"}}}))
    return Member(world)


def test_plan_resolves_with_the_members_aliases_only_when_asked(member: Member) -> None:
    team = {"base": ("m-team", "team"), "plain": ("m-plain", "team")}
    assert member.plan() == team
    assert member.plan("--aliases", "team") == team
    assert member.plan("--aliases", "member") == {"base": ("m-member", "member"),
                                                  "plain": ("m-plain", "team")}


def test_plan_refuses_an_aliases_value_other_than_team_or_member(member: Member) -> None:
    got = member.world.armbench("plan", "s", "--aliases", "bogus")
    assert got.code == 2, got
    assert got.envelope == {"error": {"code": "invalid_inputs",
                                      "message": '--aliases must be "team" or "member", not "bogus".'}}


def test_a_run_uses_the_members_alias_only_with_member_aliases(member: Member) -> None:
    by_team = member.run("team")
    assert member.launched("team") == ["m-plain", "m-team"]
    rows = arm_rows(by_team.stderr)
    assert rows["base"]["Model (source)"] == "m-team (team)"
    team_file = (member.world.team.work / "models" / "aliases.yaml").read_bytes()
    member_file = (member.world.home / "models" / "aliases.yaml").read_bytes()
    assert member.world.record(by_team.data["done"]["run"])["aliases"] == {
        "source": "team", "sourceHash": hashlib.sha256(team_file).hexdigest()}

    by_member = member.run("member", "--member-aliases")
    assert member.launched("member") == ["m-member", "m-plain"]
    rows = arm_rows(by_member.stderr)
    assert rows["base"]["Model (source)"] == "m-member (member)"
    assert rows["plain"]["Model (source)"] == "m-plain (team)"
    record = member.world.record(by_member.data["done"]["run"])
    assert record["aliases"] == {"source": "member", "sourceHash": hashlib.sha256(
        b"# team\n" + team_file + b"# member\n" + member_file).hexdigest()}  # both decided
    arms = {a["name"]: a for a in record["arms"]}
    assert (arms["base"]["model"], arms["base"]["alias"], arms["base"]["source"]) == (
        "m-member", "strong", "member")
    assert (arms["plain"]["model"], arms["plain"]["source"]) == ("m-plain", "team")
    requested = {t["arm"]: t["agent"]["model"]["requested"] for t in record["trials"]}
    assert requested == {"base": "m-member", "plain": "m-plain"}
