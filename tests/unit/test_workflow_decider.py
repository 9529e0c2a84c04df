"""The run's deciders, given events, when a command, then events: no store, no threads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
from given import given

from armbench.aggregates.workflow import CancelRun, Caps, LeaseStep, RenewLease, ReportStep
from armbench.ledger.errors import DomainError, UnknownLease
from armbench.ledger.events import (
    CheckRan,
    Event,
    LeaseExpired,
    LeaseRenewed,
    RunCancelRequested,
    RunEnded,
    RunStarted,
    StepLeased,
    StepReported,
    StepSkipped,
    StepSpec,
    StepsPlanned,
    WorkspacePrepared,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TTL = timedelta(seconds=60)
LATER = T0 + timedelta(seconds=10)
CAPS = Caps(driver="d", tools=frozenset({"t"}))

STARTED = RunStarted(run="r1", workflow="w", source_hash="h", timeout_s=3600, at=T0)
PLAN = StepSpec(id="plan", kind="command", command="plan")
TRIALS = StepSpec(id="trials", kind="workflow", needs=["plan"], from_step="plan", independent=True)
REPORT = StepSpec(id="report", kind="command", command="report", final=True)
PLANNED = StepsPlanned(parent=None, steps=[PLAN, TRIALS, REPORT])
PROMPT = StepSpec(id="trials.p0", kind="prompt", tool="t", workspace="clone", lane=1)
CHECK = StepSpec(id="trials.c0", kind="command", command="check", needs=["trials.p0"],
                 workspace="continue", lane=1)


def lease(lease: str = "l1", *, now: datetime = LATER, caps: Caps = CAPS, attempts: int = 3) -> LeaseStep:
    return LeaseStep(caps=caps, lease=lease, now=now, ttl=TTL, max_attempts=attempts)


def leased(step: str, lease: str = "l1", *, at: datetime = LATER, attempt: int = 1) -> StepLeased:
    return StepLeased(step=step, lease=lease, driver="d", attempt=attempt, at=at, expires_at=at + TTL)


def reported(step: str, lease: str = "l1", outcome: str = "succeeded", **outputs: object) -> StepReported:
    return StepReported(step=step, lease=lease, outcome=outcome, at=LATER,  # type: ignore[arg-type]
                        outputs=dict(outputs))


def planned_trials(*steps: StepSpec) -> list[Event]:
    """The run after plan: its report filled the trials sub-workflow with `steps`."""
    return [STARTED, PLANNED, leased("plan", "l0"), reported("plan", "l0"),
            StepsPlanned(parent="trials", steps=list(steps))]


def check_ran(step: str = "trials.c0") -> CheckRan:
    return CheckRan(step=step, task="t1", kind="trial", result="passed")


# ------------------------------------------------------------------- decide_next (LeaseStep)


def test_when_a_run_has_not_started_then_no_step_is_leased() -> None:
    given().when(lease()).refuses(DomainError, "This run has not started")


def test_given_a_started_run_when_a_driver_asks_then_the_first_step_is_leased() -> None:
    given(STARTED, PLANNED).when(lease()).then(leased("plan"))


def test_given_a_step_leased_then_the_next_ask_waits_for_it() -> None:
    given(STARTED, PLANNED, leased("plan")).when(lease("l2")).then()


def test_given_a_lease_past_its_time_then_it_expires_first() -> None:
    late = LATER + TTL
    given(STARTED, PLANNED, leased("plan")).when(lease("l2", now=late)).then(
        LeaseExpired(step="plan", lease="l1", at=late))


def test_given_an_expired_lease_then_the_step_is_leased_again_as_a_second_attempt() -> None:
    late = LATER + TTL
    given(STARTED, PLANNED, leased("plan"), LeaseExpired(step="plan", lease="l1", at=late)).when(
        lease("l2", now=late)).then(leased("plan", "l2", at=late, attempt=2))


def test_given_a_step_whose_leases_lapsed_max_attempts_times_then_it_settles_exhausted() -> None:
    late = LATER + TTL
    given(STARTED, PLANNED, leased("plan", attempt=3),
          LeaseExpired(step="plan", lease="l1", at=late)).when(lease("l2", now=late)).then(
        StepSkipped(step="plan", reason="attempts_exhausted", detail="3", at=late))


def test_given_the_plan_filled_the_trials_then_the_prompt_is_leased_before_its_check() -> None:
    given(*planned_trials(PROMPT, CHECK)).when(lease()).then(leased("trials.p0"))


def test_given_a_failed_prompt_then_its_check_is_skipped_with_the_unmet_need() -> None:
    given(*planned_trials(PROMPT, CHECK), leased("trials.p0"),
          reported("trials.p0", outcome="failed")).when(lease("l2")).then(
        StepSkipped(step="trials.c0", reason="needs_unmet", detail="trials.p0", at=LATER))


def test_given_a_tool_the_sole_driver_lacks_then_its_step_is_skipped_unavailable() -> None:
    given(*planned_trials(PROMPT)).when(lease(caps=Caps(driver="d", tools=frozenset()))).then(
        StepSkipped(step="trials.p0", reason="tool_unavailable", detail="t", at=LATER))


def test_given_a_tool_one_of_many_drivers_lacks_then_the_step_waits_for_another() -> None:
    given(*planned_trials(PROMPT)).when(
        lease(caps=Caps(driver="d", tools=frozenset(), sole=False))).then()


def test_given_every_step_settled_but_the_finally_step_then_it_is_leased() -> None:
    given(*planned_trials(PROMPT), leased("trials.p0"), reported("trials.p0")).when(
        lease("l2")).then(leased("report", "l2"))


def test_given_every_step_settled_then_the_run_ends_with_the_finally_outputs() -> None:
    given(*planned_trials(PROMPT), leased("trials.p0"), reported("trials.p0"),
          leased("report", "l2"), reported("report", "l2", text="done")).when(lease("l3")).then(
        RunEnded(state="succeeded", at=LATER, outputs={"text": "done"}))


def test_given_a_failed_trial_in_an_independent_sub_workflow_then_the_run_still_succeeds() -> None:
    given(*planned_trials(PROMPT), leased("trials.p0"), reported("trials.p0", outcome="failed"),
          leased("report", "l2"), reported("report", "l2")).when(lease("l3")).then(
        RunEnded(state="succeeded", at=LATER))


def test_given_a_failed_finally_step_then_the_run_ends_failed() -> None:
    given(*planned_trials(PROMPT), leased("trials.p0"), reported("trials.p0"),
          leased("report", "l2"), reported("report", "l2", outcome="error")).when(
        lease("l3")).then(RunEnded(state="failed", at=LATER))


def test_given_the_deadline_passed_then_pending_steps_are_skipped_timed_out() -> None:
    past = T0 + timedelta(seconds=3600)
    given(*planned_trials(PROMPT, CHECK)).when(lease(now=past)).then(
        StepSkipped(step="trials.p0", reason="timed_out", at=past),
        StepSkipped(step="trials.c0", reason="timed_out", at=past))


def test_given_a_cancel_then_pending_steps_are_skipped_and_the_run_ends_cancelled() -> None:
    stopped = [*planned_trials(PROMPT), RunCancelRequested(at=LATER)]
    given(*stopped).when(lease()).then(StepSkipped(step="trials.p0", reason="cancelled", at=LATER))
    given(*stopped, StepSkipped(step="trials.p0", reason="cancelled", at=LATER),
          leased("report", "l2"), reported("report", "l2")).when(lease("l3")).then(
        RunEnded(state="cancelled", at=LATER))


def test_given_an_ended_run_then_nothing_more_happens() -> None:
    given(STARTED, PLANNED, RunEnded(state="failed", at=LATER)).when(lease()).then()


# ------------------------------------------------------------------ decide_report (ReportStep)


def test_given_a_leased_step_when_reported_then_the_report_is_recorded() -> None:
    report = reported("trials.p0")
    given(*planned_trials(PROMPT), leased("trials.p0")).when(
        ReportStep(lease="l1", now=LATER, report=report)).then(report)


def test_given_a_plan_when_it_reports_a_definition_then_the_sub_workflow_is_filled() -> None:
    definition = msgspec.to_builtins([PROMPT])
    given(STARTED, PLANNED, leased("plan")).when(ReportStep(
        lease="l1", now=LATER, report=reported("plan", definition=definition, n=1))).then(
        reported("plan", n=1), StepsPlanned(parent="trials", steps=[PROMPT]))


def test_given_a_plan_when_it_fails_then_the_sub_workflow_is_skipped_unmet() -> None:
    given(STARTED, PLANNED, leased("plan")).when(ReportStep(
        lease="l1", now=LATER, report=reported("plan", outcome="failed"))).then(
        reported("plan", outcome="failed"),
        StepSkipped(step="trials", reason="needs_unmet", detail="plan", at=LATER))


def test_given_a_check_when_reported_with_its_result_then_the_result_comes_first() -> None:
    history = [*planned_trials(PROMPT, CHECK), leased("trials.p0"), reported("trials.p0"),
               leased("trials.c0", "l2")]
    given(*history).when(ReportStep(lease="l2", now=LATER, report=reported("trials.c0", "l2"),
                                    facts=(check_ran(),))).then(
        check_ran(), reported("trials.c0", "l2"))


def test_given_another_steps_lease_when_reported_then_it_is_refused() -> None:
    given(*planned_trials(PROMPT, CHECK), leased("trials.p0")).when(
        ReportStep(lease="l1", now=LATER, report=reported("trials.c0"))).refuses(
        UnknownLease, "Lease l1 does not hold step 'trials.c0' in run r1")


def test_given_a_lapsed_lease_when_reported_then_it_is_refused() -> None:
    given(*planned_trials(PROMPT), leased("trials.p0"),
          LeaseExpired(step="trials.p0", lease="l1", at=LATER)).when(
        ReportStep(lease="l1", now=LATER, report=reported("trials.p0"))).refuses(
        UnknownLease, "it expired and the step went to another driver")


def test_given_a_check_when_another_steps_result_comes_with_it_then_it_is_refused() -> None:
    given(*planned_trials(PROMPT, CHECK), leased("trials.p0")).when(ReportStep(
        lease="l1", now=LATER, report=reported("trials.p0"), facts=(check_ran("trials.c0"),))).refuses(
        DomainError, "A check's result for step 'trials.c0' came with the report of step 'trials.p0'")


def test_given_a_check_with_a_result_when_a_second_comes_then_it_is_refused() -> None:
    history = [*planned_trials(PROMPT, CHECK), leased("trials.p0"), reported("trials.p0"),
               leased("trials.c0", "l2"), check_ran()]
    given(*history).when(ReportStep(lease="l2", now=LATER, report=reported("trials.c0", "l2"),
                                    facts=(check_ran(),))).refuses(
        DomainError, "already has a check's result under lease l2")


# ------------------------------------------------------------------- decide_renew (RenewLease)


def test_given_a_held_lease_when_renewed_then_it_runs_to_the_new_time() -> None:
    later = LATER + TTL
    given(STARTED, PLANNED, leased("plan")).when(RenewLease(lease="l1", expires_at=later)).then(
        LeaseRenewed(step="plan", lease="l1", expires_at=later))


def test_given_a_lapsed_lease_when_renewed_then_it_is_refused() -> None:
    given(STARTED, PLANNED, leased("plan"), LeaseExpired(step="plan", lease="l1", at=LATER)).when(
        RenewLease(lease="l1", expires_at=LATER + TTL)).refuses(
        UnknownLease, "Lease l1 is not held in run r1; it cannot be renewed.")


# -------------------------------------------------------------------- decide_cancel (CancelRun)


def test_given_a_running_run_when_cancelled_then_the_member_asked_it_to_stop() -> None:
    given(STARTED, PLANNED).when(CancelRun(now=LATER)).then(RunCancelRequested(at=LATER))


def test_given_a_cancelled_run_when_cancelled_again_then_nothing_is_added() -> None:
    given(STARTED, PLANNED, RunCancelRequested(at=T0)).when(CancelRun(now=LATER)).then()


def test_given_a_cancelled_run_when_a_fault_stops_it_then_the_fault_is_recorded() -> None:
    given(STARTED, PLANNED, RunCancelRequested(at=T0)).when(
        CancelRun(now=LATER, fault="disk_full")).then(
        RunCancelRequested(at=LATER, by="armbench", fault="disk_full"))


def test_given_a_fault_when_another_comes_then_the_first_stands() -> None:
    given(STARTED, PLANNED, RunCancelRequested(at=T0, by="armbench", fault="disk_full")).when(
        CancelRun(now=LATER, fault="disk_full")).then()


def test_given_an_ended_run_when_cancelled_then_nothing_is_added() -> None:
    given(STARTED, PLANNED, RunEnded(state="succeeded", at=T0)).when(CancelRun(now=LATER)).then()


# ------------------------------------------- a clone's check stays with the driver that holds it


def _agent_done_by(driver: str, *, alone: bool = False) -> list[Event]:
    """Trial 0 (and trial 1, planned first, unless `alone`); driver `driver` ran trial 0's
    agent in its clone and reported it."""
    other = StepSpec(id="trials.p1", kind="prompt", tool="t", workspace="clone", lane=2)
    return [*planned_trials(*([] if alone else [other]), PROMPT, CHECK),
            StepLeased(step="trials.p0", lease="l1", driver=driver, at=LATER,
                       expires_at=LATER + TTL),
            WorkspacePrepared(step="trials.p0", lease="l1", path="/tmp/clone", commit="c",
                              duration_ms=1),
            reported("trials.p0")]


def test_given_another_driver_holds_the_clone_then_its_check_is_not_leased_to_this_one() -> None:
    given(*_agent_done_by("machine-a")).when(lease("l2", caps=CAPS)).then(
        StepLeased(step="trials.p1", lease="l2", driver="d", at=LATER, expires_at=LATER + TTL))


def test_given_this_driver_holds_the_clone_then_its_check_comes_before_other_trials() -> None:
    given(*_agent_done_by("d")).when(lease("l2")).then(
        StepLeased(step="trials.c0", lease="l2", driver="d", at=LATER, expires_at=LATER + TTL))


def test_given_the_clones_driver_is_gone_a_lease_time_then_any_driver_takes_the_check() -> None:
    late = LATER + TTL
    given(*_agent_done_by("machine-a", alone=True)).when(lease("l2", now=late)).then(
        StepLeased(step="trials.c0", lease="l2", driver="d", at=late, expires_at=late + TTL))


JUDGE = StepSpec(id="trials.j0", kind="command", command="judge", needs=["trials.p0"],
                 workspace="continue", lane=1)


def _judged_by(driver: str, at: datetime) -> list[Event]:
    """Trial 0 alone, its agent and then its judge run by `driver` in its clone, the judge
    reported at `at`."""
    return [*planned_trials(PROMPT, JUDGE, CHECK),
            StepLeased(step="trials.p0", lease="l1", driver=driver, at=LATER,
                       expires_at=LATER + TTL),
            WorkspacePrepared(step="trials.p0", lease="l1", path="/tmp/clone", commit="c",
                              duration_ms=1),
            reported("trials.p0"),
            StepLeased(step="trials.j0", lease="l2", driver=driver, at=LATER,
                       expires_at=LATER + TTL),
            StepReported(step="trials.j0", lease="l2", outcome="succeeded", at=at)]


def test_given_a_judge_worked_in_the_clone_later_then_the_check_is_held_from_its_report() -> None:
    judged = LATER + timedelta(seconds=50)
    past_agent = LATER + TTL + timedelta(seconds=5)
    given(*_judged_by("machine-a", judged)).when(lease("l3", now=past_agent)).then()
    given(*_judged_by("machine-a", judged)).when(lease("l3", now=judged + TTL)).then(
        StepLeased(step="trials.c0", lease="l3", driver="d", at=judged + TTL,
                   expires_at=judged + 2 * TTL))
