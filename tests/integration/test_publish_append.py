"""A publication event for another run's stream is retried on conflicts and then named, never dropped."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.aggregates.runrecord import DeliveryFailed
from armbench.benchmark.records.decided import APPEND_TRIES
from armbench.benchmark.records.publish import record_delivery
from armbench.ledger.errors import ConcurrencyConflict
from armbench.ledger.events import RecordDeliveryFailed, RecordQueued, RunEnded, RunStarted
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)
FAILED = DeliveryFailed(destination="team", reason="offline", at=AT)
LOST = RecordDeliveryFailed(destination="team", reason="offline", at=AT)
QUEUED = [RunStarted(run="r1", workflow="w", source_hash="h", timeout_s=60, at=AT),
          RecordQueued(destination="team", path="benchmarks/runs/r1.json", at=AT)]


class RacedStore(EventStore):
    """The real SQLite store, with another writer appending to the run between every version
    read and the append that follows it, `races` times."""

    def __init__(self, path: Path, races: int) -> None:
        super().__init__(path)
        self.races = 0
        super().append("r1", QUEUED, expected_version=0)
        self.races = races

    def version(self, run: str) -> int:
        seen = super().version(run)
        if self.races:
            self.races -= 1
            super().append(run, [RunEnded(state="succeeded", at=AT)], expected_version=seen)
        return seen


def test_an_append_that_loses_every_race_names_the_run_and_the_lost_event(tmp_path: Path) -> None:
    store = RacedStore(tmp_path / "l.sqlite", races=APPEND_TRIES)
    with pytest.raises(ConcurrencyConflict, match=r"Could not record RecordDeliveryFailed in run r1: "
                                                   r".*another writer appended to it each of 5 times"):
        record_delivery(store, "r1", FAILED)
    assert [type(r.event) for r in store.read("r1")][2:] == [RunEnded] * APPEND_TRIES


def test_an_append_that_loses_fewer_races_than_its_tries_lands(tmp_path: Path) -> None:
    store = RacedStore(tmp_path / "l.sqlite", races=APPEND_TRIES - 1)
    assert record_delivery(store, "r1", FAILED) == [LOST]
    assert store.read("r1")[-1].event == LOST
