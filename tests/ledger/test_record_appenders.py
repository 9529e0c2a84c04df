"""Two processes appending to one finished run at once, on a real SQLite file and a real
PostgreSQL server: publishing its record, calibrating its judge, rewriting its record. Each
folds the run at the same version (a barrier holds both there), then both append; the one that
loses folds again and decides again, so the log never holds a doubled or stale fact."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from armbench.aggregates.runrecord import (
    Delivered,
    RecordCalibration,
    RecordState,
    RewriteRecord,
    decide_calibration,
    decide_delivery,
    decide_rewrite,
)
from armbench.benchmark.records.decided import append_decided
from armbench.benchmark.records.publish import record_delivery
from armbench.ledger.errors import ArmbenchError
from armbench.ledger.events import (
    Agent,
    Event,
    LabelRecorded,
    RecordPublished,
    RecordQueued,
    RecordWritten,
    RunEnded,
    RunStarted,
)
from armbench.ledger.store import EventStore

pytestmark = pytest.mark.slow  # processes, and a PostgreSQL server

AT = datetime(2026, 1, 1, tzinfo=UTC)
SHA = "a" * 64
FINISHED: list[Event] = [
    RunStarted(run="r1", workflow="armbench-benchmark", source_hash="h", timeout_s=60, at=AT),
    RecordWritten(sha256=SHA, at=AT),
    RecordQueued(destination="/srv/reports.git", path="benchmarks/runs/r1.json", at=AT),
    RunEnded(state="succeeded", at=AT)]
FORK = multiprocessing.get_context("fork")


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A ledger holding one finished run whose record is queued: a SQLite file or a database on
    the session's PostgreSQL cluster."""
    where = (str(tmp_path / "ledger.sqlite") if request.param == "sqlite"
             else str(request.getfixturevalue("postgres_url")))
    store = EventStore(where)
    store.append("r1", FINISHED, expected_version=0)
    store.close()
    return where


def delivered(commit: str) -> Delivered:
    return Delivered(destination="/srv/reports.git", branch="armbench-reports",
                     path="benchmarks/runs/r1.json", sha256=SHA, commit=commit, at=AT)


def verdict(label: str) -> LabelRecorded:
    return LabelRecorded(step="trials.r0.t.a.prompt", scorer="armbench:correctness:t",
                         rubric_hash="r", label=label, score=1.0, passed=True, key="k",
                         judge=Agent(tool=label), calibration=True, at=AT)


Decide = Callable[[RecordState], list[Event]]


def _appender(location: str, decide: Decide, met: Any, out: Any) -> None:
    """One process: its own store; its first decision waits for the other's at the barrier,
    so both decide on the same version before either appends."""
    first = [True]

    def held(state: RecordState) -> list[Event]:
        events = decide(state)
        if first[0]:
            first[0] = False
            met.wait(timeout=30)
        return events

    store = EventStore(location)
    try:
        events, _ = append_decided(store, "r1", held)
        out.put(("appended", [type(e).__name__ for e in events]))
    except ArmbenchError as exc:
        out.put((exc.code, exc.message))
    finally:
        store.close()


def race(location: str, *decisions: Decide) -> list[tuple[str, Any]]:
    """Run each decision in its own process, held together at their first decision."""
    met, out = FORK.Barrier(len(decisions)), FORK.Queue()
    procs = [FORK.Process(target=_appender, args=(location, d, met, out)) for d in decisions]
    for p in procs:
        p.start()
    got = [out.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return sorted(got, key=lambda g: (g[0], len(g[1])))


def log(location: str) -> list[Event]:
    store = EventStore(location)
    try:
        return store.events("r1")
    finally:
        store.close()


def test_two_publishers_recording_one_delivery_record_it_once(location: str) -> None:
    got = race(location, lambda s: decide_delivery(s, delivered("c" * 40)),
               lambda s: decide_delivery(s, delivered("d" * 40)))
    assert got == [("appended", []), ("appended", ["RecordPublished"])]
    published = [e for e in log(location) if isinstance(e, RecordPublished)]
    assert len(published) == 1 and published[0].sha256 == SHA


def test_two_calibrations_at_once_never_mix_their_judges_labels(location: str) -> None:
    got = race(location,
               lambda s: decide_calibration(s, RecordCalibration(verdicts=[verdict("claude")], since=0)),
               lambda s: decide_calibration(s, RecordCalibration(verdicts=[verdict("codex")], since=0)))
    assert [code for code, _ in got] == ["appended", "calibration_interleaved"]
    assert "Let it finish, then calibrate again." in got[1][1]
    assert len([e for e in log(location) if isinstance(e, LabelRecorded)]) == 1


def test_two_rewrites_of_one_record_at_once_write_it_once(location: str) -> None:
    got = race(location,
               lambda s: decide_rewrite(s, RewriteRecord(sha256="b" * 64, head=4, at=AT)),
               lambda s: decide_rewrite(s, RewriteRecord(sha256="c" * 64, head=4, at=AT)))
    assert [code for code, _ in got] == ["appended", "record_stale"]
    assert [type(e) for e in log(location)][len(FINISHED):] == [RecordWritten]


def _publish(location: str, commit: str, start: Any, out: Any) -> None:
    store = EventStore(location)
    try:
        start.wait(timeout=30)
        out.put([type(e).__name__ for e in record_delivery(store, "r1", delivered(commit))])
    finally:
        store.close()


def test_two_armbench_publishes_recording_the_same_delivery_leave_one_fact(location: str) -> None:
    start, out = FORK.Barrier(2), FORK.Queue()
    procs = [FORK.Process(target=_publish, args=(location, c * 40, start, out)) for c in "cd"]
    for p in procs:
        p.start()
    got = sorted(out.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(timeout=60)
    assert got == [[], ["RecordPublished"]]
    assert sum(isinstance(e, RecordPublished) for e in log(location)) == 1
