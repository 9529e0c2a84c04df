"""One contract, two stores: every test here runs against a SQLite file and a real PostgreSQL
server (a private cluster, `scripts/postgres.sh`), as eventsourcing runs one recorder suite
against every recorder. Two `EventStore`s on one location stand for two processes."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import psycopg
import pytest

from armbench.ledger.chain import LedgerKey
from armbench.ledger.chaincheck import rule_for, verify_chain
from armbench.ledger.errors import ConcurrencyConflict, LeaseRuleBroken
from armbench.ledger.events import (
    LeaseRenewed,
    RunCancelRequested,
    RunStarted,
    StepLeased,
    StepReported,
)
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)
KEY = LedgerKey(b"k" * 32)
Open = Callable[..., EventStore]


@pytest.fixture(params=["sqlite", "sqlite-public-read", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> str:
    """Where one ledger lives: a fresh SQLite file or a fresh PostgreSQL database. On
    `sqlite-public-read` the SQLite store reads as it would under a library whose table it
    does not know (`ledger.rows_sqlite.reads_layout`): through `select_events` alone."""
    if request.param == "sqlite-public-read":
        monkeypatch.setattr("armbench.ledger.rows_sqlite.reads_layout", lambda *a, **k: False)
    if request.param.startswith("sqlite"):
        return str(tmp_path / "ledger.sqlite")
    return str(request.getfixturevalue("postgres_url"))


@pytest.fixture
def open_store(location: str) -> Open:
    opened: list[EventStore] = []

    def make(**kw: object) -> EventStore:
        store = EventStore(location, **kw)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make  # type: ignore[misc]
    for s in opened:
        s.close()


def _tamper(location: str, stream: str, version: int, old: bytes, new: bytes) -> None:
    """Edit one stored row behind the store's back, as an attacker with the database would."""
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("UPDATE armbench_events SET state = convert_to(replace(convert_from(state, "
                         "'UTF8'), %s, %s), 'UTF8') "
                         "WHERE originator_id = %s AND originator_version = %s",
                         (old.decode(), new.decode(), stream, version))
        return
    with sqlite3.connect(location) as conn:
        conn.execute("UPDATE events SET state = replace(CAST(state AS TEXT), ?, ?) WHERE "
                     "originator_id = ? AND originator_version = ?",
                     (old.decode(), new.decode(), stream, version))


def _started(run: str) -> RunStarted:
    return RunStarted(run=run, workflow="w", timeout_s=1, at=AT, source_hash="h")


def _leased(step: str, lease: str) -> StepLeased:
    return StepLeased(step=step, lease=lease, driver="d", at=AT, expires_at=AT)


def test_events_come_back_in_order_with_their_versions(open_store: Open) -> None:
    store = open_store()
    events = [_started("r1"), _leased("a", "l1"), RunCancelRequested(at=AT)]
    assert store.append("r1", events, expected_version=0) == 3
    assert store.version("r1") == 3 and store.version("nothing") == 0
    assert [(r.version, r.event) for r in store.read("r1")] == list(enumerate(events, 1))
    assert [r.event for r in store.read("r1", after=2)] == events[2:]
    assert open_store().events("r1") == events  # another process sees what was committed


def test_a_second_writer_at_the_same_version_is_refused_and_nothing_is_written(
        open_store: Open) -> None:
    one, two = open_store(), open_store()
    one.append("r1", [_started("r1")], expected_version=0)
    one.append("r1", [RunCancelRequested(at=AT)], expected_version=1)
    with pytest.raises(ConcurrencyConflict, match="expected version 1"):
        two.append("r1", [_leased("a", "l1"), _leased("b", "l2")], expected_version=1)
    assert two.version("r1") == 2
    assert [type(e) for e in two.events("r1")] == [RunStarted, RunCancelRequested]


def test_racing_writers_lose_nothing_and_never_share_a_version(open_store: Open) -> None:
    stores = [open_store() for _ in range(4)]
    stores[0].append("r1", [_started("r1")], expected_version=0)
    won: list[int] = []

    def write(store: EventStore) -> None:
        for _ in range(15):
            while True:
                at = store.version("r1")
                try:
                    won.append(store.append("r1", [RunCancelRequested(at=AT)],
                                            expected_version=at))
                    break
                except ConcurrencyConflict:
                    continue

    threads = [threading.Thread(target=write, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(won) == list(range(2, 62))
    assert [r.version for r in stores[0].read("r1")] == list(range(1, 62))


def test_reading_by_kinds_keeps_the_log_order(open_store: Open) -> None:
    store = open_store()
    events = [_started("r1"), _leased("a", "l1"), _leased("b", "l2"), RunCancelRequested(at=AT),
              StepReported(step="a", lease="l1", outcome="succeeded", at=AT),
              StepReported(step="b", lease="l2", outcome="failed", at=AT)]
    store.append("r1", events, expected_version=0)
    assert store.events("r1", kinds=[StepReported, RunStarted]) == [events[0], events[4],
                                                                     events[5]]
    assert store.events("r1", kinds=[LeaseRenewed]) == []


def test_the_whole_log_reads_in_order_of_writing_across_runs(open_store: Open) -> None:
    store = open_store()
    store.append("r1", [_started("r1")], expected_version=0)
    store.append("r2", [_started("r2")], expected_version=0)
    store.append("r1", [RunCancelRequested(at=AT)], expected_version=1)
    assert [(r.stream, r.version) for r in store.all()] == [("r1", 1), ("r2", 1), ("r1", 2)]
    assert [r.stream for r in store.all(topics=["RunStarted"])] == ["r1", "r2"]


def test_the_lease_rule_is_kept_on_append(open_store: Open) -> None:
    store = open_store()
    store.append("r1", [_started("r1")], expected_version=0)
    with pytest.raises(LeaseRuleBroken, match="step 'a'"):
        store.append("r1", [StepReported(step="a", lease="l1", outcome="succeeded", at=AT)],
                     expected_version=1)
    assert store.version("r1") == 1


def test_a_snapshot_is_kept_per_run_newest_first_and_dropped(open_store: Open) -> None:
    store = open_store()
    assert store.snapshot("r1", "f1") is None
    assert store.save_snapshot("r1", 5, "f1", b"five")
    assert store.save_snapshot("r1", 3, "f1", b"three")  # an older one does not replace it
    assert open_store().snapshot("r1", "f1") == b"five"
    assert store.snapshot("r1", "f2") is None
    assert store.save_snapshot("r1", 2, "f2", b"other format")
    assert store.snapshot("r1", "f2") == b"other format"
    store.drop_snapshot("r1")
    assert store.snapshot("r1", "f2") is None


def test_keyed_rows_chain_seal_and_verify(open_store: Open, location: str) -> None:
    store = open_store(key=KEY)
    events = [_started("r1"), _leased("a", "l1"), RunCancelRequested(at=AT)]
    store.append("r1", events, expected_version=0)
    assert store.has_keyed_rows() and store.seal() is not None
    head = store.head("r1")
    assert head is not None and head.kind == "hmac-sha256" and head.event == 3
    assert store.chain_at("r1", 2) is not None and store.chain_at("r1", 9) is None
    rows = open_store(key=KEY).read_raw("r1")

    def check() -> str | None:
        reader = open_store(key=KEY)
        rule, problem = rule_for("r1", reader.read_raw("r1"), key=KEY, seal=reader.seal(),
                                 ledger_keyed=reader.has_keyed_rows(), key_file="k")
        assert problem is None
        found = verify_chain(reader.read_raw("r1"), stream="r1", rule=rule)
        return None if found is None else f"{found.position}: {found.reason}"

    assert check() is None
    assert msgspec.json.decode(rows[1][1])["key"] == KEY.id
    _tamper(location, "r1", 2, b'"driver":"d"', b'"driver":"x"')
    assert check() == "2: " + (
        "its bytes or its place do not match the hash chain (edited, reordered, or an earlier "
        "event removed)")


def test_an_unkeyed_store_is_sealed_by_the_first_keyed_open(open_store: Open) -> None:
    open_store().append("old", [_started("old")], expected_version=0)
    plain = open_store()
    assert plain.seal() is None and not plain.has_keyed_rows()
    seal = open_store(key=KEY).seal()
    assert seal is not None and set(seal.legacy) == {"old"} and seal.legacy["old"][0] == 1


def test_many_processes_opening_a_new_ledger_at_once_all_open_it(location: str) -> None:
    errors: list[BaseException] = []

    def open_one() -> None:
        try:
            EventStore(location, key=KEY).close()
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
