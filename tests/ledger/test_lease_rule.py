"""The lease rule: a report or a check's result only from the lease that holds the step, once.

The decider refuses it (given events / when a report / then an error), the store refuses it at
`append` (real SQLite), and every log the real decider can write keeps it (hypothesis).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger_simulate import simulate

from armbench.aggregates.workflow import ReportStep, decide_report, fold
from armbench.ledger.checkfacts import check_breaks
from armbench.ledger.errors import DomainError, LeaseRuleBroken
from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    Event,
    LeaseExpired,
    RunStarted,
    StepLeased,
    StepReported,
    StepSpec,
    StepsPlanned,
)
from armbench.ledger.leases import lease_breaks
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)
LATER = AT + timedelta(minutes=1)
STEP = "trials.lane1.r0.t.a.check"
GIVEN: list[Event] = [
    RunStarted(run="r1", workflow="w", source_hash="h", timeout_s=600, at=AT),
    StepsPlanned(parent=None, steps=[StepSpec(id=STEP, kind="command", command="armbench check"),
                                     StepSpec(id="other", kind="command", command="true")]),
]


def leased(step: str = STEP, lease: str = "l1") -> StepLeased:
    return StepLeased(step=step, lease=lease, driver="d", at=AT, expires_at=LATER)


def check(step: str = STEP, result: str = "failed") -> CheckRan:
    return CheckRan(step=step, task="t", kind="trial", result=result)  # type: ignore[arg-type]


def reported(step: str = STEP, lease: str = "l1") -> StepReported:
    return StepReported(step=step, lease=lease, outcome="succeeded", at=LATER)


# ------------------------------------------------------------------ the decider


def test_the_decider_writes_a_check_before_its_own_steps_report() -> None:
    state = fold([*GIVEN, leased()])
    got = decide_report(state, ReportStep(lease="l1", now=LATER, report=reported(),
                                          facts=(check(),)))
    assert got == [check(), reported()]


def test_the_decider_refuses_a_check_for_another_step() -> None:
    state = fold([*GIVEN, leased()])
    with pytest.raises(DomainError) as refused:
        decide_report(state, ReportStep(lease="l1", now=LATER, report=reported(),
                                        facts=(check("other"),)))
    assert refused.value.message == (
        f"A check's result for step 'other' came with the report of step {STEP!r} in run r1: "
        "expected only the reported step's own check. Nothing was recorded.")


def test_the_decider_refuses_a_second_check_under_one_lease() -> None:
    state = fold([*GIVEN, leased(), check()])
    with pytest.raises(DomainError) as refused:
        decide_report(state, ReportStep(lease="l1", now=LATER, report=reported(),
                                        facts=(check("trials.lane1.r0.t.a.check", "passed"),)))
    assert refused.value.message == (
        f"Step {STEP!r} of run r1 already has a check's result under lease l1: expected at "
        "most one. Nothing was recorded.")


def test_the_decider_refuses_a_report_from_a_lapsed_lease_and_a_second_report() -> None:
    lapsed = fold([*GIVEN, leased(), LeaseExpired(step=STEP, lease="l1", at=LATER)])
    with pytest.raises(DomainError):
        decide_report(lapsed, ReportStep(lease="l1", now=LATER, report=reported()))
    done = fold([*GIVEN, leased(), check(), reported()])
    with pytest.raises(DomainError):
        decide_report(done, ReportStep(lease="l1", now=LATER, report=reported()))


# ------------------------------------------------------------------ the store


@pytest.fixture
def store(tmp_path: Path):
    s = EventStore(tmp_path / "l.sqlite")
    s.append("r1", GIVEN, expected_version=0)
    yield s
    s.close()


def refusal(store: EventStore, events: list[Event]) -> str:
    before = store.read_raw("r1")
    with pytest.raises(LeaseRuleBroken) as refused:
        store.append("r1", events, expected_version=store.version("r1"))
    assert store.read_raw("r1") == before, "a refused append writes nothing"
    return refused.value.message


def tail(why: str) -> str:
    return (f"{why}. Only the lease that holds a step reports it, once; ask the engine for a "
            "lease (armbench resume) instead of writing to the ledger.")


def test_the_store_refuses_a_check_for_a_step_never_leased(store: EventStore) -> None:
    assert refusal(store, [check()]) == (
        f"Run r1: refused to record event 3, a CheckRan for step {STEP!r}: it "
        + tail("comes for a step that no lease holds (never leased, or its lease lapsed)"))


def test_the_store_refuses_a_second_check_and_a_second_report(store: EventStore) -> None:
    store.append("r1", [leased(), check()], expected_version=2)
    assert refusal(store, [check(result="passed"), reported()]) == (
        f"Run r1: refused to record event 5, a CheckRan for step {STEP!r}: it "
        + tail("comes a second time under lease l1"))
    store.append("r1", [reported()], expected_version=4)
    assert refusal(store, [reported()]) == (
        f"Run r1: refused to record event 6, a StepReported for step {STEP!r}: it "
        + tail("comes after the step was already reported (under lease l1)"))
    assert refusal(store, [leased(lease="l2"), check(result="passed")]) == (
        f"Run r1: refused to record event 6, a StepLeased for step {STEP!r}: it "
        + tail("comes after the step was already reported (under lease l1)"))


def test_the_store_refuses_a_report_from_another_lease(store: EventStore) -> None:
    store.append("r1", [leased()], expected_version=2)
    assert refusal(store, [reported(lease="l9")]) == (
        f"Run r1: refused to record event 4, a StepReported for step {STEP!r}: it "
        + tail("comes from lease l9, but the step is leased to l1"))


def test_a_refused_batch_leaves_the_rule_as_it_was(store: EventStore, tmp_path: Path) -> None:
    store.append("r1", [leased()], expected_version=2)
    refusal(store, [check(), reported(), reported()])
    store.append("r1", [check(), reported()], expected_version=3)  # still allowed, once
    other = EventStore(tmp_path / "l.sqlite")  # another process: the rule read from the log
    try:
        assert refusal(other, [check()]).endswith(
            tail("comes after the step was already reported (under lease l1)"))
    finally:
        other.close()


# ------------------------------------------------------------------ every log the engine writes


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_log_the_decider_writes_keeps_the_lease_rule(data: st.DataObject) -> None:
    events = simulate(lambda options: data.draw(st.sampled_from(list(options))))
    assert lease_breaks(events) == []
    assert check_breaks(events) == []  # each check's result fits its report, step and lease


def test_lease_breaks_names_position_kind_step_and_why() -> None:
    breaks = lease_breaks([*GIVEN, leased(), check(), reported(), check("other"), reported()])
    assert [str(b) for b in breaks] == [
        "event 6: CheckRan for step 'other' comes for a step that no lease holds (never "
        "leased, or its lease lapsed)",
        f"event 7: StepReported for step {STEP!r} comes after the step was already reported "
        "(under lease l1)"]


# ------------------------------------------------------------------ a transient failure's retry


def failed_attempt(lease: str = "l1") -> AttemptFailed:
    return AttemptFailed(step=STEP, lease=lease, attempt=1, cause="overloaded", retry_at=LATER, at=LATER)


def test_the_store_takes_an_attempt_handed_back_and_then_a_fresh_lease_of_the_step(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    events = [*GIVEN, leased(), failed_attempt(), leased(lease="l2"), reported(lease="l2")]
    store.append("r1", events, expected_version=0)
    assert lease_breaks(store.events("r1")) == []


def test_the_store_refuses_an_attempt_handed_back_by_a_lease_that_does_not_hold_the_step(
        tmp_path: Path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    store.append("r1", [*GIVEN, leased()], expected_version=0)
    with pytest.raises(LeaseRuleBroken, match="AttemptFailed for step"):
        store.append("r1", [failed_attempt("l9")], expected_version=3)
    with pytest.raises(LeaseRuleBroken, match="no lease holds"):
        store.append("r1", [failed_attempt(), reported()], expected_version=3)
