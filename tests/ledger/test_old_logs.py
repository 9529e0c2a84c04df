"""An old log keeps folding to the same table: the log of `golden/logs/teams-and-scorers.jsonl`
was written by armbench e6254f6, when an arm's team and the plan's scorers were plain objects
(`make_old_log.py` beside it), with the table and the record that armbench projected from it."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from ledger_golden import _like, problems

from armbench.benchmark.records.reporting import project
from armbench.ledger.events import NoTeam, PlanFrozen, PulledTeam, RefTeam, WithoutTeam, decode_event
from armbench.projections.record import encode_record

LOGS = Path(__file__).with_name("golden") / "logs"
OLD = "teams-and-scorers"


def _lines() -> list[bytes]:
    return (LOGS / f"{OLD}.jsonl").read_bytes().splitlines()


@pytest.mark.parametrize("index", range(len(_lines())))
def test_every_old_event_decodes_and_re_encodes_to_the_bytes_it_was_stored_with(index: int) -> None:
    """Byte for byte, but for fields added since with their defaults (`ledger_golden.problems`)."""
    assert problems(_lines()[index]) == []


def test_the_old_plans_teams_and_scorers_decode_typed() -> None:
    plan = next(e for e in map(decode_event, _lines()) if isinstance(e, PlanFrozen))
    assert [type(a.team) for a in plan.arms] == [PulledTeam, NoTeam, RefTeam, WithoutTeam]
    assert [(s.name, s.task, s.effort, s.alias) for s in plan.scorers] == [
        ("armbench:correctness:docs", "docs", msgspec.UNSET, msgspec.UNSET),
        ("tidy", msgspec.UNSET, "high", "strong")]
    assert plan.scorers[1].rubric_hash and plan.scorers[1].labels[0].value == "tidy"


def test_an_old_log_folds_to_the_same_table_and_record_as_the_armbench_that_wrote_it() -> None:
    got = project("rold", [decode_event(line) for line in _lines()], None)
    assert got.text == (LOGS / f"{OLD}.table.txt").read_text()
    old_table = msgspec.json.decode((LOGS / f"{OLD}.table.json").read_bytes())
    assert _like(got.outputs, old_table) == old_table  # columns added since left out
    record = msgspec.json.decode(encode_record(got.record))
    old_record = msgspec.json.decode((LOGS / f"{OLD}.record.json").read_bytes())
    assert _like(record, old_record) == old_record  # every field it had, the same
    added = {k for t in record["trials"] for label in t.get("labels", []) for k in label} - {
        k for t in old_record["trials"] for label in t.get("labels", []) for k in label}
    assert added <= {"rubricHash", "judge"}  # fields the record gained since, from the same events
