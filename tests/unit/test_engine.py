"""The generic engine with a fake host: plan fills a sub-workflow, lanes, skips, finally."""

from __future__ import annotations

import itertools
import threading
from datetime import UTC, datetime, timedelta

from fake_host import FakeHost

from armbench.aggregates.workflow import Caps
from armbench.engine.local_driver import LocalDriver
from armbench.engine.protocol import Lease, Report, Wait
from armbench.engine.service import Engine, Workflow
from armbench.ledger.events import StepSkipped, StepSpec
from armbench.ledger.store import EventStore


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


WORKFLOW = Workflow(name="w", steps=[
    StepSpec(id="plan", kind="command", command="plan"),
    StepSpec(id="trials", kind="workflow", needs=["plan"], from_step="plan", independent=True),
    StepSpec(id="report", kind="command", command="report", final=True),
])


def make(tmp_path, host, clock=None):
    counter = itertools.count()
    store = EventStore(tmp_path / "l.sqlite")
    return Engine(store, host, clock=clock or FakeClock(),
                  new_id=lambda p: f"{p}{next(counter)}"), store


def ok_tool(lease: Lease, *, cancel: threading.Event) -> Report:
    assert lease.cwd and lease.cwd.startswith("/ws/")
    return Report(outcome="succeeded", duration_ms=5)


def test_given_a_plan_when_driven_then_every_step_runs_and_report_is_final(tmp_path):
    host = FakeHost(4)
    engine, store = make(tmp_path, host)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)
    done = LocalDriver(engine, tools={"t": ok_tool}, commands=None, lanes=2).drive(run)
    assert done.state == "succeeded"
    assert done.outputs == {"text": "done"}
    assert host.executed[0] == "plan" and host.executed[-1] == "report"
    assert sorted(x for x in host.executed if x.startswith("trials.c")) == [
        f"trials.c{i}" for i in range(4)]


def test_given_a_tool_no_driver_runs_then_its_steps_are_skipped_and_the_run_succeeds(tmp_path):
    host = FakeHost(2, tool="missing")
    engine, store = make(tmp_path, host)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)
    done = LocalDriver(engine, tools={"t": ok_tool}, commands=None).drive(run)
    assert done.state == "succeeded"
    skips = [r.event for r in store.read(run) if isinstance(r.event, StepSkipped)]
    assert {s.step: s.reason for s in skips} == {
        "trials.p0": "tool_unavailable", "trials.p1": "tool_unavailable",
        "trials.c0": "needs_unmet", "trials.c1": "needs_unmet"}


def test_given_a_failed_prompt_then_its_check_is_skipped_and_its_clone_released(tmp_path):
    host = FakeHost(1)
    engine, store = make(tmp_path, host)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)

    def failing(lease: Lease, *, cancel: threading.Event) -> Report:
        return Report(outcome="error", cause="exit", exit_code=1)

    LocalDriver(engine, tools={"t": failing}, commands=None).drive(run)
    assert "trials.c0" not in host.executed
    assert host.released == ["/ws/trials.p0"]


def test_given_the_deadline_passed_then_pending_steps_are_skipped_and_report_still_runs(tmp_path):
    clock = FakeClock()
    host = FakeHost(3)
    engine, store = make(tmp_path, host, clock)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)

    def slow(lease: Lease, *, cancel: threading.Event) -> Report:
        clock.now += timedelta(seconds=61)
        return Report(outcome="succeeded")

    done = LocalDriver(engine, tools={"t": slow}, commands=None).drive(run)
    assert done.state == "timed_out"
    assert host.executed[-1] == "report"
    skipped = {r.event.step for r in store.read(run) if isinstance(r.event, StepSkipped)}
    assert {"trials.p1", "trials.p2"} <= skipped


def test_given_two_engines_on_one_ledger_then_no_step_is_leased_twice(tmp_path):
    host = FakeHost(6)
    engine, store = make(tmp_path, host)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)
    other = Engine(store, host, clock=FakeClock(),
                   new_id=iter(f"x{i}" for i in itertools.count()).__next__.__call__
                   if False else (lambda p, c=itertools.count(): f"o{p}{next(c)}"))
    a = LocalDriver(engine, tools={"t": ok_tool}, commands=None, lanes=1)
    b = LocalDriver(other, tools={"t": ok_tool}, commands=None, lanes=1)
    t = threading.Thread(target=b.drive, args=(run,))
    t.start()
    a.drive(run)
    t.join()
    from armbench.ledger.events import StepLeased
    leased = [r.event.step for r in store.read(run) if isinstance(r.event, StepLeased)]
    assert len(leased) == len(set(leased))


def test_given_a_transient_failure_then_the_prompt_runs_again_in_a_fresh_clone(tmp_path):
    host = FakeHost(2, retries=2, backoff_s=0.05)
    counter = itertools.count()
    engine = Engine(EventStore(tmp_path / "l.sqlite"), host, clock=lambda: datetime.now(UTC),
                    new_id=lambda p: f"{p}{next(counter)}", jitter=lambda: 0.0)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)
    cwds: list[str] = []

    def overloaded_once(lease: Lease, *, cancel: threading.Event) -> Report:
        cwds.append(lease.cwd or "")
        if sum(lease.step in c for c in cwds) == 1:
            return Report(outcome="error", cause="overloaded", exit_code=1, transient=True)
        return Report(outcome="succeeded")

    done = LocalDriver(engine, tools={"t": overloaded_once}, commands=None).drive(run)
    assert done.state == "succeeded"
    assert len(cwds) == 4 and len(set(cwds)) == 4, "each attempt got its own clone"
    assert sorted(x for x in host.executed if x.startswith("trials.c")) == ["trials.c0", "trials.c1"]
    first = [c for c in cwds if "trials.p0" in c][0]
    assert first in host.released, "the failed attempt's clone is removed"


def test_every_lease_names_its_attempt_in_its_env(tmp_path):
    """ARMBENCH_WORKFLOW_ATTEMPT: 1 for a step's first lease, 2 for its retry after a transient
    failure."""
    host = FakeHost(1, retries=2, backoff_s=0.0)
    counter = itertools.count()
    engine = Engine(EventStore(tmp_path / "l.sqlite"), host, clock=lambda: datetime.now(UTC),
                    new_id=lambda p: f"{p}{next(counter)}", jitter=lambda: 0.0)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)
    seen: list[str] = []

    def overloaded_once(lease: Lease, *, cancel: threading.Event) -> Report:
        seen.append(lease.env["ARMBENCH_WORKFLOW_ATTEMPT"])
        if len(seen) == 1:
            return Report(outcome="error", cause="overloaded", exit_code=1, transient=True)
        return Report(outcome="succeeded")

    done = LocalDriver(engine, tools={"t": overloaded_once}, commands=None).drive(run)
    assert done.state == "succeeded"
    assert seen == ["1", "2"]


def test_while_a_step_waits_out_its_backoff_a_driver_is_told_to_wait_until_it_is_due(tmp_path):
    clock = FakeClock()
    host = FakeHost(1, retries=1, backoff_s=0.4, checks=False)
    engine, _ = make(tmp_path, host, clock)
    engine.jitter = lambda: 0.5
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)
    caps = Caps(driver="d", tools=frozenset({"t"}))
    lease = engine.next(run, caps)
    assert isinstance(lease, Lease)
    engine.report(run, lease.lease, lease.step, Report(outcome="error", cause="rate_limited",
                                                       transient=True))
    assert engine.next(run, caps) == Wait(retry_after_s=0.4)
    clock.now += timedelta(seconds=0.4)
    again = engine.next(run, caps)
    assert isinstance(again, Lease) and again.step == lease.step
