"""A publication event for another run's stream is retried on conflicts and then named, never dropped."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmark.records.publish import APPEND_TRIES, _append
from ledger.errors import ConcurrencyConflict
from ledger.events import RecordDeliveryFailed, RunEnded
from ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)
LOST = RecordDeliveryFailed(destination="team", reason="offline", at=AT)


class RacedStore(EventStore):
    """The real SQLite store, with another writer appending to the run between every version
    read and the append that follows it, `races` times."""

    def __init__(self, path: Path, races: int) -> None:
        super().__init__(path)
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
                                                   r"another writer appended to it each of 5 times"):
        _append(store, "r1", [LOST])
    assert [type(r.event) for r in store.read("r1")] == [RunEnded] * APPEND_TRIES


def test_an_append_that_loses_fewer_races_than_its_tries_lands(tmp_path: Path) -> None:
    store = RacedStore(tmp_path / "l.sqlite", races=APPEND_TRIES - 1)
    _append(store, "r1", [LOST])
    assert store.read("r1")[-1].event == LOST
