"""Delivering an arm's team assets into a trial's room at lease (composition: the team mirror
through `edge/`, the assets walk from `suites/`, each CLI's places from `agents/`, the install
from `trials/`)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from armbench.benchmark.agents.places import home_files
from armbench.benchmark.trials.teaminstall import TeamInstall, install_team
from armbench.edge.sandbox import Room
from armbench.ledger.errors import Refusal
from armbench.ledger.events import NoTeam, PlanFrozen, PlannedArm, PlannedTeam, PulledTeam
from armbench.suites.teamassets import (
    TeamAssets,
    asset_tree,
    assets_hash,
    delivered_from,
    member_assets,
    skill_changes,
    skill_digests,
)

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
        source = delivered_from(team, self.plan.baseline_team_revision)
        if source is None or isinstance(team, NoTeam):
            return TeamAssets(), None
        with self._lock:
            if source not in self._assets:
                commit, paths = source
                self._assets[source] = member_assets(self._files_at(commit), self._roles, paths)
            return self._assets[source], team.revision or self.plan.baseline_team_revision

    def install(self, room: Room, arm: PlannedArm) -> TeamInstall:
        """Write the arm's team into the room: its tool's places in the home, the tree beside it.
        Refuses (the lease fails) where the assets are not the ones the plan froze."""
        team = arm.team
        assets, revision = self.assets(team)
        found = assets_hash(assets) if revision is not None else None
        if arm.assets_hash is not None and found != arm.assets_hash:
            raise Refusal(
                f'Arm "{arm.name}" was planned with team assets {arm.assets_hash[:12]} (roles '
                f"{', '.join(self._roles) or 'none'}), but this checkout's team mirror delivers "
                f"{(found or 'none')[:12]}: its armbench reads the team repo otherwise. Work the "
                "run with the armbench version that planned it, or plan it again here.",
                code="assets_differ")
        baseline, _ = self.assets(PulledTeam(revision=self.plan.baseline_team_revision))
        digests = skill_digests(assets)
        install = TeamInstall(kind=team.kind, revision=revision, skills=digests,
                              changes=skill_changes(skill_digests(baseline), digests),
                              assets_hash=found,
                              roles=list(self._roles) if revision is not None else None)
        install_team(room, install, asset_tree(assets), home_files(arm.tool, assets))
        return install
