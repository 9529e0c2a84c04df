"""Each arm's team, resolved against the team mirror before a run exists (team-asset-arms.md).

A ref resolves from the refs this checkout's mirror already has (nothing is fetched); a
`without` is checked against pull's own resolvers at the pulled revision and made into a commit
of the pulled revision without those paths, which delivery installs. Every refusal leaves no run.
"""

from __future__ import annotations

from pathlib import Path

from armbench.edge.team import commit_without, files_at, resolve_team_ref, team_branches
from armbench.ledger.errors import Refusal
from armbench.ledger.events import PlannedTeam, RefTeam, WithoutTeam
from armbench.suites import namespaces
from armbench.suites.arms import ResolvedArm, resolve_arms, same_team, team_kind
from armbench.suites.model import Suite, TeamWithout
from armbench.suites.teamtree import asset_namespaces
from armbench.suites.without import without_problems
from armbench.suites.yamlfile import load_yaml

__all__ = ["resolve_arm_teams", "unresolved_message"]


def resolve_arm_teams(*, suite: Suite, suite_file: str, suite_text: bytes, mirror: Path,
                      revision: str, roles: list[str]) -> dict[str, PlannedTeam]:
    """Arm name -> its frozen team, for every arm on a ref or `without`; refuses what cannot run."""
    arms = [a for a in resolve_arms(suite) if team_kind(a.team) in ("ref", "without")]
    if not arms:
        return {}
    files = files_at(mirror, revision)
    roles_file, _ = namespaces.read_roles(files)
    spaces = asset_namespaces(roles_file, roles)
    lines = load_yaml(suite_text, file=suite_file)
    teams: dict[str, PlannedTeam] = {}
    problems: list[str] = []
    code = "without_path_missing"
    for arm in arms:
        if isinstance(arm.team, TeamWithout):
            where = _written_at(suite, arm)
            found = without_problems(arm.team.without, files, spaces)
            for p in found:
                line = lines.line_of(f"{where}.without[{p.index}]")
                problems.append(f'Arm "{arm.name}" runs without team repo path "{p.path}" '
                                f"({suite_file}:{line}), but {p.reason}")
                code = p.code
            if not found:
                paths = list(arm.team.without)
                teams[arm.name] = WithoutTeam(paths=paths, revision=revision,
                                              commit=commit_without(mirror, revision, paths))
        else:
            commit = resolve_team_ref(mirror, arm.team)
            if commit is None:
                raise Refusal(unresolved_message(arm.name, arm.team, team_branches(mirror)),
                              code="arm_team_unresolved")
            teams[arm.name] = RefTeam(ref=arm.team, revision=commit)
    if problems:
        raise Refusal("; ".join(problems) + ". Fix the arm's without list (or make a branch of the "
                      "team repo without them and name it as the arm's team), push it, run armbench "
                      "pull, and start again. No run was started.", code=code)
    return teams


def unresolved_message(arm: str, ref: str, branches: list[str]) -> str:
    """The arm_team_unresolved message, as the spec words it."""
    return (f'Arm "{arm}" runs on team ref "{ref}", which is no branch, tag or commit of this '
            "checkout's team repo that holds armbench.yaml. Its branches: "
            f"{', '.join(branches) or 'none'}. Fetch it, or fix the arm's team, push it, run "
            "armbench pull, and start again.")


def _written_at(suite: Suite, arm: ResolvedArm) -> str:
    """Where the arm's team was written: its own entry, the matrix's value, or the defaults."""
    if arm.origin == "arms":
        index = int(arm.path.removeprefix("$.arms[").rstrip("]"))
        if suite.arms[index].team is not None:
            return f"{arm.path}.team"
    elif suite.matrix is not None:
        for index, value in enumerate(suite.matrix.team or ()):
            if same_team(value, arm.team):
                return f"$.matrix.team[{index}]"
    return "$.defaults.team"
