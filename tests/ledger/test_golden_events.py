"""The log is forever: a golden fixture of every event kind keeps decoding with today's code."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import pytest
from ledger_golden import GOLDEN, problems, read, stored_by_the_store, stored_bytes, union_tags
from ledger_samples import SAMPLES

from armbench.ledger.events import decode_event, event_tag
from armbench.ledger.store import EventStore, verify_chain
from armbench.ledger.upcast import UPCASTERS

FIXTURES = sorted(p.stem for p in GOLDEN.glob("*.json"))


def test_every_event_kind_has_a_golden_fixture() -> None:
    missing = set(union_tags()) - set(FIXTURES)
    assert not missing, (f"no golden fixture for {sorted(missing)}: run "
                         "`python tests/ledger/ledger_golden.py` to write it, and commit it")


def test_every_fixture_is_a_kind_the_union_knows_or_an_old_version_with_an_upcaster() -> None:
    assert set(FIXTURES) - set(union_tags()) - set(UPCASTERS) == set()


@pytest.mark.parametrize("tag", FIXTURES)
def test_a_golden_event_decodes_and_re_encodes_to_its_bytes(tag: str) -> None:
    event = bytes(read(tag).event)
    assert problems(event) == []
    assert event_tag(decode_event(event)) == tag


@pytest.mark.parametrize("tag", FIXTURES)
def test_a_golden_stored_record_reads_back_through_the_store_and_its_chain_holds(
        tag: str, tmp_path: Path) -> None:
    golden = read(tag)
    assert bytes(golden.stored) == stored_bytes(bytes(golden.event))
    store = EventStore(tmp_path / "l.sqlite")
    with sqlite3.connect(store.path) as db:
        db.execute("INSERT INTO events VALUES ('golden', 1, ?, ?)", (tag, bytes(golden.stored)))
    assert [r.event for r in store.read("golden")] == [decode_event(bytes(golden.event))]
    assert verify_chain(store.read_raw("golden")) is None
    store.close()


@pytest.mark.parametrize("tag", FIXTURES)
def test_the_store_writes_an_event_in_the_golden_envelope(tag: str, tmp_path: Path) -> None:
    event = decode_event(bytes(read(tag).event))
    prev, stored = stored_by_the_store(event, tmp_path)
    assert stored == stored_bytes(msgspec.json.encode(event), prev)


def test_a_renamed_or_retyped_field_fails_and_a_field_added_with_a_default_passes() -> None:
    event = bytes(read("StepReported").event)
    renamed = event.replace(b'"cause":"timeout"', b'"reason":"timeout"')
    retyped = event.replace(b'"duration_ms":600000', b'"duration_ms":"600000"')
    older = event.replace(b',"message":"claude ended: timeout"', b"")  # before `message` existed
    assert renamed != event and retyped != event and older != event
    assert "re-encodes to other bytes" in problems(renamed)[0]
    assert "no longer decodes" in problems(retyped)[0]
    assert problems(older) == []


def _defaults_kept(value: object, path: str) -> list[str]:
    if not isinstance(value, msgspec.Struct):
        if isinstance(value, list):
            return [p for i, v in enumerate(value) for p in _defaults_kept(v, f"{path}[{i}]")]
        return []
    found = []
    for f in msgspec.structs.fields(value):
        got = getattr(value, f.name)
        default = f.default if f.default is not msgspec.NODEFAULT else (
            f.default_factory() if f.default_factory is not msgspec.NODEFAULT else msgspec.NODEFAULT)
        if got == default or got is None:
            found.append(f"{path}.{f.name}")
        found += _defaults_kept(got, f"{path}.{f.name}")
    return found


def test_the_samples_set_every_field_so_new_fixtures_pin_every_field() -> None:
    assert set(SAMPLES) == set(union_tags())
    assert [p for tag, e in SAMPLES.items() for p in _defaults_kept(e, tag)] == []
