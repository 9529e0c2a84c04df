"""A frozen team as the plan, the record and the Team column carry it. Pure."""

from __future__ import annotations

import pytest

from ledger.errors import Refusal
from projections.record import record_team
from projections.table import team_label
from suites.arms import resolve_arms
from suites.model import Arm, ArmValues, Suite, TeamWithout
from suites.plan import PlanInput, frozen_team

MAIN, BRANCH, MADE = "3f9c2ab" + "0" * 33, "81d0e4c" + "1" * 33, "c" * 40
WITHOUT = {"kind": "without", "paths": ["skills/release"], "revision": MAIN, "commit": MADE}


def test_the_team_column_reads_as_the_spec_shows_it() -> None:
    assert team_label({"kind": "pulled", "revision": MAIN}) == "pulled 3f9c2ab"
    assert team_label({"kind": "ref", "ref": "bench/no-skill", "revision": BRANCH}) == (
        "bench/no-skill 81d0e4c")
    assert team_label(WITHOUT) == "3f9c2ab without skills/release"
    assert team_label({"kind": "none"}) == "none"


def test_the_record_carries_the_team_as_written_and_not_the_plans_own_commit() -> None:
    assert record_team(WITHOUT) == {"kind": "without", "paths": ["skills/release"], "revision": MAIN}
    assert record_team({"kind": "none"}) == {"kind": "none"}
    assert record_team({}) is None


def test_plan_freezes_pulled_and_none_itself_and_refuses_an_unresolved_ref() -> None:
    suite = Suite(schema_version="v1alpha1", name="s", repo="https://example.invalid/r",
                  defaults=ArmValues(tool="agent"), timeout="1h",
                  arms=(Arm(name="base"), Arm(name="bare", team="none"), Arm(name="ref", team="v2"),
                        Arm(name="cut", team=TeamWithout(without=("skills/release",)))))
    base, bare, ref, cut = resolve_arms(suite)
    inp = PlanInput(suite=suite, suite_hash="h", tasks=[], task_hashes={}, team_aliases=None,
                    team_revision=MAIN, arm_teams={"cut": WITHOUT})
    assert frozen_team(base, inp) == {"kind": "pulled", "revision": MAIN}
    assert frozen_team(bare, inp) == {"kind": "none"}
    assert frozen_team(cut, inp) == WITHOUT
    with pytest.raises(Refusal) as refused:
        frozen_team(ref, inp)
    assert refused.value.code == "arm_team_unresolved" and 'Arm "ref"' in str(refused.value)
