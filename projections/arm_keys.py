"""Which of team, tool, model and workflow two arms differ in, and which way a pair reads. Pure.

Arms are a record's `arms[]` entries (`RecordArm`). The model key is the arm's model choice, effort included
(the spec's `model: { name, effort }`): on one tool, the resolved model and effort; across tools,
the alias (an alias is one choice that resolves per tool), or the literal model and effort when
there is none. A team is its choice (pulled, none, a ref, the `without` paths in any order),
never the revision it resolved to. For team a pair is measured from none, then without, then a
ref, then pulled; otherwise from the arm listed first (team-asset-arms.md, "Comparing arms").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from armbench.projections.record_types import RecordArm, RecordArmWorkflow

__all__ = ["PAIR_KEYS", "PairKey", "arm_pairs", "differing_keys", "team_choice", "workflow_name"]

PairKey = Literal["team", "tool", "model", "workflow"]
PAIR_KEYS: tuple[PairKey, ...] = ("team", "tool", "model", "workflow")
TEAM_BASELINE_ORDER = ("none", "without", "ref", "pulled")

Entry = RecordArm


def team_choice(arm: Entry) -> tuple[str, ...]:
    """The arm's team choice as written, never the revision it resolved to (no team: pulled)."""
    team = arm.team
    if team is None:
        return ("pulled",)
    if team.kind == "ref":
        return (team.kind, str(team.ref))
    if team.kind == "without":
        return (team.kind, *sorted(team.paths or []))
    return (team.kind,)


def workflow_name(arm: Entry) -> str | None:
    """The workflow the arm runs (a name, or `{name, sourceHash}`), or None."""
    workflow = arm.workflow
    return workflow.name if isinstance(workflow, RecordArmWorkflow) else workflow


def _written_model(arm: Entry) -> tuple[str | None, ...]:
    return ("alias", arm.alias) if arm.alias else ("model", arm.model, arm.effort)


def differing_keys(a: Entry, b: Entry) -> list[PairKey]:
    """The keys of team, tool, model and workflow in which two record arms differ."""
    same_tool = a.tool == b.tool
    model_differs = ((a.model, a.effort) != (b.model, b.effort)
                     if same_tool else _written_model(a) != _written_model(b))
    differs = {"team": team_choice(a) != team_choice(b), "tool": not same_tool,
               "model": model_differs, "workflow": workflow_name(a) != workflow_name(b)}
    return [key for key in PAIR_KEYS if differs[key]]


def _direction(key: PairKey, first: Entry, second: Entry) -> tuple[Entry, Entry]:
    if key == "team":
        rank = TEAM_BASELINE_ORDER.index
        if rank(team_choice(second)[0]) < rank(team_choice(first)[0]):
            return second, first
    return first, second


def arm_pairs(arms: Sequence[Entry]) -> list[tuple[Entry, Entry, PairKey]]:
    """Every two arms that differ in exactly one key, as (from, to, key), in arm order."""
    pairs = []
    for i, first in enumerate(arms):
        for second in arms[i + 1:]:
            keys = differing_keys(first, second)
            if len(keys) == 1:
                pairs.append((*_direction(keys[0], first, second), keys[0]))
    return pairs
