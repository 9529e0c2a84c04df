"""Many drivers, one ledger: two `armbench resume` processes driving one run never hold the same
step at once, never report a step twice, and together finish the run."""

from __future__ import annotations

import contextlib
import itertools
import subprocess
import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fake_host import FakeHost
from ledger_procs import Project, kill_at, log, verified
from ledger_project import ARMBENCH

from armbench.aggregates.workflow import Caps
from armbench.engine.local_driver import LocalDriver
from armbench.engine.protocol import Lease, Report
from armbench.engine.service import Engine, Workflow
from armbench.ledger.events import (
    Event,
    LeaseExpired,
    LeaseRenewed,
    RunEnded,
    StepLeased,
    StepReported,
    StepSkipped,
    StepSpec,
)
from armbench.ledger.store import EventStore


def lease_overlaps(events: list[Event]) -> list[str]:
    """Each place a step was leased, reported or expired against the lease that held it."""
    held: dict[str, tuple[str, datetime]] = {}
    problems = []
    for e in events:
        if isinstance(e, StepLeased):
            if e.step in held:
                problems.append(f"{e.step}: leased as {e.lease} while {held[e.step][0]} held it")
            held[e.step] = (e.lease, e.expires_at)
        elif isinstance(e, LeaseRenewed) and held.get(e.step, ("",))[0] == e.lease:
            held[e.step] = (e.lease, e.expires_at)
        elif isinstance(e, LeaseExpired):
            lease, expires = held.pop(e.step, (None, None))
            if lease != e.lease or expires is None or e.at < expires:
                problems.append(f"{e.step}: lease {e.lease} expired before its time or unheld")
        elif isinstance(e, StepReported):
            if held.pop(e.step, ("",))[0] != e.lease:
                problems.append(f"{e.step}: reported under {e.lease}, which did not hold it")
        elif isinstance(e, StepSkipped):
            held.pop(e.step, None)
    return problems


def test_the_overlap_check_finds_a_step_held_twice() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    later = at + timedelta(seconds=60)
    twice = [StepLeased(step="s", lease="l1", driver="a", at=at, expires_at=later),
             StepLeased(step="s", lease="l2", driver="b", at=at, expires_at=later),
             StepReported(step="s", lease="l1", outcome="succeeded", at=at),
             LeaseExpired(step="t", lease="l3", at=at)]
    assert lease_overlaps(twice) == ["s: leased as l2 while l1 held it",
                                     "s: reported under l1, which did not hold it",
                                     "t: lease l3 expired before its time or unheld"]


@pytest.mark.slow  # two real resumes racing
def test_two_resumes_share_a_run_without_holding_a_step_twice(project: Project) -> None:
    run = kill_at(project, "audit", "setup 1")  # the first baseline: nearly every step is left
    with contextlib.ExitStack() as files:
        procs = {}
        for name in ("A", "B"):
            out = files.enter_context((project.root / f"resume-{name}.out").open("w"))
            procs[name] = subprocess.Popen(
                [ARMBENCH, "resume", run, "--sandbox"], cwd=project.calc, stdout=out,
                stderr=subprocess.STDOUT, env=project.env(  # 10 s: a busy machine lapses no lease
                    LEDGERTEST_DRIVER=name, LEDGERTEST_TOOL_SLEEP="0.5", ARMBENCH_LEASE_TTL="10"))
        codes = {name: proc.wait(timeout=180) for name, proc in procs.items()}
    assert codes == {"A": 0, "B": 0}, [(project.root / f"resume-{n}.out").read_text() for n in codes]

    events = log(project, run)
    assert lease_overlaps(events) == []
    assert max(Counter(e.step for e in events if isinstance(e, StepReported)).values()) == 1
    assert isinstance(events[-1], RunEnded) and events[-1].state == "succeeded"
    tools = Counter(line.split()[-1] for line in project.calls("tool"))
    assert set(tools) == {"A", "B"}, f"both drivers should have run trials: {tools}"
    assert sum(tools.values()) == 6  # good, lazy and broken on double and crashy, once each
    assert verified(project, run) == []


class Clock:
    """Time the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


WORKFLOW = Workflow(name="w", steps=[
    StepSpec(id="plan", kind="command", command="plan"),
    StepSpec(id="trials", kind="workflow", needs=["plan"], from_step="plan", independent=True),
    StepSpec(id="report", kind="command", command="report", final=True)])


def test_a_driver_whose_lease_lapsed_drops_that_result_and_carries_on(tmp_path: Path) -> None:
    clock, store, ids = Clock(), EventStore(tmp_path / "l.sqlite"), itertools.count()
    a = Engine(store, FakeHost(checks=False), clock=clock, new_id=lambda p: f"a{p}{next(ids)}")
    b = Engine(store, FakeHost(checks=False), clock=clock, new_id=lambda p: f"b{p}{next(ids)}")
    run = a.start(WORKFLOW, inputs={}, timeout_s=3600, sandbox=True)
    taken: list[Lease] = []
    cancelled: list[bool] = []

    def stalls_once(lease: Lease, *, cancel: threading.Event) -> Report:
        if lease.step == "trials.p0" and not taken:
            clock.now += timedelta(minutes=5)  # A stalls past its lease; B expires it and takes it
            got = b.next(run, Caps(driver="b", tools=frozenset({"t"})))
            assert isinstance(got, Lease) and got.step == "trials.p0"
            taken.append(got)
            b.report(run, got.lease, got.step, Report(outcome="succeeded", message="by b"))
        cancelled.append(cancel.is_set())
        return Report(outcome="succeeded")

    done = LocalDriver(a, tools={"t": stalls_once}, commands=None, lanes=2).drive(run)
    assert done.state == "succeeded"
    events = [r.event for r in store.read(run)]
    reports = {e.step: e for e in events if isinstance(e, StepReported)}
    assert len(reports) == sum(isinstance(e, StepReported) for e in events)
    assert reports["trials.p0"].lease == taken[0].lease and reports["trials.p0"].message == "by b"
    assert cancelled and not any(cancelled), "the other lane's work was cancelled"
    assert lease_overlaps(events) == []
    store.close()
