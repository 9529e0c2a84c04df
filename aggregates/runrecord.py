"""The deciders of what is appended to a run outside its workflow: its record rewritten
(`replay --write`), its record's delivery to the reports branch (publication), and a judge's
calibration labels (`judge calibrate`). Pure.

Each appender folds the run's `RecordState` at a version, asks its decider, and appends the
events at exactly that version; a conflict means another writer got there first, so it folds
again and asks again (`benchmark/records/decided.py`). So two processes publishing, rewriting or
calibrating one run at once never record a stale or doubled fact: the second one's decision is
made again on the first one's events.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

import msgspec

from armbench.ledger.errors import DomainError, UnknownRun
from armbench.ledger.events import (
    Event,
    JudgeFailed,
    LabelRecorded,
    RecordDeliveryFailed,
    RecordPublished,
    RecordQueued,
    RecordWritten,
    RunEnded,
    RunStarted,
)

__all__ = ["FOLDED", "RECORD_FACTS", "CalibrationInterleaved", "DeliveryFailed", "Delivered",
           "RecordCalibration", "RecordRescore", "RecordState", "RewriteRecord", "StaleRecord",
           "decide_calibration", "decide_delivery", "decide_rescore", "decide_rewrite", "evolve",
           "fold"]

RECORD_FACTS: tuple[type[Event], ...] = (RunStarted, RunEnded, RecordWritten, RecordQueued,
                                         RecordPublished)
"""The kinds the rewrite and delivery deciders read (a judged run's labels are left unread)."""
FOLDED: tuple[type[Event], ...] = (*RECORD_FACTS, LabelRecorded, JudgeFailed)
"""The kinds `RecordState` folds (every other kind only moves its version); the calibration
decider reads them all."""


class StaleRecord(DomainError):
    """A record projected from an older log than the run's: project it again."""

    code = "record_stale"


class CalibrationInterleaved(DomainError):
    """Another calibration appended to the run since this one started."""

    code = "calibration_interleaved"


class RecordState(msgspec.Struct, frozen=True, kw_only=True):
    """What the run's log says of its record, at `version`."""

    run: str
    """The run id."""
    version: int = 0
    """The run's version this state was folded at: the appender's expected version."""
    started: bool = False
    """Its log starts with RunStarted."""
    ended: bool = False
    """A RunEnded is in its log."""
    written: str | None = None
    """The sha256 of its last RecordWritten: the record a delivery must carry."""
    queued: bool = False
    """A RecordQueued is in its log: its record is meant for the reports branch."""
    published: str | None = None
    """The sha256 the last RecordPublished since the last RecordQueued delivered (None: pending)."""
    calibrated_at: int = 0
    """The version of its last calibration label or failure (0: never calibrated)."""


def evolve(state: RecordState, version: int, event: Event) -> RecordState:
    """The state after `event`, stored at `version`. Total: it never validates."""
    changed: dict[str, object] = {"version": max(state.version, version)}
    match event:
        case RunStarted():
            changed["started"] = True
        case RunEnded():
            changed["ended"] = True
        case RecordWritten(sha256=sha):
            changed["written"] = sha
        case RecordQueued():
            changed.update(queued=True, published=None)
        case RecordPublished(sha256=sha) if state.queued:
            changed["published"] = sha
        case LabelRecorded(calibration=True) | JudgeFailed(calibration=True):
            changed["calibrated_at"] = version
    return msgspec.structs.replace(state, **changed)


def fold(run: str, recorded: Iterable[tuple[int, Event]], version: int) -> RecordState:
    """The state of `run` at `version` from its (version, event) pairs (only `FOLDED` kinds need
    be given; pairs past `version` are left out, as they are not in what is decided on)."""
    state = RecordState(run=run, version=version)
    for at, event in recorded:
        if at <= version:
            state = evolve(state, at, event)
    return msgspec.structs.replace(state, version=version)


# ------------------------------------------------------------------ replay --write


class RewriteRecord(msgspec.Struct, frozen=True, kw_only=True):
    """Record a record rebuilt from the log as it stood at version `head`."""

    sha256: str
    """sha256 of the rebuilt record's bytes."""
    head: int
    """The run's version the record was projected at (its chain head's event)."""
    at: datetime
    """Now."""
    queued: RecordQueued | None = None
    """The record queued for publication with it (None: the project does not publish)."""


def decide_rewrite(state: RecordState, command: RewriteRecord) -> list[Event]:
    """A RecordWritten only for a record of the whole log: one projected before another event
    was appended (a publication, a calibration, another rewrite) is stale."""
    if not state.started:
        raise UnknownRun(state.run)
    if command.head != state.version:
        raise StaleRecord(f"Run {state.run}'s record was rebuilt from its log at version "
                          f"{command.head}, but the log is at version {state.version} now. "
                          "Rebuild it from the whole log.")
    if command.sha256 == state.written:
        return []
    return [RecordWritten(sha256=command.sha256, at=command.at),
            *([command.queued] if command.queued is not None else [])]


# ------------------------------------------------------------------ publication


class Delivered(msgspec.Struct, frozen=True, kw_only=True):
    """The run's record, with these bytes, reached the reports branch at `commit`."""

    destination: str
    """The reports repo, credentials stripped."""
    branch: str
    """The branch it is on."""
    path: str
    """Its path on that branch."""
    sha256: str
    """sha256 of the bytes delivered."""
    commit: str
    """The branch commit that holds them."""
    at: datetime
    """Now."""


class DeliveryFailed(msgspec.Struct, frozen=True, kw_only=True):
    """A try to deliver the run's record failed."""

    destination: str
    """The reports repo, credentials stripped."""
    reason: str
    """What went wrong, credentials stripped."""
    at: datetime
    """Now."""


def decide_delivery(state: RecordState, command: Delivered | DeliveryFailed) -> list[Event]:
    """Publication's facts, as the run's log has them now: nothing when another publisher has
    recorded the same delivery, and a failure, never `RecordPublished`, for bytes that are no
    longer the run's record (rewritten while they were pushed: the run stays pending)."""
    if not state.queued:
        raise DomainError(f"Run {state.run}'s record was never queued for publication, so no "
                          "delivery of it is recorded.", code="record_not_queued")
    delivered = state.published is not None and state.published == state.written
    if isinstance(command, DeliveryFailed):
        if delivered:
            return []
        return [RecordDeliveryFailed(destination=command.destination, reason=command.reason,
                                     at=command.at)]
    if state.published == command.sha256:
        return []
    if command.sha256 != state.written:
        return [RecordDeliveryFailed(
            destination=command.destination, at=command.at,
            reason=f"the run's record changed while it was delivered (its log now names "
                   f"{(state.written or 'none')[:12]}, the branch got {command.sha256[:12]} at "
                   f"{command.commit[:12]}); the next publish delivers the new one")]
    return [RecordPublished(destination=command.destination, branch=command.branch,
                            path=command.path, sha256=command.sha256, commit=command.commit,
                            at=command.at)]


# ------------------------------------------------------------------ calibration


class RecordCalibration(msgspec.Struct, frozen=True, kw_only=True):
    """Record one trial's calibration verdicts."""

    verdicts: Sequence[LabelRecorded | JudgeFailed]
    """The judge's labels or failures, each marked `calibration`."""
    since: int
    """The version of the last calibration verdict this calibration knows of: the run's when it
    started, then its own last append's."""


def decide_calibration(state: RecordState, command: RecordCalibration) -> list[Event]:
    """A finished run's calibration verdicts, unless another calibration appended since this one
    started (their judges' labels would mix in one report)."""
    if not state.ended:
        raise DomainError(f"Run {state.run} has not finished, so its checks are not all in. Let it "
                          "finish, then calibrate.", code="run_not_finished")
    if not all(v.calibration for v in command.verdicts):
        raise DomainError("Only calibration verdicts are appended after a run ended; a trial's "
                          "own labels come from its judge step.", code="not_calibration")
    if state.calibrated_at != command.since:
        raise CalibrationInterleaved(
            f"Another `armbench judge calibrate` appended to run {state.run} (its last verdict at "
            f"version {state.calibrated_at}) since this one started: the two judges' labels would "
            "mix. Let it finish, then calibrate again.")
    return list(command.verdicts)


# ------------------------------------------------------------------ replay --rescore


class RecordRescore(msgspec.Struct, frozen=True, kw_only=True):
    """Record one trial's verdicts judged again with a scorer file changed since the plan froze."""

    verdicts: Sequence[LabelRecorded | JudgeFailed]
    """The judge's labels or failures, each marked `rescored`."""


def decide_rescore(state: RecordState, command: RecordRescore) -> list[Event]:
    """A finished run's rescored verdicts. Two rescores at once need no order between them: each
    verdict stands alone under its rubric's hash, and the appender's version check keeps the log
    linear."""
    if not state.ended:
        raise DomainError(f"Run {state.run} has not finished, so not all of its trials are judged. "
                          "Let it finish, then rescore.", code="run_not_finished")
    if not all(v.rescored and not v.calibration for v in command.verdicts):
        raise DomainError("Only rescored verdicts are appended by a rescore; a trial's own labels "
                          "come from its judge step.", code="not_rescored")
    return list(command.verdicts)
