"""Deviations and unverified trials: what a trial ran as, against what its arm asked for."""

from __future__ import annotations

import re

from armbench.ledger.events import NoTeam, PlannedArm
from armbench.projections.results import TrialView
from armbench.projections.usage import trusted_usage

__all__ = ["deviation", "is_concrete_model", "not_verified", "same_model"]

_SUFFIX = re.compile(r"\[[^\]]*\]$")
_DIGIT = re.compile(r"\d")


def is_concrete_model(name: str | None) -> bool:
    """A provider's model id (has a version), not a tool's own selector such as `opus`."""
    return name is not None and _DIGIT.search(name) is not None


def same_model(requested: str, reported: str) -> bool:
    """Equal ids once a tool's context suffix such as `[1m]` is dropped."""
    if requested == reported:
        return True
    return _SUFFIX.sub("", requested).lower() == _SUFFIX.sub("", reported).lower()


def expected_team_revision(arm: PlannedArm, baseline: str) -> str | None:
    """The team revision the arm's trials should observe: its frozen team's (a ref's commit; the
    pulled revision for pulled and `without`), none for `none`, the baseline for an older plan."""
    team = arm.team
    if isinstance(team, NoTeam):
        return None
    return team.revision or baseline


def deviation(arm: PlannedArm, tv: TrialView, revision: str) -> bool:
    """The observed agent contradicts the arm on tool, team revision or a concrete model id."""
    agent = tv.prompt.agent if tv.prompt else None
    if agent is None:
        return False
    if agent.tool is not None and agent.tool != arm.tool:
        return True
    if agent.team_revision is not None and agent.team_revision != expected_team_revision(arm, revision):
        return True
    if agent.unenforced:
        return True
    req, rep = agent.model_requested, agent.model_reported
    return bool(req and rep and not same_model(req, rep) and is_concrete_model(req)
                and is_concrete_model(rep))


def not_verified(tv: TrialView) -> bool:
    """A value needed to verify the trial is missing: no reported model, or usage unread or out
    of range."""
    prompt = tv.prompt
    if prompt is None:
        return False
    if prompt.usage is not None and not trusted_usage(prompt.usage).verified:
        return True
    return prompt.agent is None or prompt.agent.model_reported is None
