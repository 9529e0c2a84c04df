"""`armbench runs` lists every run; `armbench log` prints a run's events in order."""

from __future__ import annotations

import json
from datetime import datetime

import msgspec

from armbench.edge.ledgerkey import load_key
from armbench.ledger.events import RunEnded, RunStarted, StepsPlanned, decode_event
from armbench.ledger.store import EventStore


def test_runs_json_gives_one_object_a_line_oldest_first(cli, audited) -> None:
    project, run = audited
    store = EventStore(project.ledger, key=load_key(project.key_file, create=False))
    started = datetime.fromisoformat("2026-12-01T09:00:00+00:00")
    store.append("rlater", [RunStarted(run="rlater", workflow="armbench-benchmark",
                                       source_hash="0" * 64, inputs={"suite": "audit"},
                                       timeout_s=60, at=started),
                            StepsPlanned(parent=None, steps=[])], expected_version=0)
    store.close()
    got = cli("runs", "--json")
    assert got.exit_code == 0, got.output
    rows = [json.loads(line) for line in got.stdout.splitlines()]
    assert [r["run"] for r in rows] == [run, "rlater"]
    first, later = rows
    assert first["suite"] == "audit" and first["state"] == "succeeded"
    assert (first["reported"], first["not_run"], first["planned"]) == (6, 10, 16), \
        "a skipped trial never ran: it is not_run, not reported"
    assert datetime.fromisoformat(first["started_at"]).tzinfo is not None
    assert later == {"run": "rlater", "workflow": "armbench-benchmark", "suite": "audit",
                     "state": "running", "started_at": "2026-12-01T09:00:00+00:00",
                     "planned": 0, "reported": 0, "not_run": 0, "problem": None}


def test_runs_prints_a_table_for_people(cli, audited) -> None:
    _, run = audited
    got = cli("runs")
    assert got.stdout.splitlines()[0].startswith("| Run | Suite | State | Started | Trials reported |")
    assert f"| {run} | audit | succeeded |" in got.stdout and "| 6/16 (10 not run) |" in got.stdout


def test_log_json_gives_every_event_in_order_one_a_line(cli, audited) -> None:
    project, run = audited
    got = cli("log", run, "--json")
    lines = [json.loads(line) for line in got.stdout.splitlines()]
    assert [line["version"] for line in lines] == list(range(1, len(lines) + 1))
    events = [decode_event(msgspec.json.encode(line["event"])) for line in lines]
    store = EventStore(project.ledger)
    assert events == [r.event for r in store.read(run)]
    store.close()
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunEnded)


def test_log_prints_one_readable_line_an_event(cli, audited) -> None:
    _, run = audited
    text = cli("log", run).stdout.splitlines()
    json_lines = cli("log", run, "--json").stdout.splitlines()
    assert len(text) == len(json_lines)
    assert text[0].split()[:2] == ["1", "RunStarted"]
    assert any(" CheckRan step=trials.baselines.done-already " in line and "result=passed" in line
               for line in text)


def test_log_of_an_unknown_run_is_refused_naming_the_runs_there_are(cli, audited) -> None:
    _, run = audited
    got = cli("log", "rnope")
    assert got.exit_code == 2
    error = json.loads(got.stdout)["error"]
    assert error["code"] == "unknown_run" and run in error["message"]


def test_a_bad_tuning_variable_is_refused_with_what_was_expected(cli, monkeypatch) -> None:
    real = cli.project.env
    monkeypatch.setattr(cli.project, "env",
                        lambda **extra: real(**{"ARMBENCH_SNAPSHOT_EVERY": "often", **extra}))
    got = cli("runs")
    assert got.exit_code == 2
    assert "ARMBENCH_SNAPSHOT_EVERY is 'often'; expected a positive number of events" in got.output
