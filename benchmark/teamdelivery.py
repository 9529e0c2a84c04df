"""Delivering an arm's team assets into a trial's room at lease (composition: the team mirror
through `edge/`, the assets walk from `suites/`, each CLI's places from `agents/`, the install
from `trials/`)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from armbench.benchmark.agents.places import home_files
from armbench.benchmark.trials.teaminstall import TeamInstall, install_team
from armbench.edge.sandbox import Room
from armbench.ledger.events import NoTeam, PlanFrozen, PlannedArm, PlannedTeam, PulledTeam, WithoutTeam
from armbench.suites.namespaces import read_roles
from armbench.suites.teamassets import (
    TeamAssets,
    asset_tree,
    skill_changes,
    skill_digests,
    team_assets,
    without_paths,
)
from armbench.suites.teamtree import asset_namespaces

__all__ = ["TeamDelivery"]

TeamFiles = Callable[[str], dict[str, bytes]]
"""Every file of the team repo at a commit (read from the mirror, never fetched)."""


class TeamDelivery:
    """Installs an arm's team into a trial's room; reads each team revision once per run."""

    def __init__(self, plan: PlanFrozen, files_at: TeamFiles, roles: list[str]) -> None:
        """`roles`: the member's roles and projects the plan froze (`PlanFrozen.roles`), never
        the leasing machine's config where the plan has them."""
        self.plan, self._files_at, self._roles = plan, files_at, roles
        self._assets: dict[tuple[str, tuple[str, ...]], TeamAssets] = {}
        """(commit read, paths left out) -> what it delivers."""
        self._lock = threading.Lock()

    def assets(self, team: PlannedTeam) -> tuple[TeamAssets, str | None]:
        """The assets an arm's team delivers, and the revision they come from (None for none)."""
        if isinstance(team, NoTeam):
            return TeamAssets(), None
        revision = team.revision or self.plan.baseline_team_revision
        paths = tuple(sorted(team.paths)) if isinstance(team, WithoutTeam) else ()
        source = team.commit if isinstance(team, WithoutTeam) else revision  # plan made it
        key = (source, paths)
        with self._lock:
            if key not in self._assets:
                files = self._files_at(source)
                roles, _ = read_roles(files)
                kept = without_paths(files, paths) if paths else files
                self._assets[key] = team_assets(kept, asset_namespaces(roles, self._roles))
            return self._assets[key], revision

    def install(self, room: Room, arm: PlannedArm) -> TeamInstall:
        """Write the arm's team into the room: its tool's places in the home, the tree beside it."""
        team = arm.team
        assets, revision = self.assets(team)
        baseline, _ = self.assets(PulledTeam(revision=self.plan.baseline_team_revision))
        digests = skill_digests(assets)
        install = TeamInstall(kind=team.kind, revision=revision, skills=digests,
                              changes=skill_changes(skill_digests(baseline), digests))
        install_team(room, install, asset_tree(assets), home_files(arm.tool, assets))
        return install
