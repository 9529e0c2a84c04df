"""Skill loads: for each arm whose team adds, removes or changes skills against the baseline team
revision, how many of its trials loaded each such skill, and how many of the defaults arm's did.

The changes come from the trials' own installs (`Agent.skill_changes`, a pure comparison of the
two revisions' skill folders made at lease), the loads from what each tool printed
(`Agent.skills_used`). A trial whose work ran with no observation counts as unknown, never as
not loaded. The defaults arm is the first arm on the pulled team revision.
"""

from __future__ import annotations

from collections import defaultdict

import msgspec

from armbench.ledger.events import PlanFrozen, PlannedArm, PulledTeam
from armbench.projections.record_types import RecordSkillChange, RecordSkillChanges
from armbench.projections.results import RunView, TrialView

__all__ = ["SkillLoadRow", "defaults_arm", "skill_change_entries", "skill_load_rows"]


class SkillLoadRow(msgspec.Struct, frozen=True, kw_only=True):
    """One row of the skill-load table."""

    arm: str
    skill: str
    change: str
    loaded: str
    """`loaded/observed`, `, N unknown` added when some trials went unseen, or `unknown (N)`."""
    loaded_defaults: str
    """The same for the defaults arm, or `-` when the suite has none."""


def defaults_arm(plan: PlanFrozen) -> PlannedArm | None:
    """The suite's defaults arm: the first on the pulled team revision."""
    return next((a for a in plan.arms if isinstance(a.team, PulledTeam)), None)


def skill_change_entries(view: RunView) -> list[RecordSkillChanges]:
    """The record's `skillChanges`: per arm that changes skills, the defaults arm and the skills."""
    plan = view.plan
    if plan is None:
        return []
    base = defaults_arm(plan)
    found: list[RecordSkillChanges] = []
    for arm, changes in _changes(view).items():
        if not changes or (base is not None and arm == base.name):
            continue
        found.append(RecordSkillChanges(
            arm=arm, defaults=base.name if base else None,
            skills=[RecordSkillChange(name=n, change=c) for n, c in sorted(changes.items())]))
    return found


def skill_load_rows(view: RunView) -> list[SkillLoadRow]:
    """The printed skill-load table's rows, in arm then skill order."""
    plan = view.plan
    if plan is None:
        return []
    base = defaults_arm(plan)
    by_arm: dict[str, list[TrialView]] = defaultdict(list)
    for tv in view.trials:
        by_arm[tv.trial.arm].append(tv)
    rows = []
    for entry in skill_change_entries(view):
        arm = entry.arm
        for skill in entry.skills:
            name = skill.name
            rows.append(SkillLoadRow(
                arm=arm, skill=name, change=skill.change, loaded=_cell(by_arm[arm], name),
                loaded_defaults=_cell(by_arm[base.name], name) if base else "-"))
    return rows


def _changes(view: RunView) -> dict[str, dict[str, str]]:
    """Arm -> the skill changes its trials' installs recorded (all alike: one install per arm)."""
    out: dict[str, dict[str, str]] = {a.name: {} for a in view.plan.arms} if view.plan else {}
    for tv in view.trials:
        agent = tv.prompt.agent if tv.prompt else None
        if agent is not None and agent.skill_changes:
            out.setdefault(tv.trial.arm, {}).update(agent.skill_changes)
    return out


def _cell(trials: list[TrialView], skill: str) -> str:
    """loaded/observed over the trials whose work ran."""
    ran = [tv for tv in trials if tv.prompt is not None]
    loaded = observed = 0
    for tv in ran:
        used = tv.prompt.agent.skills_used if tv.prompt and tv.prompt.agent else None
        if used is None or used.get(skill) == "unknown":
            continue
        observed += 1
        loaded += used.get(skill) == "loaded"
    unknown = len(ran) - observed
    if observed == 0:
        return f"unknown ({unknown})"
    return f"{loaded}/{observed}" + (f", {unknown} unknown" if unknown else "")
