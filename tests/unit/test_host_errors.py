"""Issue 22.4: an exception in any host step settles that step `error` with cause `host_error`,
and the run goes on to its end; text that is not UTF-8 is carried escaped in the log."""

from __future__ import annotations

import itertools
import threading
from datetime import UTC, datetime

import msgspec
import pytest
from fake_host import FakeHost

from armbench.engine.local_driver import LocalDriver
from armbench.engine.protocol import HostOutcome, Lease, Prepared, Report
from armbench.engine.service import Engine, Workflow
from armbench.ledger.errors import LedgerError
from armbench.ledger.events import (
    CheckRan,
    PlannedTrial,
    StepReported,
    StepSpec,
    decode_event,
    encode_event,
    escape_text,
    escaped,
)
from armbench.ledger.store import EventStore
from armbench.projections.results import TrialView, classify

WORKFLOW = Workflow(name="w", steps=[
    StepSpec(id="plan", kind="command", command="plan"),
    StepSpec(id="trials", kind="workflow", needs=["plan"], from_step="plan", independent=True),
    StepSpec(id="report", kind="command", command="report", final=True),
])
NAME = "tests/bad-\udcff\udcfe.py"  # os.fsdecode(b"tests/bad-\xff\xfe.py")


class StrangeHost(FakeHost):
    """A fake host whose work on one step raises what a strange trial made armbench raise."""

    def __init__(self, *, raise_in: str, error: Exception) -> None:
        super().__init__(3)
        self.raise_in, self.error = raise_in, error

    def execute(self, run: str, spec: StepSpec, *, workspace: str | None,
                run_state: str) -> HostOutcome:
        if spec.id == self.raise_in:
            self.executed.append(spec.id)
            raise self.error
        if spec.id == "trials.c1":  # a check whose restore put back a name that is not UTF-8
            self.executed.append(spec.id)
            return HostOutcome(report=Report(outcome="succeeded", message=f"restored {NAME}"),
                               events=[CheckRan(step=spec.id, task="t", kind="trial",
                                                result="failed", restored=[NAME])])
        return super().execute(run, spec, workspace=workspace, run_state=run_state)

    def prepare(self, run: str, spec: StepSpec, lease: str) -> Prepared | HostOutcome:
        if spec.id == self.raise_in:
            raise self.error
        return super().prepare(run, spec, lease)


def ok_tool(lease: Lease, *, cancel: threading.Event) -> Report:
    return Report(outcome="succeeded")


def drive(tmp_path, host, tool=ok_tool):  # type: ignore[no-untyped-def]
    counter = itertools.count()
    store = EventStore(tmp_path / "l.sqlite")
    engine = Engine(store, host, clock=lambda: datetime(2026, 1, 1, tzinfo=UTC),
                    new_id=lambda p: f"{p}{next(counter)}")
    run = engine.start(WORKFLOW, inputs={}, timeout_s=60, sandbox=True)
    done = LocalDriver(engine, tools={"t": tool}, commands=None).drive(run)
    return done, {r.event.step: r.event for r in store.read(run) if isinstance(r.event, StepReported)}


@pytest.mark.parametrize("where", ["trials.c0", "trials.p2"])
@pytest.mark.parametrize("error", [RecursionError("maximum recursion depth exceeded"),
                                   UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates"),
                                   ValueError("a shape nobody foresaw")])
def test_an_exception_in_a_host_step_settles_it_host_error_and_the_run_ends(tmp_path, where, error):
    host = StrangeHost(raise_in=where, error=error)
    done, reported = drive(tmp_path, host)
    assert done.state == "succeeded"  # the run went on to its end (a trial's error is a result)
    assert (reported[where].outcome, reported[where].cause) == ("error", "host_error")
    assert type(error).__name__ in (reported[where].message or "")
    assert host.executed[-1] == "report"
    others = [s for s in ("trials.p0", "trials.p1", "trials.c1") if s != where]
    assert all(reported[s].outcome == "succeeded" for s in others)


def test_an_exception_in_a_tool_step_settles_it_host_error(tmp_path):
    def strange(lease: Lease, *, cancel: threading.Event) -> Report:
        if lease.step == "trials.p1":
            raise RecursionError("maximum recursion depth exceeded while walking")
        return Report(outcome="succeeded")

    done, reported = drive(tmp_path, FakeHost(3), strange)
    assert done.state == "succeeded"
    assert (reported["trials.p1"].outcome, reported["trials.p1"].cause) == ("error", "host_error")
    assert "RecursionError" in (reported["trials.p1"].message or "")


def test_a_ledger_fault_in_a_host_step_still_stops_the_driver(tmp_path):
    host = StrangeHost(raise_in="trials.c0", error=LedgerError("the ledger is locked"))
    with pytest.raises(LedgerError):
        drive(tmp_path, host)


def test_a_name_that_is_not_utf8_is_logged_escaped_and_the_run_ends(tmp_path):
    done, reported = drive(tmp_path, StrangeHost(raise_in="none", error=ValueError()))
    assert done.state == "succeeded"
    assert reported["trials.c1"].message == "restored tests/bad-\\xff\\xfe.py"


def test_escaped_text_is_valid_utf8_and_shows_each_byte_as_x_escapes():
    assert escape_text(NAME) == "tests/bad-\\xff\\xfe.py"
    assert escape_text("plain é") == "plain é"
    assert escape_text("lone \ud800") == "lone \\ud800"
    event = CheckRan(step="s", task="t", kind="trial", result="failed", restored=[NAME])
    with pytest.raises(UnicodeEncodeError):
        msgspec.json.encode(event)
    assert decode_event(encode_event(event)) == escaped(event)
    assert escaped(event).restored == ["tests/bad-\\xff\\xfe.py"]
    fine = CheckRan(step="s", task="t", kind="trial", result="failed", restored=["a.py"])
    assert escaped(fine) is fine


AT = datetime(2026, 1, 1, tzinfo=UTC)
TRIAL = PlannedTrial(task="t", arm="a", repetition=0, order=0, lane=1,
                     prompt_step="trials.r0.t.a.prompt", check_step="trials.r0.t.a.check")
SAID = "step trials.r0.t.a.check failed in armbench: RecursionError: maximum recursion depth"


def test_a_host_error_is_named_in_the_trials_rule_for_its_prompt_and_its_check():
    prompt = StepReported(step=TRIAL.prompt_step, lease="l", at=AT, outcome="error",
                          cause="host_error", message=SAID)
    result, rule = classify(TrialView(trial=TRIAL, prompt=prompt))
    assert result == "error" and rule.startswith(f"armbench itself failed on what the trial left ({SAID})")
    ok = StepReported(step=TRIAL.prompt_step, lease="l", at=AT, outcome="succeeded")
    check = StepReported(step=TRIAL.check_step, lease="m", at=AT, outcome="error",
                         cause="host_error", message=SAID)
    result, rule = classify(TrialView(trial=TRIAL, prompt=ok, check_reported=check))
    assert result == "error" and "armbench itself failed running its check" in rule
    assert rule.endswith("an error, not a failure (host_error).")
