"""The team assets a member receives, namespaces resolved; without paths; skill changes."""

from __future__ import annotations

from armbench.suites.model import Resources, Role, Roles
from armbench.suites.teamassets import (
    asset_tree,
    instructions,
    skill_changes,
    skill_digests,
    team_assets,
    without_paths,
)
from armbench.suites.teamtree import asset_namespaces

ROLES = Roles(roles=(Role(id="web", resources=Resources(skills=("web",), rules=("web",))),
                     Role(id="ops", resources=Resources(skills=("ops",))),
                     Role(id="ml", resources=Resources(skills=("ml",)))))
FILES = {
    "armbench.yaml": b"name: t\n",
    "benchmarks/login/tasks/t.yaml": b"hidden check\n",
    "skills/release/SKILL.md": b"shared release\n",
    "skills/release/steps.sh": b"echo\n",
    "skills/web/release/SKILL.md": b"web release\n",
    "skills/ops/deploy/SKILL.md": b"ops deploy\n",
    "skills/ml/deploy/SKILL.md": b"ml deploy\n",
    "skills/web/deploy/SKILL.md": b"web deploy\n",
    "skills/notes/README.md": b"no SKILL.md: not a skill\n",
    "rules/commits.md": b"Write short commit subjects.\n",
    "rules/web/css.md": b"No inline styles.\n",
    "rules/draft.txt": b"not a rule\n",
    "rules/old/x.md": b"not a namespace: not delivered\n",
    "agents/reviewer.md": b"reviewer\n",
    "claudemd/team.md": b"We ship on Fridays.\n",
    "docs/runbooks/deploy.md": b"runbook\n",
}


def assets_for(*roles: str, files: dict[str, bytes] = FILES):
    return team_assets(files, asset_namespaces(ROLES, roles))


def test_a_member_gets_shared_assets_and_their_namespaces_versions_in_place_of_shared_ones() -> None:
    web = assets_for("web")
    assert web.skills == {"deploy": {"SKILL.md": b"web deploy\n"}, "release": {"SKILL.md": b"web release\n"}}
    assert set(web.rules) == {"commits.md", "css.md"}
    plain = assets_for()
    assert plain.skills == {"release": {"SKILL.md": b"shared release\n", "steps.sh": b"echo\n"}}
    assert set(plain.rules) == {"commits.md"}
    assert (plain.agents, plain.claudemd, plain.docs) == (
        {"reviewer.md": b"reviewer\n"}, {"team.md": b"We ship on Fridays.\n"},
        {"runbooks/deploy.md": b"runbook\n"})


def test_an_asset_two_received_namespaces_both_define_is_delivered_from_neither() -> None:
    assert "deploy" not in assets_for("ops", "ml").skills
    assert assets_for("ops").skills["deploy"] == {"SKILL.md": b"ops deploy\n"}


def test_the_tree_holds_only_the_asset_folders_never_the_suites() -> None:
    tree = asset_tree(assets_for())
    assert sorted(tree) == ["agents/reviewer.md", "claudemd/team.md", "docs/runbooks/deploy.md",
                            "rules/commits.md", "skills/release/SKILL.md", "skills/release/steps.sh"]


def test_without_leaves_out_a_folder_and_a_file_as_git_lists_them() -> None:
    kept = without_paths(FILES, ["skills/release", "rules/commits.md"])
    assert "skills/release/SKILL.md" not in kept and "skills/release/steps.sh" not in kept
    assert "rules/commits.md" not in kept and "skills/web/release/SKILL.md" in kept
    assert "skills/releases/SKILL.md" in without_paths({"skills/releases/SKILL.md": b""}, ["skills/release"])


def test_the_instruction_file_is_the_claudemd_files_then_the_rules_each_named() -> None:
    text = instructions(assets_for()).decode()
    assert text == ("<!-- armbench: claudemd/team.md -->\nWe ship on Fridays.\n\n"
                    "<!-- armbench: rules/commits.md -->\nWrite short commit subjects.\n")
    assert instructions(assets_for(files={})) == b""


def test_skill_changes_compare_two_installs_folder_by_folder() -> None:
    base = skill_digests(assets_for())
    ref = {**FILES, "skills/release/steps.sh": b"echo changed\n", "skills/audit/SKILL.md": b"a\n"}
    assert skill_changes(base, skill_digests(assets_for(files=ref))) == {
        "audit": "added", "release": "changed"}
    gone = without_paths(FILES, ["skills/release"])
    assert skill_changes(base, skill_digests(assets_for(files=gone))) == {"release": "removed"}
    assert skill_changes(base, skill_digests(assets_for())) == {}
    assert skill_changes(base, {}) == {"release": "removed"}
