"""`armbench replay` rebuilds a run with today's rules and names what moved; `--write` keeps it.

The log was recorded under today's rule (a check that could not run makes the trial an error);
the tests then change the rule, as a later armbench might, and replay that log.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest
from ledger_procs import keyed_store

import armbench.projections.results as results
from armbench.benchmark.records.audit import record_changes, replay_run, verify_run
from armbench.benchmark.records.publish import pending
from armbench.benchmark.records.published import published_record
from armbench.edge.config import find_checkout, load_config
from armbench.ledger.chaincheck import ChainRule
from armbench.ledger.events import RecordDeliveryFailed, RecordWritten
from armbench.ledger.store import verify_chain
from armbench.projections.record import read_record_chain
from armbench.projections.replay import diff_records
from armbench.projections.results import TrialView

TODAYS_RULE = results.classify
MOVED = ["trial r0.crashy.good: error -> unscored",
         "arm good: error 1 -> 0, unscored 0 -> 1; pass rate unchanged"]


def unscored_when_the_check_could_not_run(tv: TrialView) -> tuple[str, str]:
    """The changed rule: no check verdict means no score, rather than an error."""
    if tv.prompt and tv.prompt.outcome == "succeeded" and tv.check and tv.check.result == "could_not_run":
        return "unscored", "The check could not run, so the trial has no score."
    return TODAYS_RULE(tv)


def clock() -> datetime:
    return datetime(2026, 12, 24, tzinfo=UTC)


@pytest.fixture
def store(audited):
    s = keyed_store(audited[0])
    yield s
    s.close()


def test_replay_with_todays_rules_changes_nothing(audited, store) -> None:
    project, run = audited
    got = replay_run(store, run, project.runs_dir, write=False, now=clock)
    assert (got.changes, got.record_found, got.written) == ([], True, False)


def test_replay_names_the_trial_that_moved_and_the_arm_figures_that_changed(
        audited, store, monkeypatch) -> None:
    project, run = audited
    monkeypatch.setattr(results, "classify", unscored_when_the_check_could_not_run)
    before = store.version(run)
    got = replay_run(store, run, project.runs_dir, write=False, now=clock)
    assert got.changes == MOVED
    assert "| good | scripted | fixer (team) | 4 | 1 | 0 | 0 | 1 | 2 |" in got.text
    assert not got.written and store.version(run) == before


def test_replay_write_replaces_the_record_appends_record_written_and_verify_passes_again(
        audited, store, monkeypatch) -> None:
    project, run = audited
    monkeypatch.setattr(results, "classify", unscored_when_the_check_could_not_run)
    assert verify_run(store, run, project.runs_dir) == [
        "the record does not match what its log projects to (run armbench replay to see how)"]
    got = replay_run(store, run, project.runs_dir, write=True, now=clock)
    assert got.changes == MOVED and got.written
    record = project.runs_dir / run / "benchmark.json"
    last = store.read(run)[-1].event
    assert last == RecordWritten(sha256=hashlib.sha256(record.read_bytes()).hexdigest(), at=clock())
    assert json.loads(record.read_bytes())["trials"][0]["result"] == "unscored"
    assert verify_chain(store.read_raw(run), stream=run,
                        rule=ChainRule(key=store.key, keyed=True)) is None
    assert verify_run(store, run, project.runs_dir) == []
    assert replay_run(store, run, project.runs_dir, write=True, now=clock).written is False
    monkeypatch.setattr(results, "classify", TODAYS_RULE)
    assert verify_run(store, run, project.runs_dir) == [
        "the record does not match what its log projects to (run armbench replay to see how)"]


def test_the_replay_command_shows_the_difference_then_writes(cli, audited, monkeypatch) -> None:
    _, run = audited
    monkeypatch.setattr(results, "classify", unscored_when_the_check_could_not_run)
    shown = cli("replay", run)
    assert shown.exit_code == 0, shown.output
    assert "Changed against the stored record:\n  " + "\n  ".join(MOVED) + "\n" in shown.stderr
    assert json.loads(shown.stdout)["data"]["replay"]["written"] is False
    written = cli("replay", run, "--write")
    assert "Wrote " in written.stderr and json.loads(written.stdout)["data"]["replay"]["written"]
    verified = cli("verify", run)
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.stdout)["data"]["verify"] == {"run": run, "ok": True, "problems": [],
                                                           "chain": "hmac-sha256"}


def test_replay_write_queues_the_new_record_and_publish_pushes_it(cli, audited, store,
                                                                  monkeypatch) -> None:
    """The reports branch (which the regression gate and the dashboard read) gets the rewritten
    record, not the one the report step published."""
    project, run = audited
    checkout = find_checkout(project.calc)
    config = load_config(checkout)
    before = published_record(checkout, config, run)
    assert before == (project.runs_dir / run / "benchmark.json").read_bytes()
    monkeypatch.setattr(results, "classify", unscored_when_the_check_could_not_run)
    written = cli("replay", run, "--write")
    assert written.exit_code == 0, written.output
    assert "queued it for publication" in written.stderr
    assert [type(r.event).__name__ for r in store.read(run)][-2:] == ["RecordWritten",
                                                                     "RecordQueued"]
    assert pending(store) == [run]
    published = cli("publish")
    assert published.exit_code == 0, published.output
    assert json.loads(published.stdout)["data"]["publish"]["delivered"] == [run]
    after = published_record(checkout, config, run)
    assert after == (project.runs_dir / run / "benchmark.json").read_bytes() != before
    assert json.loads(after or b"")["trials"][0]["result"] == "unscored"
    assert pending(store) == []


def test_the_difference_names_pass_rates_arms_and_fields() -> None:
    def record(results: list[str], outcome: str = "succeeded") -> dict:
        return {"outcome": outcome, "arms": [{"name": "a"}],
                "trials": [{"task": "t", "arm": "a", "repetition": i, "result": r}
                           for i, r in enumerate(results)]}

    assert diff_records(record(["passed", "failed"]), record(["passed", "failed"])) == []
    assert diff_records(record(["passed", "error"]), record(["passed", "passed"], "failed")) == [
        "trial r1.t.a: error -> passed",
        "arm a: passed 1 -> 2, error 1 -> 0; pass rate 1/2 -> 2/2",
        "field outcome: 'succeeded' -> 'failed'"]


def test_a_trial_whose_result_stayed_but_whose_figures_moved_is_named() -> None:
    old = {"arms": [{"name": "a"}], "trials": [
        {"task": "t", "arm": "a", "repetition": 0, "result": "passed", "durationMs": 5},
        {"task": "t", "arm": "a", "repetition": 1, "result": "failed"}]}
    new = {"arms": [{"name": "a"}], "trials": [
        {"task": "t", "arm": "a", "repetition": 0, "result": "passed", "durationMs": 7,
         "deviation": True},
        {"task": "t", "arm": "a", "repetition": 1, "result": "failed"}]}
    assert diff_records(old, new) == [
        "trial r0.t.a: passed, but deviation None -> True, durationMs 5 -> 7"]


def test_record_changes_reads_the_stored_bytes_only_when_they_differ(audited, store) -> None:
    project, run = audited
    stored = (project.runs_dir / run / "benchmark.json").read_bytes()
    rebuilt = json.loads(stored)
    assert record_changes(stored, rebuilt) == []
    assert record_changes(json.dumps(rebuilt).encode(), rebuilt) == [], "layout alone is no change"
    assert record_changes(b"{not json", rebuilt)[0].startswith("the stored record is not readable")
    assert record_changes(b"[]", rebuilt) == ["the stored record is not a JSON object"]


def test_replay_write_projects_again_when_another_writer_appends_before_its_record_is_recorded(
        audited, store, monkeypatch) -> None:
    """A publication appended between the record's projection and its RecordWritten makes that
    record stale (`aggregates.runrecord.decide_rewrite`): it is projected again from the whole
    log, so the record's chain head is the event just before its RecordWritten."""
    project, run = audited
    monkeypatch.setattr(results, "classify", unscored_when_the_check_could_not_run)
    other = keyed_store(project)
    heads = []
    real_head = type(store).head

    def head_then_race(self, stream):  # the first projection's head, then another writer
        got = real_head(self, stream)
        heads.append(got.event)
        if len(heads) == 1:
            other.append(run, [RecordDeliveryFailed(destination="r", reason="offline", at=clock())],
                         expected_version=got.event)
        return got

    monkeypatch.setattr(type(store), "head", head_then_race)
    try:
        assert replay_run(store, run, project.runs_dir, write=True, now=clock).written
    finally:
        other.close()
    rows = store.read(run)
    assert [type(r.event) for r in rows[-2:]] == [RecordDeliveryFailed, RecordWritten]
    chain = read_record_chain((project.runs_dir / run / "benchmark.json").read_bytes())
    assert heads == [rows[-3].version, rows[-2].version] and chain is not None
    assert chain.event == rows[-2].version  # never the head from before the other writer
