"""The one walk of the team repo, what a member receives, and the rules of a `without` list. Pure."""

from __future__ import annotations

from armbench.suites.model import Resources, Role, Roles
from armbench.suites.teamtree import AssetNamespaces, asset_namespaces, delivered, team_tree
from armbench.suites.without import without_problems

FILES = ["armbench.yaml", "manifest/roles.yaml", "models/aliases.yaml", "models/auth/aliases.yaml",
         "tools/agent/tool.yaml", "tools/agent/agent.sh", "benchmarks/s/suite.yaml",
         "skills/release/SKILL.md", "skills/release/notes.md", "skills/dev/release/SKILL.md",
         "skills/ops/deploy/SKILL.md", "skills/empty/README.md", "rules/commits.md", "rules/dev/style.md",
         "agents/reviewer.md", "claudemd/team.md", "docs/runbooks/deploy.md", "mcp/servers.json"]
ROLES = Roles(roles=(Role(id="dev", resources=Resources(skills=("dev",), rules=("dev",))),
                     Role(id="ops", resources=Resources(skills=("ops",)))))
DEV = asset_namespaces(ROLES, ["dev"])


def test_the_walk_classifies_each_file_once() -> None:
    tree = team_tree(FILES)
    assert tree.team_file
    assert tree.aliases == ("models/aliases.yaml", "models/auth/aliases.yaml")
    assert tree.tools == {"agent": "tools/agent/tool.yaml"}
    assert tree.benchmarks == ("benchmarks/s/suite.yaml",)
    assert "mcp/servers.json" not in tree.assets and "skills/release/notes.md" in tree.assets
    assert not team_tree(["skills/x/SKILL.md"]).team_file


def test_a_member_receives_shared_assets_and_their_namespaces_versions() -> None:
    assert delivered(FILES, DEV) == {
        "agents/reviewer.md": ("agents/reviewer.md",), "claudemd/team.md": ("claudemd/team.md",),
        "docs/runbooks/deploy.md": ("docs/runbooks/deploy.md",),
        "rules/commits.md": ("rules/commits.md",), "rules/style.md": ("rules/dev/style.md",),
        "skills/release": ("skills/dev/release/SKILL.md",)}  # dev's release stands in; no ops deploy
    assert delivered(FILES, asset_namespaces(ROLES, ["dev", "ops"]))["skills/deploy"] == (
        "skills/ops/deploy/SKILL.md",)
    none = AssetNamespaces(declared={k: frozenset() for k in DEV.declared},
                           active={k: frozenset() for k in DEV.active})
    assert delivered(FILES, none)["skills/release"] == ("skills/release/SKILL.md",
                                                         "skills/release/notes.md")


def problems(paths: list[str], spaces: AssetNamespaces | None = DEV) -> list[tuple[int, str]]:
    return [(p.index, p.code) for p in without_problems(paths, FILES, spaces)]


def test_a_path_must_change_what_the_member_receives_under_an_asset_folder() -> None:
    assert problems(["skills/release", "skills/dev/release"]) == []  # together they remove release
    assert problems(["skills/release"]) == [(0, "without_no_effect")]  # dev's version stands in
    assert problems(["skills/dev/release"]) == []  # the shared one comes back: a change
    assert problems(["skills/ops/deploy"]) == [(0, "without_namespace_inactive")]
    assert problems(["skills/ops"]) == [(0, "without_namespace_inactive")]
    assert problems(["skills/empty"]) == [(0, "without_no_effect")]  # no SKILL.md: no skill
    assert problems(["skills/relase"]) == [(0, "without_path_missing")]
    assert problems(["armbench.yaml"]) == [(0, "without_team_file")]
    assert problems(["rules", "agents/reviewer.md", "docs/runbooks"]) == []


def test_elsewhere_a_path_only_has_to_exist_and_review_checks_what_holds_for_every_member() -> None:
    assert problems(["mcp/servers.json"]) == [] and problems(["mcp/other.json"]) == [
        (0, "without_path_missing")]
    assert problems(["skills/release", "skills/ops/deploy", "skills/nope"], None) == [
        (2, "without_path_missing")]
    assert problems(["mcp/not-read-by-review.json", "armbench.yaml"], None) == [(1, "without_team_file")]
