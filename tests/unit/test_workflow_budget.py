"""The run's budget, decided by the run's decider: given events, when a command, then events.
Once the cost the prompt steps stated reaches a step's budget, the step is not leased but
skipped (`budget`), so every driver obeys it; a cost not stated counts nothing, never zero."""

from __future__ import annotations

from given import given
from test_workflow_decider import CAPS, LATER, lease, leased, planned_trials

from armbench.aggregates.workflow import fold
from armbench.ledger.events import (
    AttemptFailed,
    Cost,
    Event,
    StepLeased,
    StepReported,
    StepSkipped,
    StepSpec,
    Usage,
)

CAP = Cost(amount=0.015, unit="USD")


def prompt(i: int, budget: Cost | None = CAP) -> StepSpec:
    return StepSpec(id=f"trials.p{i}", kind="prompt", tool="t", workspace="clone", lane=1,
                    budget=budget)


def spent(i: int, cost: Cost | None, lease: str | None = None) -> list[Event]:
    """Trial i leased and reported, stating `cost` (None: no cost stated)."""
    lease = lease or f"l{i}"
    return [leased(f"trials.p{i}", lease),
            StepReported(step=f"trials.p{i}", lease=lease, outcome="succeeded", at=LATER,
                         usage=Usage(tokens={"input": 1}, cost=cost))]


USD = Cost(amount=0.01, unit="USD")
RUN = planned_trials(prompt(0), prompt(1), prompt(2))


def next_lease(lease_id: str, step: str) -> StepLeased:
    return StepLeased(step=step, lease=lease_id, driver=CAPS.driver, attempt=1, at=LATER,
                      expires_at=LATER + (leased("x").expires_at - leased("x").at))


def test_given_spend_below_the_budget_when_a_driver_asks_then_the_next_trial_is_leased() -> None:
    given(*RUN, *spent(0, USD)).when(lease("l9")).then(next_lease("l9", "trials.p1"))


def test_given_the_stated_spend_reached_the_budget_when_a_driver_asks_then_the_rest_are_skipped() -> None:
    given(*RUN, *spent(0, USD), *spent(1, USD)).when(lease("l9")).then(
        StepSkipped(step="trials.p2", reason="budget", detail="0.015 USD", at=LATER))


def test_a_cost_not_stated_or_in_another_unit_is_never_counted_as_spent() -> None:
    eur = Cost(amount=5.0, unit="EUR")
    given(*RUN, *spent(0, None), *spent(1, eur)).when(lease("l9")).then(
        next_lease("l9", "trials.p2"))


def test_a_hostile_cost_counts_nothing() -> None:
    for amount in (float("nan"), float("-inf"), -1.0):
        state = fold([*RUN, *spent(0, Cost(amount=amount, unit="USD"))])
        assert state.spent == {}


def test_a_failed_attempts_stated_cost_is_spent_too() -> None:
    attempt = AttemptFailed(step="trials.p0", lease="l0x", attempt=1, cause="overloaded",
                            usage=Usage(cost=Cost(amount=0.02, unit="USD")),
                            retry_at=LATER, at=LATER)
    # its retry is not leased either: the lane's head is skipped, the next ask skips the next
    given(*RUN, leased("trials.p0", "l0x"), attempt).when(lease("l9")).then(
        StepSkipped(step="trials.p0", reason="budget", detail="0.015 USD", at=LATER))


def test_a_step_without_a_budget_is_leased_whatever_was_spent() -> None:
    run = planned_trials(prompt(0), prompt(1, budget=None))
    given(*run, *spent(0, Cost(amount=99.0, unit="USD"))).when(lease("l9")).then(
        next_lease("l9", "trials.p1"))


def test_the_run_whose_rest_was_skipped_for_its_budget_still_succeeds() -> None:
    run = planned_trials(prompt(0), prompt(1))
    skipped = StepSkipped(step="trials.p1", reason="budget", detail="0.015 USD", at=LATER)
    state = fold([*run, *spent(0, Cost(amount=1.0, unit="USD")), skipped])
    assert state.steps["trials"].status == "succeeded"
    assert state.spent == {"USD": 1.0}
