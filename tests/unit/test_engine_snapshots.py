"""Snapshots: a fresh engine catches up from the newest snapshot, and ends where a full fold does.

A snapshot is a cache of the engine's fold, never a fact: these tests hold it to being exactly
the fold at its version, ignored when it is stale or unreadable, and gone once the run ends.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from datetime import timedelta

import pytest
from fake_host import FakeHost
from test_engine import WORKFLOW, FakeClock, ok_tool

from armbench.aggregates.workflow import fold
from armbench.engine import snapshots
from armbench.engine.local_driver import LocalDriver
from armbench.engine.protocol import Lease, Report
from armbench.engine.service import Engine
from armbench.ledger.store import EventStore


class DriverDied(BaseException):
    """The driver process stops here, as kill -9 would stop it (a BaseException: a step's own
    exceptions settle the step `host_error`, and the driver goes on)."""


def engine_on(store: EventStore, host: FakeHost, every: int, later: bool = False) -> Engine:
    """An engine in its own process; `later`, ten minutes on: a dead driver's lease lapsed."""
    counter = itertools.count()
    clock = FakeClock()
    clock.now += timedelta(minutes=10 if later else 0)
    return Engine(store, host, clock=clock, new_id=lambda p: f"{p}{next(counter)}",
                  snapshot_every=every)


def half_run(tmp_path, every: int = 7) -> tuple[EventStore, str, FakeHost]:
    """A run of 12 trials whose driver stopped after 6 prompts, leaving it unfinished."""
    store = EventStore(tmp_path / "l.sqlite")
    host = FakeHost(12)
    engine = engine_on(store, host, every)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=3600, sandbox=True)
    prompts = itertools.count()

    def stop_after_six(lease: Lease, *, cancel: threading.Event) -> Report:
        if next(prompts) >= 6:
            raise DriverDied  # holding this lease
        return Report(outcome="succeeded")

    with pytest.raises(DriverDied):
        LocalDriver(engine, tools={"t": stop_after_six}, commands=None, lanes=1).drive(run)
    return store, run, host


def snapshot_version(store: EventStore, run: str) -> int | None:
    with sqlite3.connect(store.path) as db:
        row = db.execute("SELECT version FROM snapshots WHERE stream = ?", (run,)).fetchone()
    return row[0] if row else None


def test_a_fresh_engine_starts_from_the_snapshot_and_folds_only_what_came_after(
        tmp_path, monkeypatch) -> None:
    store, run, host = half_run(tmp_path)
    at = snapshot_version(store, run)
    assert at is not None and at >= 7
    reads: list[int] = []
    real = store.read
    monkeypatch.setattr(store, "read", lambda s, after=0: reads.append(after) or real(s, after=after))
    fresh = engine_on(store, host, 7)
    state = fresh.state(run)
    assert reads == [at], "only the events after the snapshot were read"
    assert state == fold([r.event for r in real(run)]), "the same state as folding every event"


def test_the_snapshot_is_exactly_the_fold_at_its_version(tmp_path) -> None:
    store, run, _ = half_run(tmp_path, every=5)
    at = snapshot_version(store, run)
    data = store.snapshot(run, snapshots.snapshot_format())
    assert at is not None and data is not None
    assert snapshots.decode_state(data) == fold([r.event for r in store.read(run)][:at])


def test_a_run_resumed_from_a_snapshot_finishes_like_any_other(tmp_path) -> None:
    store, run, host = half_run(tmp_path)
    fresh = engine_on(store, host, 7, later=True)
    done = LocalDriver(fresh, tools={"t": ok_tool}, commands=None, lanes=1).drive(run)
    assert done.state == "succeeded"
    assert sorted(x for x in host.executed if x.startswith("trials.c")) == sorted(
        f"trials.c{i}" for i in range(12))
    assert snapshot_version(store, run) is None, "an ended run keeps no snapshot"


@pytest.mark.parametrize("spoil", ["format", "bytes"])
def test_a_stale_or_unreadable_snapshot_is_ignored_and_the_run_folded_from_the_start(
        tmp_path, monkeypatch, spoil: str) -> None:
    store, run, host = half_run(tmp_path)
    if spoil == "format":  # another armbench's code folded it
        monkeypatch.setattr(snapshots, "snapshot_format", lambda: "RunState/1/other-code")
    else:
        with sqlite3.connect(store.path) as db:
            db.execute("UPDATE snapshots SET state = ? WHERE stream = ?", (b"\x93not", run))
    reads: list[int] = []
    real = store.read
    monkeypatch.setattr(store, "read", lambda s, after=0: reads.append(after) or real(s, after=after))
    state = engine_on(store, host, 7).state(run)
    assert reads == [0]
    assert state == fold([r.event for r in real(run)])


def test_snapshots_are_not_events(tmp_path) -> None:
    store, run, _ = half_run(tmp_path)
    assert snapshot_version(store, run) is not None
    with sqlite3.connect(store.path) as db:
        kinds = {t for (t,) in db.execute("SELECT DISTINCT topic FROM events")}
    assert not any("RunState" in k or "napshot" in k for k in kinds)
    from armbench.ledger.store import verify_chain
    assert verify_chain(store.read_raw(run)) is None


def test_a_snapshot_that_cannot_be_written_never_stops_the_run(tmp_path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    with sqlite3.connect(store.path) as db:
        db.execute("DROP TABLE snapshots")  # every snapshot write now fails
    host = FakeHost(6)
    engine = engine_on(store, host, 3)
    run = engine.start(WORKFLOW, inputs={}, timeout_s=3600, sandbox=True)
    assert store.save_snapshot(run, 1, "f", b"x") is False
    done = LocalDriver(engine, tools={"t": ok_tool}, commands=None, lanes=1).drive(run)
    assert done.state == "succeeded"
