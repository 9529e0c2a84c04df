"""A transient failure's retry, decided by the run's decider: given events, when a command,
then events. Time and the jitter come in with the command, so every driver retries alike."""

from __future__ import annotations

from datetime import datetime, timedelta

from given import given
from test_workflow_decider import (
    CAPS,
    CHECK,
    LATER,
    STARTED,
    T0,
    TTL,
    lease,
    leased,
    planned_trials,
)

from armbench.aggregates.workflow import LeaseStep, ReportStep, fold, retry_delay
from armbench.ledger.events import (
    Agent,
    AttemptFailed,
    Cost,
    Event,
    LeaseExpired,
    RunCancelRequested,
    StepLeased,
    StepReported,
    StepSkipped,
    StepSpec,
    Usage,
)

PROMPT = StepSpec(id="trials.p0", kind="prompt", tool="t", workspace="clone", lane=1, retries=2,
                  retry_backoff_s=10.0)
USAGE = Usage(tokens={"input": 12}, cost=Cost(amount=0.01, unit="USD"))
AGENT = Agent(tool="t", model_requested="m")


def failed(lease: str = "l1", *, transient: bool = True, at: datetime = LATER,
           cause: str = "overloaded") -> StepReported:
    return StepReported(step="trials.p0", lease=lease, outcome="error", at=at, cause=cause,
                        exit_code=1, message="t reported an error: API Error: 529",
                        usage=USAGE, agent=AGENT, transient=transient, duration_ms=900)


def handed_back(lease: str = "l1", *, attempt: int = 1, at: datetime = LATER,
                wait: float = 10.0) -> AttemptFailed:
    return AttemptFailed(step="trials.p0", lease=lease, attempt=attempt, cause="overloaded",
                         message="t reported an error: API Error: 529", exit_code=1,
                         duration_ms=900, usage=USAGE, agent=AGENT,
                         retry_at=at + timedelta(seconds=wait), at=at)


def report(lease: str, event: StepReported, *, jitter: float = 0.5,
           now: datetime = LATER) -> ReportStep:
    return ReportStep(lease=lease, now=now, report=event, jitter=jitter)


RUN = (*planned_trials(PROMPT, CHECK), leased("trials.p0"))


def test_the_backoff_doubles_for_each_retry_and_jitter_moves_it_a_quarter_either_way() -> None:
    assert [retry_delay(10, n, 0.5) for n in range(3)] == [10, 20, 40]
    assert retry_delay(10, 0, 0.0) == 7.5
    assert retry_delay(10, 1, 0.999999) < 25


def test_given_a_prompt_with_retries_when_it_fails_transiently_then_it_is_handed_back() -> None:
    given(*RUN).when(report("l1", failed())).then(handed_back())


def test_the_jitter_from_the_command_places_the_retry_in_its_window() -> None:
    given(*RUN).when(report("l1", failed(), jitter=0.0)).then(handed_back(wait=7.5))


def test_given_a_handed_back_prompt_when_asked_before_its_backoff_then_nothing_is_leased() -> None:
    given(*RUN, handed_back()).when(lease("l2", now=LATER + timedelta(seconds=9))).then()


def test_given_a_handed_back_prompt_when_its_backoff_passed_then_it_is_leased_again() -> None:
    now = LATER + timedelta(seconds=10)
    given(*RUN, handed_back()).when(lease("l2", now=now)).then(
        StepLeased(step="trials.p0", lease="l2", driver="d", attempt=2, at=now,
                   expires_at=now + TTL))


def test_its_check_waits_while_the_prompt_is_handed_back() -> None:
    state = fold([*RUN, handed_back()])
    assert state.steps["trials.p0"].status == "pending"
    assert state.steps["trials.c0"].status == "pending"
    assert "l1" not in state.leases


def test_the_second_retry_waits_twice_as_long() -> None:
    second = LATER + timedelta(seconds=30)
    history = (*RUN, handed_back(), leased("trials.p0", "l2", at=second, attempt=2))
    given(*history).when(report("l2", failed("l2", at=second), now=second)).then(
        handed_back("l2", attempt=2, at=second, wait=20.0))


def test_given_its_retries_spent_when_it_fails_transiently_again_then_it_settles_an_error() -> None:
    t2, t3 = LATER + timedelta(seconds=10), LATER + timedelta(seconds=40)
    history = (*RUN, handed_back(), leased("trials.p0", "l2", at=t2, attempt=2),
               handed_back("l2", attempt=2, at=t2, wait=20), leased("trials.p0", "l3", at=t3, attempt=3))
    last = failed("l3", at=t3)
    given(*history).when(report("l3", last, now=t3)).then(last)


def test_an_error_of_the_agent_is_not_retried() -> None:
    own = failed(transient=False, cause="tool_error")
    given(*RUN).when(report("l1", own)).then(own)


def test_a_step_without_retries_is_not_retried() -> None:
    once = StepSpec(id="trials.p0", kind="prompt", tool="t", workspace="clone", lane=1)
    history = (*planned_trials(once, CHECK), leased("trials.p0"))
    given(*history).when(report("l1", failed())).then(failed())


def test_a_cancelled_run_does_not_retry() -> None:
    given(*RUN, RunCancelRequested(at=LATER)).when(report("l1", failed())).then(failed())


def test_a_retry_that_could_not_start_before_the_runs_deadline_is_not_handed_back() -> None:
    near_end = T0 + timedelta(seconds=STARTED.timeout_s - 5)
    late = failed(at=near_end)
    given(*RUN).when(report("l1", late, now=near_end)).then(late)


def test_retried_attempts_do_not_count_as_lapsed_leases() -> None:
    t2, t3 = LATER + timedelta(seconds=10), LATER + timedelta(seconds=40)
    many = StepSpec(id="trials.p0", kind="prompt", tool="t", workspace="clone", lane=1, retries=5,
                    retry_backoff_s=10.0)
    history: list[Event] = [*planned_trials(many, CHECK), leased("trials.p0"), handed_back(),
                            leased("trials.p0", "l2", at=t2, attempt=2),
                            handed_back("l2", attempt=2, at=t2, wait=20),
                            leased("trials.p0", "l3", at=t3, attempt=3),
                            handed_back("l3", attempt=3, at=t3, wait=40)]
    now = t3 + timedelta(seconds=40)
    given(*history).when(LeaseStep(caps=CAPS, lease="l4", now=now, ttl=TTL, max_attempts=3)).then(
        StepLeased(step="trials.p0", lease="l4", driver="d", attempt=4, at=now, expires_at=now + TTL))


def test_leases_that_lapsed_after_a_retry_still_settle_the_step_once_exhausted() -> None:
    now = LATER + timedelta(minutes=5)
    lapsed: list[Event] = []
    for n, name in enumerate(("l2", "l3", "l4"), start=2):
        lapsed += [leased("trials.p0", name, attempt=n), LeaseExpired(step="trials.p0", lease=name, at=LATER)]
    given(*RUN, handed_back(), *lapsed).when(lease("l5", now=now)).then(
        StepSkipped(step="trials.p0", reason="attempts_exhausted", detail="4", at=now))
