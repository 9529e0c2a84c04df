"""`armbench ledger copy`: every run, its chain, the seal and the snapshots move between SQLite
and PostgreSQL as stored, and the copy verifies under the same key."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.ledger.chain import LedgerKey
from armbench.ledger.chaincheck import rule_for, verify_chain
from armbench.ledger.copy import copy_ledger
from armbench.ledger.errors import Refusal
from armbench.ledger.events import RunCancelRequested, RunStarted, StepLeased
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)
KEY = LedgerKey(b"c" * 32)


def _fill(location: str) -> None:
    old = EventStore(location)  # a run from before the key: the seal pins it
    old.append("old", [RunStarted(run="old", workflow="w", timeout_s=1, at=AT, source_hash="h")],
               expected_version=0)
    old.close()
    store = EventStore(location, key=KEY)
    for run in ("r1", "r2"):
        store.append(run, [RunStarted(run=run, workflow="w", timeout_s=1, at=AT,
                                      source_hash="h")], expected_version=0)
    store.append("r1", [StepLeased(step="a", lease="l", driver="d", at=AT, expires_at=AT),
                        RunCancelRequested(at=AT)], expected_version=1)
    store.save_snapshot("r1", 3, "f", b"state")
    store.close()


def _verified(location: str) -> dict[str, str | None]:
    store = EventStore.for_reading(location, key=KEY)
    found = {}
    for run in ("old", "r1", "r2"):
        rows = store.read_raw(run)
        rule, problem = rule_for(run, rows, key=KEY, seal=store.seal(),
                                 ledger_keyed=store.has_keyed_rows(), key_file="k")
        assert problem is None
        broken = verify_chain(rows, stream=run, rule=rule)
        found[run] = None if broken is None else broken.reason
    store.close()
    return found


@pytest.mark.parametrize("direction", ["sqlite to postgresql", "postgresql to sqlite"])
def test_a_copied_ledger_holds_every_run_and_verifies(tmp_path: Path, postgres_url: str,
                                                       direction: str) -> None:
    file = str(tmp_path / "ledger.sqlite")
    source, target = (file, postgres_url) if direction.startswith("sqlite") else (
        postgres_url, file)
    _fill(source)
    copied = copy_ledger(source, target)
    assert (copied.runs, copied.events) == (3, 5)
    assert _verified(target) == {"old": None, "r1": None, "r2": None}
    a, b = EventStore(source), EventStore(target)
    assert [(r.stream, r.version, r.event) for r in a.all()] == [
        (r.stream, r.version, r.event) for r in b.all()]
    assert a.seal() == b.seal() and b.snapshot("r1", "f") == b"state"


def test_a_copy_into_a_ledger_that_holds_runs_is_refused(tmp_path: Path,
                                                         postgres_url: str) -> None:
    _fill(postgres_url)
    _fill(str(tmp_path / "other.sqlite"))
    with pytest.raises(Refusal, match="already holds runs"):
        copy_ledger(str(tmp_path / "other.sqlite"), postgres_url)
    password = postgres_url.split("@", 1)[0].rsplit(":", 1)[1]
    shown = EventStore(postgres_url).path
    assert shown.startswith("postgresql://postgres@127.0.0.1") and password not in shown


@pytest.mark.parametrize("direction", ["sqlite to postgresql", "postgresql to sqlite"])
def test_a_quarantined_run_stays_aside_in_the_copy(tmp_path: Path, postgres_url: str, direction: str) -> None:
    file = str(tmp_path / "ledger.sqlite")
    source, target = (file, postgres_url) if direction.startswith("sqlite") else (postgres_url, file)
    _fill(source)
    store = EventStore(source, key=KEY)
    entry = store.quarantine("r2", reason="forged", position=2, at=AT.isoformat())
    assert [r.stream for r in store.all(topics=["RunStarted"])] == ["old", "r1"]
    store.close()
    copy_ledger(source, target)
    copy = EventStore.for_reading(target, key=KEY)
    try:
        assert copy.quarantined() == {"r2": entry}
        assert copy.run_ids() == ["old", "r1", "r2"]
        assert [r.stream for r in copy.all(topics=["RunStarted"])] == ["old", "r1"]
    finally:
        copy.close()
