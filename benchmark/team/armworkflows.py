"""Each workflow arm's team workflow, pinned at the arm's team revision before a run exists: the
mirror read by commit (nothing fetched), the namespaces this checkout's roles receive at that
revision, and `suites.armflows` deciding what a trial can run."""

from __future__ import annotations

from pathlib import Path

from armbench.benchmark.team.override import active_workflow_namespaces
from armbench.edge.config import ProjectConfig
from armbench.edge.team import files_at
from armbench.ledger.events import PinnedWorkflow, PlannedTeam, PulledTeam, RefTeam, WithoutTeam
from armbench.suites.armflows import pin_workflow
from armbench.suites.arms import resolve_arms
from armbench.suites.model import Suite
from armbench.suites.namespaces import ROLES_FILE

__all__ = ["pin_arm_workflows", "team_commit"]


def pin_arm_workflows(*, suite: Suite, mirror: Path, revision: str,
                      arm_teams: dict[str, PlannedTeam], config: ProjectConfig
                      ) -> dict[str, PinnedWorkflow]:
    """Arm name -> its pinned workflow, for every arm with a `workflow`; refuses what no trial
    could run (`suites.armflows`)."""
    pinned: dict[str, PinnedWorkflow] = {}
    by_commit: dict[str, dict[str, bytes]] = {}
    for arm in resolve_arms(suite):
        if arm.workflow is None:
            continue
        commit = team_commit(arm_teams.get(arm.name), revision)
        if commit not in by_commit:
            files = files_at(mirror, commit, "workflows")
            files.update(files_at(mirror, commit, ROLES_FILE))
            by_commit[commit] = files
        files = by_commit[commit]
        pinned[arm.name] = pin_workflow(arm.name, arm.workflow, files,
                                        active_workflow_namespaces(files, config), commit)
    return pinned


def team_commit(team: PlannedTeam | None, pulled: str) -> str:
    """The team commit an arm's workflow is read at: a ref's commit, a `without` arm's tree
    without its paths, else (pulled, none) the pulled revision."""
    match team:
        case WithoutTeam(commit=commit):
            return commit
        case RefTeam(revision=revision):
            return revision
        case PulledTeam(revision=revision) if revision:
            return revision
        case _:
            return pulled
