"""Publishing records on the reports branch: queued at report, delivered, retried while pending.

The ledger is the queue. The report step appends `RecordQueued` to its run, then tries to deliver
every pending record at once; each run's stream gets `RecordPublished` or `RecordDeliveryFailed`.
What is pending is folded from the log (`projections.publication`), never kept elsewhere; the
bytes pushed are the run's record file, checked against the sha256 of its last `RecordWritten`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime

import msgspec

from armbench.aggregates.runrecord import RECORD_FACTS, Delivered, DeliveryFailed, decide_delivery
from armbench.benchmark.records.decided import append_decided, record_state
from armbench.benchmark.records.published import destination
from armbench.benchmark.records.reporting import record_file
from armbench.edge.config import Checkout, ProjectConfig
from armbench.edge.reports import BRANCH, deliver, record_path, redact
from armbench.ledger.errors import ArmbenchError, ConcurrencyConflict
from armbench.ledger.events import Event, RecordDeliveryFailed, RecordPublished, RecordQueued, RecordWritten
from armbench.ledger.store import EventStore
from armbench.projections.publication import pending_runs

__all__ = ["Delivery", "pending", "publish_pending", "queue_and_deliver", "queued", "record_delivery"]

_TOPICS = ("RecordQueued", "RecordPublished")


class Delivery(msgspec.Struct, frozen=True, kw_only=True):
    """What one try to publish the pending records did."""

    destination: str
    """The reports repo, credentials stripped."""
    branch: str = BRANCH
    """The branch records are published on."""
    delivered: list[str] = []
    """Runs whose record is now on the branch."""
    pending: list[str] = []
    """Runs whose record still waits."""
    commit: str | None = None
    """The branch commit that holds the delivered records."""
    error: str | None = None
    """Why the rest stays pending, when something did."""


def pending(store: EventStore) -> list[str]:
    """Runs whose record is queued and not yet published."""
    return pending_runs((r.stream, r.event) for r in store.all(topics=_TOPICS))


def queued(checkout: Checkout, config: ProjectConfig, run: str,
           now: datetime) -> RecordQueued | None:
    """The event that queues the run's record for publication (None with `publish: false`):
    appended with the `RecordWritten` of a record written at report or by `replay --write`,
    so `armbench publish` pushes the record the run has now."""
    if not config.publish:
        return None
    return RecordQueued(destination=redact(destination(checkout, config)), path=record_path(run),
                        at=now)


def queue_and_deliver(*, store: EventStore, checkout: Checkout, config: ProjectConfig, run: str,
                      written: RecordWritten, now: datetime,
                      progress: Callable[[str], None]) -> list[Event]:
    """At report: queue the run's record and deliver it with every earlier pending one.

    Returns the run's own events (it is mid-report, so the engine appends them); the other runs'
    events are appended to their streams here.
    """
    queue = queued(checkout, config, run, now)
    if queue is None:
        return []
    dest = destination(checkout, config)
    wanted = {r: _last_written(store, r) for r in pending(store) if r != run}
    wanted[run] = written.sha256
    delivery, outcomes = _deliver(checkout, config, dest, wanted, now)
    # Another run's lost event must not fail this run's report: it is said on stderr instead.
    for lost in _append_all(store, {r: got for r, got in outcomes.items() if r != run}):
        progress(lost)
    _tell(delivery, run, progress)
    return [queue, _own_event(outcomes[run])]


def publish_pending(*, store: EventStore, checkout: Checkout, config: ProjectConfig,
                    now: datetime) -> Delivery:
    """`armbench publish`: deliver every pending record now."""
    dest = destination(checkout, config)
    wanted = {r: _last_written(store, r) for r in pending(store)}
    if not wanted:
        return Delivery(destination=redact(dest))
    delivery, outcomes = _deliver(checkout, config, dest, wanted, now)
    lost = _append_all(store, outcomes)
    if lost:
        raise ConcurrencyConflict(" ".join(lost))
    return delivery


def _deliver(checkout: Checkout, config: ProjectConfig, dest: str, wanted: dict[str, str | None],
             now: datetime) -> tuple[Delivery, dict[str, Delivered | DeliveryFailed]]:
    """Push the wanted runs' records in one commit; what it did, and each run's outcome."""
    shown = redact(dest)
    files, problems = _files(checkout, config, wanted)
    outcomes: dict[str, Delivered | DeliveryFailed] = {
        run: DeliveryFailed(destination=shown, reason=why, at=now) for run, why in problems.items()}
    commit, error = None, None
    if files:
        try:
            commit = deliver(dest, checkout.reports_mirror,
                             {record_path(r): data for r, (data, _) in files.items()},
                             message=f"armbench: publish {', '.join(sorted(files))}", when=now)
        except (ArmbenchError, OSError, ValueError) as exc:
            error = redact(getattr(exc, "message", str(exc)))
    for run, (_data, sha) in files.items():
        outcomes[run] = (Delivered(destination=shown, branch=BRANCH, path=record_path(run),
                                   sha256=sha, commit=commit, at=now) if commit else
                         DeliveryFailed(destination=shown, reason=error or "", at=now))
    delivered = sorted(files) if commit else []
    left = sorted(set(wanted) - set(delivered))
    reasons = [error] if error else []
    reasons += [f"run {r}: {why}" for r, why in sorted(problems.items())]
    return Delivery(destination=shown, delivered=delivered, pending=left, commit=commit,
                    error="; ".join(reasons) or None), outcomes


def _files(checkout: Checkout, config: ProjectConfig, wanted: dict[str, str | None]
           ) -> tuple[dict[str, tuple[bytes, str]], dict[str, str]]:
    files: dict[str, tuple[bytes, str]] = {}
    problems: dict[str, str] = {}
    for run, sha in wanted.items():
        path = record_file(checkout.runs_dir(config), run)
        data = path.read_bytes() if path.is_file() else None
        if data is None or sha is None or hashlib.sha256(data).hexdigest() != sha:
            problems[run] = (f"its record {path} is missing or differs from the one its log says "
                             f"was written; run `armbench verify {run}`")
        else:
            files[run] = (data, sha)
    return files, problems


def _last_written(store: EventStore, run: str) -> str | None:
    return record_state(store, run, RECORD_FACTS).written


def _own_event(outcome: Delivered | DeliveryFailed) -> Event:
    """The reporting run's own delivery, appended with its report (its record is the one just
    written, in the same append)."""
    if isinstance(outcome, DeliveryFailed):
        return RecordDeliveryFailed(destination=outcome.destination, reason=outcome.reason,
                                    at=outcome.at)
    return RecordPublished(destination=outcome.destination, branch=outcome.branch,
                           path=outcome.path, sha256=outcome.sha256, commit=outcome.commit,
                           at=outcome.at)


def record_delivery(store: EventStore, run: str, outcome: Delivered | DeliveryFailed) -> list[Event]:
    """Append another run's delivery through its decider (`aggregates.runrecord.decide_delivery`):
    decided on its log at a version and appended at exactly that version, again after a
    conflict; the events recorded (none when another publisher recorded it first). When every
    try loses, a `ConcurrencyConflict` names the run and says the delivery is not recorded
    (never dropped silently: the run stays pending, so its next publish says so)."""
    try:
        return append_decided(store, run, lambda state: decide_delivery(state, outcome),
                              kinds=RECORD_FACTS)[0]
    except ConcurrencyConflict as exc:
        kind = "RecordPublished" if isinstance(outcome, Delivered) else "RecordDeliveryFailed"
        raise ConcurrencyConflict(
            f"Could not record {kind} in run {run}: {exc.message} The record's delivery is not "
            "in the log, so the run stays pending; run `armbench publish` again once the other "
            "writer is done.") from exc


def _append_all(store: EventStore, outcomes: dict[str, Delivered | DeliveryFailed]) -> list[str]:
    """Record every run's delivery; the message of each run whose delivery was lost."""
    lost = []
    for run, outcome in outcomes.items():
        try:
            record_delivery(store, run, outcome)
        except ConcurrencyConflict as exc:
            lost.append(exc.message)
    return lost


def _tell(delivery: Delivery, run: str, progress: Callable[[str], None]) -> None:
    others = [r for r in delivery.delivered if r != run]
    if run in delivery.delivered:
        progress(f"Published the record on {BRANCH} of {delivery.destination} "
                 f"({record_path(run)}).")
    if others:
        progress(f"Also published the pending records of {', '.join(others)}.")
    if delivery.pending:
        progress(f"Could not publish to {BRANCH} of {delivery.destination}: {delivery.error}. "
                 f"Pending: {', '.join(delivery.pending)}. The next run, or `armbench publish`, "
                 "tries again.")
