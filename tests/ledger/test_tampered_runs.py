"""Reading a run checks it (#38 point 5): a forged or undecodable row makes that run tampered
for every command that folds it, naming its first bad event, while the commands that read other
runs go on; `armbench ledger quarantine` sets it aside, losing nothing."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime

from ledger_procs import keyed_store
from test_verify_tamper import rows, verify

from armbench.ledger.events import RunStarted, StepLeased, StepsPlanned
from armbench.ledger.store import EventStore

AT = datetime(2026, 1, 1, tzinfo=UTC)
UNKEYED = "it is chained without the ledger key (plain sha256)"


def other_run(project) -> str:  # type: ignore[no-untyped-def]
    """A second, honest run beside the audit run, chained with the ledger key."""
    store = keyed_store(project)
    try:
        store.append("rother", [RunStarted(run="rother", workflow="armbench-benchmark", source_hash="0" * 64,
                                           inputs={"suite": "audit"}, timeout_s=60, at=AT),
                                StepsPlanned(parent=None, steps=[])], expected_version=0)
    finally:
        store.close()
    return "rother"


def forge(project, run: str) -> int:  # type: ignore[no-untyped-def]
    """Append one event with the store's own code and no key, as a trial that reached the
    ledger's database did; its version."""
    store = EventStore(project.ledger)
    try:
        at = store.version(run)
        store.append(run, [StepLeased(step="nobody.knows", lease="lforged", driver="x", at=AT,
                                      expires_at=AT)], expected_version=at)
    finally:
        store.close()
    return at + 1


def garble(project, run: str) -> int:  # type: ignore[no-untyped-def]
    """Append one row that is not even JSON, behind the store's back; its version."""
    version = max(rows(project.ledger, run)) + 1
    with sqlite3.connect(project.ledger) as db:
        db.execute("INSERT INTO events (originator_id, originator_version, topic, state) VALUES (?, ?, ?, ?)",
                   (run, version, "RunStarted", b"\xff not an event"))
    return version


def error_of(got) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(got.stdout)["error"]


def test_a_forged_row_makes_its_run_tampered_for_every_fold_and_the_other_run_reads(cli, audited) -> None:
    project, run = audited
    other = other_run(project)
    bad = forge(project, run)
    trial = "trials.r0.double.good"
    for command in (("replay", run), ("explain", run, trial), ("log", run), ("export", run)):
        got = cli(*command)
        assert got.exit_code == 3, (command, got.output)
        error = error_of(got)
        assert error["code"] == "run_tampered", command
        assert f"Run {run}'s log cannot be trusted: its event {bad}: {UNKEYED}" in error["message"]
        assert f"armbench ledger quarantine {run}" in error["message"]
        assert "Traceback" not in got.output
    listed = cli("runs", "--json")
    assert listed.exit_code == 0, listed.output
    found = {r["run"]: r for r in map(json.loads, listed.stdout.splitlines())}
    assert found[run]["state"] == "tampered" and found[run]["problem"].startswith(f"event {bad}: {UNKEYED}")
    assert (found[other]["state"], found[other]["problem"]) == ("running", None)
    table = cli("runs")
    assert f"| {run} | - | tampered: event {bad}: " in table.stdout
    assert cli("log", other).exit_code == 0


def test_an_undecodable_row_in_every_run_leaves_the_listing_and_says_where(cli, audited) -> None:
    project, run = audited
    other = other_run(project)
    bad = {r: garble(project, r) for r in (run, other)}
    listed = cli("runs", "--json")
    assert listed.exit_code == 0, listed.output
    found = {r["run"]: r for r in map(json.loads, listed.stdout.splitlines())}
    for r in (run, other):
        assert found[r]["state"] == "tampered"
        assert found[r]["problem"] == f"event {bad[r]}: the stored record is not readable"
    got = cli("replay", run)
    assert (got.exit_code, error_of(got)["code"]) == (3, "run_tampered")


def test_quarantine_sets_a_tampered_run_aside_and_keeps_every_row(cli, audited) -> None:
    project, run = audited
    other = other_run(project)
    bad = forge(project, run)
    before = rows(project.ledger, run)
    assert cli("ledger", "quarantine", other).exit_code == 2  # an intact run is refused
    assert error_of(cli("ledger", "quarantine", other))["code"] == "run_intact"
    got = cli("ledger", "quarantine", run)
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)["data"]["quarantined"]
    assert (data["run"], data["event"]) == (run, bad) and data["reason"].startswith(UNKEYED)
    again = cli("ledger", "quarantine", run)
    assert again.exit_code == 0 and "already set aside" in again.stderr
    listed = {r["run"]: r for r in map(json.loads, cli("runs", "--json").stdout.splitlines())}
    assert listed[run]["state"] == "quarantined" and listed[other]["state"] == "running"
    report = cli("replay", run)
    assert (report.exit_code, error_of(report)["code"]) == (3, "run_quarantined")
    assert rows(project.ledger, run) == before  # nothing deleted
    code, problems = verify(cli, run)  # verify still reads the rows, and names the break
    assert code == 1 and problems[0].startswith(f"event {bad}: {UNKEYED}")


def test_a_quarantine_entry_forged_without_the_key_hides_nothing(cli, audited) -> None:
    project, run = audited
    entry = json.dumps({"run": run, "position": 3, "reason": "hidden", "at": "2026-01-01T00:00:00+00:00",
                        "key": None, "mac": ""}).encode()
    with sqlite3.connect(project.ledger) as db:
        db.execute("INSERT INTO ledger_quarantine VALUES (?, ?)", (run, entry))
    listed = {r["run"]: r for r in map(json.loads, cli("runs", "--json").stdout.splitlines())}
    assert listed[run]["state"] == "succeeded"
    assert cli("replay", run).exit_code == 0
