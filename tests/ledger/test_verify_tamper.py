"""`armbench verify` finds an edited, reordered or deleted event and a record unlike its log,
names the first bad position, and exits 1; an intact run exits 0."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import msgspec

from armbench.ledger.store import GENESIS, chain_next

CHAIN = "its bytes or its place do not match the hash chain (edited, reordered, or an earlier event removed)"


def rows(ledger: Path, run: str) -> dict[int, bytes]:
    with sqlite3.connect(ledger) as db:
        return dict(db.execute("SELECT originator_version, state FROM events WHERE originator_id = ? "
                               "ORDER BY originator_version", (run,)))


def put(ledger: Path, run: str, version: int, state: bytes) -> None:
    with sqlite3.connect(ledger) as db:
        db.execute("UPDATE events SET state = ? WHERE originator_id = ? AND originator_version = ?",
                   (state, run, version))


def delete(ledger: Path, run: str, *versions: int) -> None:
    with sqlite3.connect(ledger) as db:
        db.executemany("DELETE FROM events WHERE originator_id = ? AND originator_version = ?",
                       [(run, v) for v in versions])


def first(ledger: Path, run: str, needle: bytes) -> int:
    return next(v for v, state in rows(ledger, run).items() if needle in state)


def verify(cli, run: str) -> tuple[int, list[str]]:
    got = cli("verify", run)
    data = json.loads(got.stdout)["data"]["verify"]
    assert data["ok"] is (got.exit_code == 0)
    assert all(f"verify: {p}" in got.stderr for p in data["problems"])
    return got.exit_code, data["problems"]


def test_an_intact_run_verifies(cli, audited) -> None:
    assert verify(cli, audited[1]) == (0, [])


def test_an_edited_byte_is_found_at_its_position(cli, audited) -> None:
    project, run = audited
    at = first(project.ledger, run, b'"type":"CheckRan"')
    state = rows(project.ledger, run)[at]
    edited = state.replace(b'"duration_ms":', b'"duration_ms":9', 1)  # still a valid event
    assert edited != state
    put(project.ledger, run, at, edited)
    assert verify(cli, run) == (1, [f"event {at}: {CHAIN}"])


def test_a_reordered_pair_is_found_at_the_first_of_the_two(cli, audited) -> None:
    project, run = audited
    stored = rows(project.ledger, run)
    put(project.ledger, run, 9, stored[12])
    put(project.ledger, run, 12, stored[9])
    assert verify(cli, run) == (1, [f"event 9: {CHAIN}"])


def test_a_deleted_event_is_found_where_it_is_missing(cli, audited) -> None:
    project, run = audited
    delete(project.ledger, run, 20)
    assert verify(cli, run) == (1, ["event 20: it is missing (the next stored event is number 21)"])


def test_a_log_cut_short_is_found_by_its_record(cli, audited) -> None:
    project, run = audited
    last = max(rows(project.ledger, run))
    delete(project.ledger, run, last)  # RunEnded
    assert verify(cli, run) == (1, ["the record does not match what its log projects to (run "
                                    "armbench replay to see how)"])
    written = first(project.ledger, run, b'"type":"RecordWritten"')
    delete(project.ledger, run, *range(written, last))
    code, problems = verify(cli, run)
    assert code == 1 and problems[0].endswith("exists but the log never says it was written (its "
                                              "last events may have been removed)")


def test_an_edited_record_is_found(cli, audited) -> None:
    project, run = audited
    path = project.runs_dir / run / "benchmark.json"
    record = json.loads(path.read_bytes())
    record["trials"] = [{**t, "result": "passed"} for t in record["trials"]]
    path.write_bytes(json.dumps(record, indent=2).encode())
    assert verify(cli, run) == (1, [
        "the record's bytes differ from the record the log says was written",
        "the record does not match what its log projects to (run armbench replay to see how)"])


UNKEYED = ("it is chained without the ledger key (plain sha256) in a run the ledger's key must "
           "chain: it was written or rewritten by something that does not hold the key")


def test_an_edit_with_a_recomputed_unkeyed_chain_is_found_at_the_first_event(cli, audited) -> None:
    project, run = audited
    stored = rows(project.ledger, run)
    prev = GENESIS
    for version, state in stored.items():
        event = msgspec.json.decode(state)["event"]
        if event["type"] == "CheckRan" and event["step"] == "trials.lane2.r0.double.lazy.check":
            event = {**event, "result": "passed", "exit_code": 0}
        body = msgspec.json.encode(event)
        prev = chain_next(prev, body)
        put(project.ledger, run, version, b'{"chain":"' + prev.encode() + b'","event":' + body + b"}")
    assert verify(cli, run) == (1, [f"event 1: {UNKEYED}"])
