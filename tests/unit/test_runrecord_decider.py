"""What may be appended to a run outside its workflow, given events, when a command, then events:
a record rewritten, its delivery, a calibration. No store, no threads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
from given import given

from armbench.aggregates.runrecord import (
    CalibrationInterleaved,
    Delivered,
    DeliveryFailed,
    RecordCalibration,
    RecordRescore,
    RewriteRecord,
    StaleRecord,
    evolve,
    fold,
)
from armbench.ledger.errors import DomainError, UnknownRun
from armbench.ledger.events import (
    Agent,
    JudgeFailed,
    LabelRecorded,
    RecordDeliveryFailed,
    RecordPublished,
    RecordQueued,
    RecordWritten,
    RunEnded,
    RunStarted,
    StepReported,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
LATER = T0 + timedelta(minutes=5)
STARTED = RunStarted(run="r1", workflow="w", source_hash="h", timeout_s=3600, at=T0)
OLD, NEW = "a" * 64, "b" * 64
WRITTEN = RecordWritten(sha256=OLD, at=T0)
QUEUED = RecordQueued(destination="/srv/reports.git", path="benchmarks/runs/r1.json", at=T0)
ENDED = RunEnded(state="succeeded", at=T0)
PATH = "benchmarks/runs/r1.json"
STEP = "trials.r0.docs.a.prompt"


def delivered(sha: str = OLD, commit: str = "c" * 40) -> Delivered:
    return Delivered(destination="/srv/reports.git", branch="armbench-reports", path=PATH,
                     sha256=sha, commit=commit, at=LATER)


def published(sha: str = OLD, commit: str = "c" * 40) -> RecordPublished:
    return RecordPublished(destination="/srv/reports.git", path=PATH, sha256=sha, commit=commit,
                           at=LATER)


FAILED = DeliveryFailed(destination="/srv/reports.git", reason="offline", at=LATER)


def label(label: str = "correct", *, calibration: bool = True) -> LabelRecorded:
    return LabelRecorded(step=STEP, scorer="armbench:correctness:docs", rubric_hash="r", label=label,
                         score=1.0, passed=True, judge=Agent(tool="claude"), key="k",
                         calibration=calibration, at=LATER)


# ------------------------------------------------------------------ replay --write


def test_a_record_of_the_whole_log_is_written() -> None:
    given(STARTED, WRITTEN, ENDED).when(RewriteRecord(sha256=NEW, head=3, at=LATER)).then(
        RecordWritten(sha256=NEW, at=LATER))


def test_a_record_projected_before_another_event_was_appended_is_stale() -> None:
    given(STARTED, WRITTEN, ENDED, published()).when(RewriteRecord(sha256=NEW, head=3, at=LATER)).refuses(
        StaleRecord, "rebuilt from its log at version 3, but the log is at version 4 now")


def test_the_record_the_log_already_names_is_not_written_again() -> None:
    given(STARTED, WRITTEN, ENDED).when(RewriteRecord(sha256=OLD, head=3, at=LATER)).then()


def test_no_record_is_written_for_a_run_the_ledger_does_not_have() -> None:
    given().when(RewriteRecord(sha256=NEW, head=0, at=LATER)).refuses(UnknownRun, "no run 'r1'")


# ------------------------------------------------------------------ publication


def test_a_delivery_of_the_runs_record_is_published() -> None:
    given(STARTED, WRITTEN, QUEUED, ENDED).when(delivered()).then(published())


def test_a_delivery_another_publisher_recorded_first_is_not_recorded_twice() -> None:
    given(STARTED, WRITTEN, QUEUED, ENDED, published()).when(delivered(commit="d" * 40)).then()


def test_a_failure_after_another_publisher_delivered_the_record_is_not_recorded() -> None:
    given(STARTED, WRITTEN, QUEUED, ENDED, published()).when(FAILED).then()


def test_a_failure_while_pending_is_recorded() -> None:
    given(STARTED, WRITTEN, QUEUED, ENDED).when(FAILED).then(
        RecordDeliveryFailed(destination="/srv/reports.git", reason="offline", at=LATER))


def test_bytes_that_are_no_longer_the_runs_record_are_a_failure_and_the_run_stays_pending() -> None:
    rewritten = RecordWritten(sha256=NEW, at=LATER)
    [event] = given(STARTED, WRITTEN, QUEUED, ENDED, rewritten).when(delivered(OLD)).decided()
    assert isinstance(event, RecordDeliveryFailed)
    assert "the run's record changed while it was delivered" in event.reason
    assert "bbbbbbbbbbbb" in event.reason and "aaaaaaaaaaaa" in event.reason


def test_a_record_queued_again_is_pending_again_and_its_delivery_is_recorded() -> None:
    rewritten = RecordWritten(sha256=NEW, at=LATER)
    given(STARTED, WRITTEN, QUEUED, ENDED, published(), rewritten, QUEUED).when(delivered(NEW)).then(
        published(NEW))


def test_no_delivery_is_recorded_for_a_record_never_queued() -> None:
    given(STARTED, WRITTEN, ENDED).when(delivered()).refuses(DomainError, "never queued")


# ------------------------------------------------------------------ calibration


def test_a_finished_runs_first_calibration_is_appended() -> None:
    given(STARTED, WRITTEN, ENDED).when(RecordCalibration(verdicts=[label()], since=0)).then(label())


def test_a_calibration_goes_on_after_its_own_verdicts_and_other_appends() -> None:
    failed = JudgeFailed(step=STEP, scorer="s", rubric_hash="r", cause="timeout", calibration=True,
                         at=LATER)
    given(STARTED, WRITTEN, ENDED, label(), published()).when(
        RecordCalibration(verdicts=[failed], since=4)).then(failed)


def test_a_calibration_another_one_appended_to_since_it_started_is_refused() -> None:
    given(STARTED, WRITTEN, ENDED, label("incorrect")).when(
        RecordCalibration(verdicts=[label()], since=0)).refuses(
        CalibrationInterleaved, "Another `armbench judge calibrate` appended to run r1 (its last "
        "verdict at version 4) since this one started")


def test_a_running_run_is_not_calibrated() -> None:
    given(STARTED, WRITTEN).when(RecordCalibration(verdicts=[label()], since=0)).refuses(
        DomainError, "has not finished")


def test_only_calibration_verdicts_follow_the_end() -> None:
    given(STARTED, ENDED).when(RecordCalibration(verdicts=[label(calibration=False)], since=0)).refuses(
        DomainError, "Only calibration verdicts")


# ------------------------------------------------------------------ replay --rescore


def _rescored(value: str = "correct") -> LabelRecorded:
    return msgspec.structs.replace(label(value), calibration=False, rescored=True)


def test_a_finished_runs_rescored_verdicts_are_appended_after_a_calibration_and_each_other() -> None:
    given(STARTED, WRITTEN, ENDED, label(), _rescored("incorrect")).when(
        RecordRescore(verdicts=[_rescored()])).then(_rescored())


def test_a_running_run_is_not_rescored() -> None:
    given(STARTED, WRITTEN).when(RecordRescore(verdicts=[_rescored()])).refuses(
        DomainError, "has not finished, so not all of its trials are judged")


def test_only_rescored_verdicts_follow_the_end_by_a_rescore() -> None:
    plain = msgspec.structs.replace(label(), calibration=False)
    given(STARTED, ENDED).when(RecordRescore(verdicts=[plain])).refuses(
        DomainError, "Only rescored verdicts")
    given(STARTED, ENDED).when(RecordRescore(verdicts=[label()])).refuses(  # a calibration's
        DomainError, "Only rescored verdicts")


# ------------------------------------------------------------------ the fold


def test_the_fold_keeps_what_each_decider_reads_and_the_version_it_was_read_at() -> None:
    trial = StepReported(step=STEP, lease="l", outcome="succeeded", at=T0)
    history = [STARTED, trial, WRITTEN, QUEUED, ENDED, published(), label()]
    state = fold("r1", enumerate(history, start=1), 9)
    assert (state.version, state.started, state.ended, state.written, state.queued,
            state.published, state.calibrated_at) == (9, True, True, OLD, True, OLD, 7)
    assert fold("r1", enumerate(history, start=1), 4).ended is False  # what came after is not in
    again = evolve(state, 10, QUEUED)
    assert (again.published, again.version) == (None, 10)
