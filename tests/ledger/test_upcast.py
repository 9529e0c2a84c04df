"""Old versions of an event are read through pure upcasters, and only when their tag is old.

`StepFinished` is a made-up old version of StepReported (status words, epoch seconds, `exit`),
the kind of event a breaking change would leave in old ledgers.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest

import armbench.ledger.store as store_module
from armbench.ledger.errors import LedgerError
from armbench.ledger.events import RunCancelRequested, StepReported
from armbench.ledger.store import GENESIS, EventStore, chain_next, verify_chain
from armbench.ledger.upcast import KNOWN_TAGS, UPCASTERS, upcast

OLD = {"type": "StepFinished", "step": "plan", "lease": "l1", "status": "crash", "exit": 3,
       "finished": 1764492097}


def step_finished_to_reported(old: dict[str, Any]) -> dict[str, Any]:
    """StepFinished (version 0) -> StepReported: status words became outcomes, time an ISO date."""
    outcome = {"ok": "succeeded", "fail": "failed", "crash": "error"}[old.pop("status")]
    at = datetime.fromtimestamp(old.pop("finished"), UTC).isoformat()
    return {**old, "type": "StepReported", "outcome": outcome, "at": at,
            "exit_code": old.pop("exit")}


def store_raw(store: EventStore, stream: str, events: list[dict[str, Any]]) -> None:
    """Write events as an older armbench would have: chained, bytes as given."""
    prev = GENESIS
    with sqlite3.connect(store.path) as db:
        for version, e in enumerate(events, start=1):
            body = msgspec.json.encode(e)
            prev = chain_next(prev, body)
            state = b'{"chain":"' + prev.encode() + b'","event":' + body + b"}"
            db.execute("INSERT INTO events VALUES (?, ?, ?, ?)", (stream, version, e["type"], state))


@pytest.fixture
def store(tmp_path: Path) -> EventStore:
    s = EventStore(tmp_path / "l.sqlite")
    yield s
    s.close()


def test_an_old_version_is_upcast_to_todays_event(store: EventStore, monkeypatch) -> None:
    monkeypatch.setitem(UPCASTERS, "StepFinished", step_finished_to_reported)
    store_raw(store, "r1", [OLD])
    [rec] = store.read("r1")
    assert rec.event == StepReported(step="plan", lease="l1", outcome="error", exit_code=3,
                                     at=datetime(2025, 11, 30, 8, 41, 37, tzinfo=UTC))
    assert [r.event for r in store.all()] == [rec.event]
    assert verify_chain(store.read_raw("r1")) is None, "upcasting never touches stored bytes"


def test_upcasters_chain_through_intermediate_versions(store: EventStore, monkeypatch) -> None:
    monkeypatch.setitem(UPCASTERS, "StepFinished", lambda e: {**e, "type": "StepFinished@2"})
    monkeypatch.setitem(UPCASTERS, "StepFinished@2", step_finished_to_reported)
    store_raw(store, "r1", [OLD])
    assert store.read("r1")[0].event.outcome == "error"


def test_an_upcaster_leaves_the_stored_dict_alone() -> None:
    raw = dict(OLD)
    assert upcast(raw, {"StepFinished": step_finished_to_reported})["type"] == "StepReported"
    assert raw == OLD


def test_an_old_tag_without_an_upcaster_is_a_clear_ledger_error(store: EventStore) -> None:
    store_raw(store, "r1", [OLD])
    with pytest.raises(LedgerError, match="'StepFinished', which this armbench neither knows") as e:
        store.read("r1")
    assert e.value.code == "unknown_event_kind"


def test_upcasters_that_loop_are_caught() -> None:
    with pytest.raises(LedgerError, match="loop") as e:
        upcast(dict(OLD), {"StepFinished": lambda d: d})
    assert e.value.code == "upcaster_loop"


def test_a_known_tag_whose_shape_changed_is_named_not_upcast(store: EventStore) -> None:
    store_raw(store, "r1", [{"type": "RunCancelRequested", "at": 12}])
    with pytest.raises(LedgerError, match="does not decode as RunCancelRequested today"):
        store.read("r1")


def test_todays_events_never_reach_the_upcasters(store: EventStore, monkeypatch) -> None:
    def refuse(_bytes: bytes) -> None:
        raise AssertionError("the slow path ran for a known tag")

    monkeypatch.setattr(store_module, "upcast_event", refuse)
    event = RunCancelRequested(at=datetime(2026, 1, 1, tzinfo=UTC))
    store.append("r1", [event], expected_version=0)
    assert [r.event for r in store.read("r1")] == [event]


def test_no_upcaster_is_registered_for_a_tag_the_union_still_decodes() -> None:
    assert set(UPCASTERS) & KNOWN_TAGS == set()


def test_reading_some_kinds_keeps_old_versions_that_upcast_into_them(store: EventStore,
                                                                     monkeypatch) -> None:
    monkeypatch.setitem(UPCASTERS, "StepFinished", step_finished_to_reported)
    cancel = {"type": "RunCancelRequested", "at": "2026-01-01T00:00:00Z"}
    store_raw(store, "r1", [cancel, OLD, {**OLD, "step": "report"}, cancel])
    reported = store.events("r1", kinds=[StepReported])
    assert [e.step for e in reported] == ["plan", "report"]
    assert [type(e) for e in store.events("r1", kinds=[RunCancelRequested])] == \
        [RunCancelRequested, RunCancelRequested], "an upcast event of another kind is dropped"
    assert store.events("r1") == [r.event for r in store.read("r1")]
