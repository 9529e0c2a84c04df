"""A projection reads only the kinds it folds: the other rows stay undecoded, the order stays."""

from __future__ import annotations

import gc
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
from ledger_samples import SAMPLES

import armbench.ledger.store as store_module
from armbench.benchmark.records.reporting import REPORTED, project, report_events
from armbench.ledger.collector import collector_paused
from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    LeaseRenewed,
    RunCancelRequested,
    RunStarted,
    StepLeased,
    StepReported,
    StepsPlanned,
)
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_events_of_some_kinds_come_in_log_order(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    events = [RunStarted(run="r1", workflow="w", timeout_s=1, at=AT, source_hash="h"),
              StepLeased(step="a", lease="l1", driver="d", at=AT, expires_at=AT),
              StepLeased(step="b", lease="l2", driver="d", at=AT, expires_at=AT),
              RunCancelRequested(at=AT),
              StepReported(step="a", lease="l1", outcome="succeeded", at=AT),
              RunCancelRequested(at=AT),
              StepReported(step="b", lease="l2", outcome="failed", at=AT)]
    store.append("r1", events, expected_version=0)
    assert store.events("r1", kinds=[StepReported, RunStarted]) == [events[0], events[4], events[6]]
    assert store.events("r1", kinds=[LeaseRenewed]) == []
    assert store.events("r1") == events


def test_a_report_never_decodes_the_kinds_it_does_not_fold(tmp_path: Path, monkeypatch) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    samples = []
    for e in SAMPLES.values():  # a report or a check comes under its step's lease (the rule)
        if isinstance(e, StepReported | AttemptFailed | CheckRan):
            samples.append(StepLeased(step=e.step, lease=getattr(e, "lease", "l9"), driver="d",
                                      at=AT, expires_at=AT))
        samples.append(e)
    store.append("r1", samples, expected_version=0)
    decoded: list[bytes] = []
    real = store_module._event
    monkeypatch.setattr(store_module, "_event", lambda state: decoded.append(state) or real(state))
    events = report_events(store, "r1")
    assert {type(e) for e in events} <= set(REPORTED)
    assert len(decoded) == len(events)
    assert not any(b'"type":"StepsPlanned"' in d for d in decoded)
    everything = store.events("r1")
    assert StepsPlanned in {type(e) for e in everything}
    assert project("r1", events, None) == project("r1", everything, None), \
        "the kinds left out change nothing in the table or the record"


def test_the_collector_is_back_as_it_was_after_nested_and_threaded_pauses() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            pass
        assert not gc.isenabled(), "an inner pause ending does not end the outer one"
        inside = threading.Event()
        leave = threading.Event()

        def other() -> None:
            with collector_paused():
                inside.set()
                leave.wait(5)

        t = threading.Thread(target=other)
        t.start()
        inside.wait(5)
    assert not gc.isenabled(), "another thread still holds a pause"
    leave.set()
    t.join()
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_comes_back_when_the_body_raises() -> None:
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("x")
    assert gc.isenabled()
