"""`armbench verify` against a local writer: a forged event appended with the store's own code
(with or without the key), a run rewritten with a recomputed chain and a rebuilt record, and a
verify that has no key or another one. Each on a copy of a finished, published run."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import UTC, datetime

import msgspec
import pytest
from ledger_procs import keyed_store
from test_verify_tamper import rows, verify

from armbench.edge.ledgerkey import load_key
from armbench.ledger.chain import GENESIS, keyed_next, stored_row
from armbench.ledger.errors import LeaseRuleBroken
from armbench.ledger.events import CheckRan, StepLeased, StepReported, encode_event
from armbench.ledger.store import EventStore
from armbench.projections.record import encode_record

AT = datetime(2026, 1, 1, tzinfo=UTC)
CHECK = "trials.lane2.r0.double.lazy.check"
UNKEYED = ("it is chained without the ledger key (plain sha256) in a run the ledger's key must "
           "chain: it was written or rewritten by something that does not hold the key")


def passed() -> CheckRan:
    return CheckRan(step=CHECK, task="double", kind="trial", result="passed", exit_code=0)


def test_the_audit_run_was_published_with_its_chain_head(cli, audited) -> None:
    project, run = audited
    record = json.loads((project.runs_dir / run / "benchmark.json").read_bytes())
    store = keyed_store(project)
    try:
        head = store.chain_at(run, record["chain"]["event"])
        kinds = [type(r.event).__name__ for r in store.read(run)]
    finally:
        store.close()
    assert head is not None and record["chain"] == {"kind": "hmac-sha256", "event": head.event,
                                                    "head": head.head}
    assert record["chain"]["event"] < kinds.index("RecordWritten") + 1
    assert "RecordPublished" in kinds
    got = cli("verify", run)
    assert got.exit_code == 0 and ("Its chain is keyed with the ledger key (hmac-sha256)."
                                   in got.stderr)


def test_a_check_forged_without_the_key_is_refused_or_found(cli, audited) -> None:
    project, run = audited
    store = EventStore(project.ledger)  # the store's own code, no key
    try:
        with pytest.raises(LeaseRuleBroken):
            store.append(run, [passed()], expected_version=store.version(run))
        at = store.version(run)  # leasing the settled step first is refused too
        with pytest.raises(LeaseRuleBroken):
            store.append(run, [StepLeased(step=CHECK, lease="lforged", driver="x", at=AT,
                                          expires_at=AT), passed()], expected_version=at)
        store.append(run, [StepLeased(step="nobody.knows", lease="lforged", driver="x", at=AT,
                                      expires_at=AT)], expected_version=at)
    finally:
        store.close()
    assert verify(cli, run) == (1, [f"event {at + 1}: {UNKEYED}"])


def test_a_check_forged_with_the_key_is_named_by_the_lease_rule(cli, audited) -> None:
    project, run = audited
    store = keyed_store(project)
    try:
        with pytest.raises(LeaseRuleBroken):
            store.append(run, [passed()], expected_version=store.version(run))
        version, chain = store.version(run), store.head(run)
        assert chain is not None and store.key is not None
        body = encode_event(passed())  # past the store's check: the row written by hand
        row = stored_row(keyed_next(store.key, run, chain.head, body), body, store.key.id)
    finally:
        store.close()
    with sqlite3.connect(project.ledger) as db:
        db.execute("INSERT INTO events (originator_id, originator_version, topic, state) VALUES "
                   "(?, ?, 'CheckRan', ?)", (run, version + 1, row))
    code, problems = verify(cli, run)
    assert code == 1 and problems[0] == (
        f"event {version + 1}: CheckRan for step {CHECK!r} comes after the step was already "
        f"reported (under lease {lease_of(project, run)})")


def test_a_run_rewritten_with_the_key_and_a_rebuilt_record_is_caught_by_its_published_head(
        cli, audited) -> None:
    """The worst case: a writer who holds the key edits a check, recomputes the keyed chain,
    rebuilds the record with the new head and its RecordWritten. Only the published copy,
    out of the writer's reach, still says what the ledger was."""
    project, run = audited
    key = load_key(project.key_file, create=False)
    assert key is not None
    path = project.runs_dir / run / "benchmark.json"
    record = json.loads(path.read_bytes())
    old_head = record["chain"]["head"]
    prev, heads = GENESIS, {}
    with sqlite3.connect(project.ledger) as db:
        for version, state in rows(project.ledger, run).items():
            event = msgspec.json.decode(state)["event"]
            if event["type"] == "CheckRan" and event["step"] == CHECK:
                event = {**event, "result": "passed", "exit_code": 0}
            if event["type"] == "RecordWritten":
                record["chain"]["head"] = heads[record["chain"]["event"]]
                record["trials"] = [{**t, "checkExit": 0, "result": "passed"}
                                    if t["step"] == CHECK.removesuffix(".check") + ".prompt"
                                    else t for t in record["trials"]]
                data = encode_record(record)
                path.write_bytes(data)
                event = {**event, "sha256": hashlib.sha256(data).hexdigest()}
            body = msgspec.json.encode(event)
            prev = heads[version] = keyed_next(key, run, prev, body)
            db.execute("UPDATE events SET state = ? WHERE originator_id = ? AND "
                       "originator_version = ?", (stored_row(prev, body, key.id), run, version))
    code, problems = verify(cli, run)
    event = record["chain"]["event"]
    assert code == 1 and problems[-1] == (
        f"the published record's chain head (hmac-sha256 at event {event}: {old_head[:16]}) "
        f"differs from the ledger's (hmac-sha256 at event {event}: "
        f"{record['chain']['head'][:16]}): the ledger was rewritten after the record was "
        "published (or the published copy was changed)")


def test_verify_without_the_key_or_with_another_says_so_without_a_traceback(cli, audited) -> None:
    project, run = audited
    store = keyed_store(project)
    key_id = store.key.id if store.key else ""
    store.close()
    fix = (f"Expected the key this ledger was written with; restore that file at "
           f"{project.key_file} (or set ARMBENCH_HOME to the folder that holds it) and verify "
           "again.")
    project.key_file.rename(project.key_file.with_name("elsewhere"))
    assert verify(cli, run) == (1, [f"the ledger is keyed (key id {key_id}), and no ledger key "
                                    f"was found at {project.key_file}. {fix}"])
    assert not project.key_file.exists(), "verify never makes a key"
    other = load_key(project.key_file, create=True)
    assert other is not None
    assert verify(cli, run) == (1, [f"the ledger was sealed with key id {key_id}, but the key at "
                                    f"{project.key_file} has id {other.id}. {fix}"])


def lease_of(project, run: str) -> str:
    store = keyed_store(project)
    try:
        return next(r.event.lease for r in store.read(run)
                    if isinstance(r.event, StepReported) and r.event.step == CHECK)
    finally:
        store.close()



def rechain(project, run: str, edit) -> dict[int, dict]:
    """Rewrite the run's rows with the key, each event through `edit` (a forger who holds the
    key and recomputes the chain); the events as written, by version."""
    key = load_key(project.key_file, create=False)
    assert key is not None
    prev, written = GENESIS, {}
    with sqlite3.connect(project.ledger) as db:
        for version, state in rows(project.ledger, run).items():
            event = written[version] = edit(msgspec.json.decode(state)["event"])
            body = msgspec.json.encode(event)
            prev = keyed_next(key, run, prev, body)
            db.execute("UPDATE events SET state = ? WHERE originator_id = ? AND "
                       "originator_version = ?", (stored_row(prev, body, key.id), run, version))
    return written


def test_a_check_rechained_with_the_key_is_named_against_its_steps_report(cli, audited) -> None:
    project, run = audited

    def flip(event: dict) -> dict:
        if event["type"] == "CheckRan" and event["step"] == CHECK:
            return {**event, "result": "passed", "exit_code": 0}
        return event

    written = rechain(project, run, flip)
    at = next(v for v, e in written.items() if e["type"] == "CheckRan" and e["step"] == CHECK)
    code, problems = verify(cli, run)
    assert code == 1
    assert problems[0] == (f"event {at}: CheckRan for step {CHECK!r} differs from its step's "
                           "report: exit_code 1 (the check's says 0)")


def test_a_check_and_its_report_rechained_together_must_fit_the_lease(cli, audited) -> None:
    """A forger who rewrites the report too must keep the check within its lease's time."""
    project, run = audited

    def flip(event: dict) -> dict:
        if event.get("step") == CHECK and event["type"] in ("CheckRan", "StepReported"):
            return {**event, "exit_code": 0, "duration_ms": 3_600_000,
                    **({"result": "passed"} if event["type"] == "CheckRan" else {})}
        return event

    written = rechain(project, run, flip)
    at = next(v for v, e in written.items() if e["type"] == "CheckRan" and e["step"] == CHECK)
    code, problems = verify(cli, run)
    lease = next(e["lease"] for v, e in sorted(written.items())  # its report, past kept evidence
                 if v > at and e["type"] == "StepReported" and e["step"] == CHECK)
    assert code == 1
    assert problems[0].startswith(f"event {at}: CheckRan for step {CHECK!r} says it ran 3600000 "
                                  f"ms, longer than its lease {lease} held the step (")


def test_a_trial_check_passed_off_as_a_baseline_check_is_named(cli, audited) -> None:
    project, run = audited

    def move(event: dict) -> dict:
        if event["type"] == "CheckRan" and event["step"] == CHECK:
            return {**event, "kind": "baseline"}
        return event

    written = rechain(project, run, move)
    at = next(v for v, e in written.items() if e["type"] == "CheckRan" and e["step"] == CHECK)
    code, problems = verify(cli, run)
    assert code == 1 and problems[0] == (
        f"event {at}: CheckRan for step {CHECK!r} is a baseline check's result on a step the "
        "plan made for check_trial")
