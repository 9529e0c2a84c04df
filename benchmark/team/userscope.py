"""Under `isolation: declared`, refuse what the member's own home would spoil (team-asset-arms.md,
"User scope"): the team's own assets in the home load in every arm (`team_ref_blocked`), and any
user-level asset for a `none` arm's tool means that arm is not without team assets
(`arm_team_unclean`). And armbench installs no team into the member's home, so a built-in CLI
there loads none of the team's assets: arms of such tools that differ only in their team would
run alike (`arm_team_undelivered`). In armbench's sandbox each trial has a private home, so none
of these applies.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path

import msgspec

from armbench.edge.homelayout import HomeLayout, user_assets
from armbench.edge.team import files_at
from armbench.ledger.errors import Refusal
from armbench.ledger.events import NoTeam, PlanFrozen, PlannedTeam, RefTeam, WithoutTeam
from armbench.suites import namespaces
from armbench.suites.teamtree import asset_namespaces, delivered

__all__ = ["refuse_undelivered_teams", "refuse_user_scope"]


def refuse_user_scope(plan: PlanFrozen, *, home: Path, mirror: Path, roles: list[str],
                      layouts: Mapping[str, HomeLayout]) -> None:
    """Refuse a suite whose trials would share `home` with assets that make its arms differ in
    less than they claim (`layouts`: each built-in CLI's, by tool); nothing is removed from the
    home."""
    tools = list(dict.fromkeys(a.tool for a in plan.arms))
    found = {tool: user_assets(home, layouts.get(tool)) for tool in tools}
    if not any(found.values()):
        return
    files = files_at(mirror, plan.baseline_team_revision)
    spaces = asset_namespaces(namespaces.read_roles(files)[0], roles)
    team = {(name.split("/")[0], Path(name).stem) for name in delivered(files, spaces)}
    for tool in tools:
        own = [p for p in found[tool] if _kind_and_name(p) in team]
        if own:
            raise Refusal(
                "This machine runs trials in your home (workflows.isolation: declared), and your "
                f"home holds the team's own assets for {tool} ({_home(own)}), which would load in "
                "every arm, so the arms would not differ in what they claim to. Run the benchmark "
                "in armbench's sandbox (remove workflows.isolation: declared), or on a machine "
                "whose home holds none of the team's assets. Nothing was removed from your home.",
                code="team_ref_blocked")
    for arm in plan.arms:
        if isinstance(arm.team, NoTeam) and found[arm.tool]:
            raise Refusal(
                f'Arm "{arm.name}" runs without team assets, and this machine\'s home holds '
                f"user-level assets for {arm.tool} ({_home(found[arm.tool])}), where its trials "
                "would read them (workflows.isolation: declared runs trials in your home). Start "
                "the benchmark in armbench's sandbox, or on a machine whose home holds no assets "
                f"for {arm.tool}.", code="arm_team_unclean")


def refuse_undelivered_teams(plan: PlanFrozen, builtin: Collection[str]) -> None:
    """Refuse arms of built-in CLIs (`builtin`, the tools that read their assets from the home)
    whose teams differ: under declared isolation their trials all read the member's home, where
    no team is installed, so they would differ in nothing their teams claim."""
    teams: dict[bytes, list[str]] = {}
    for arm in plan.arms:
        if arm.tool in builtin:
            teams.setdefault(msgspec.json.encode(arm.team), []).append(arm.name)
    if len(teams) < 2:
        return
    named = {arm.name: arm for arm in plan.arms}
    shown = [f'"{names[0]}" (team {_team(named[names[0]].team)})' for names in teams.values()]
    tools = sorted({named[n].tool for names in teams.values() for n in names})
    raise Refusal(
        f"Arms {', '.join(shown[:-1])} and {shown[-1]} differ in their team, but their tools "
        f"({', '.join(tools)}) read team assets from the home, and with workflows.isolation: "
        "declared trials run in your home, where armbench installs no team: every arm would run "
        "with the same assets. Run the benchmark in armbench's sandbox (remove "
        "workflows.isolation: declared), or compare teams with a command tool, which reads them "
        "at $ARMBENCH_TEAM_DIR.", code="arm_team_undelivered")


def _team(team: PlannedTeam) -> str:
    """An arm's team as a suite names it: pulled, none, a ref, or without its paths."""
    match team:
        case RefTeam(ref=ref):
            return ref
        case WithoutTeam(paths=paths):
            return "without " + ", ".join(paths)
        case _:
            return team.kind


def _kind_and_name(place: str) -> tuple[str, str] | None:
    """`("skills", "release")` for `.claude/skills/release`; None for an instruction file."""
    parts = place.split("/")
    if len(parts) < 2 or parts[-2] not in ("skills", "skill", "agents", "agent", "rules"):
        return None
    kind = parts[-2] if parts[-2].endswith("s") else parts[-2] + "s"
    return kind, Path(parts[-1]).stem


def _home(places: list[str]) -> str:
    shown = ", ".join(f"~/{p}" for p in places[:3])
    return shown + (f" and {len(places) - 3} more" if len(places) > 3 else "")
