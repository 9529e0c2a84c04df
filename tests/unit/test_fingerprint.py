"""A trial's agent fingerprint (`projections.record.fingerprint`): written only when its tool, the
tool's version, a model and its team revision are all known; equal for two trials of one agent,
different when any shared part differs, blind to what is the trial's own."""

from __future__ import annotations

import msgspec
import pytest

from armbench.ledger.events import Agent
from armbench.projections.record import FINGERPRINTED, fingerprint

KNOWN = Agent(tool="codex", tool_version="0.47.1", model_requested="gpt-5", model_reported="gpt-5",
              effort="high", team_revision="a" * 40, assets_hash="b" * 64, roles=["web"],
              project_commit="c" * 40, session_id="s1", network="private")


def test_two_trials_of_one_agent_share_it_whatever_is_their_own() -> None:
    other_trial = msgspec.structs.replace(KNOWN, project_commit="d" * 40, session_id="s2",
                                          network="host", ports=[8080])
    found = fingerprint(KNOWN)
    assert found is not None and len(found) == 64
    assert fingerprint(other_trial) == found


@pytest.mark.parametrize("part", FINGERPRINTED)
def test_any_shared_part_that_differs_is_another_agent(part: str) -> None:
    value = getattr(KNOWN, part)
    changed = ["api"] if isinstance(value, list) else f"{value}-other"
    assert fingerprint(msgspec.structs.replace(KNOWN, **{part: changed})) != fingerprint(KNOWN)


@pytest.mark.parametrize("unknown", [{"tool": None}, {"tool_version": None}, {"team_revision": None},
                                     {"model_requested": None, "model_reported": None}])
def test_partial_data_never_claims_the_same_agent(unknown: dict[str, None]) -> None:
    assert fingerprint(msgspec.structs.replace(KNOWN, **unknown)) is None


def test_a_reported_model_alone_is_a_known_model() -> None:
    assert fingerprint(msgspec.structs.replace(KNOWN, model_requested=None)) is not None


def test_the_workflow_an_arm_ran_is_part_of_the_agent() -> None:
    assert fingerprint(KNOWN, "f" * 64) not in (None, fingerprint(KNOWN), fingerprint(KNOWN, "e" * 64))
