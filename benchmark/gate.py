"""`armbench run --fail-on-regression`: the run's record against the published history.

The history is the reports branch after a fetch, never this machine's pending queue: a record
not yet on the branch is not history. The comparison itself is `projections.history`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from benchmark.publish import destination
from benchmark.reporting import project_run
from edge.config import Checkout, ProjectConfig
from edge.reports import BRANCH, read_published, redact
from ledger.errors import ArmbenchError
from ledger.store import EventStore
from projections.history import GateVerdict, compare_records

__all__ = ["check_regression", "published_records"]


def published_records(checkout: Checkout, config: ProjectConfig) -> list[dict[str, Any]]:
    """Every readable record on the reports branch (a fetch first); raises when it cannot be read."""
    records = []
    for data in read_published(destination(checkout, config), checkout.reports_mirror).values():
        try:
            record = msgspec.json.decode(data)
        except msgspec.DecodeError:
            continue
        if isinstance(record, dict) and isinstance(record.get("run"), str):
            records.append(record)
    return records


def check_regression(*, store: EventStore, checkout: Checkout, config: ProjectConfig, run: str,
                     state: str) -> GateVerdict:
    """The verdict on `run`, whose record is projected from its log."""
    record = project_run(store, run, state).record
    try:
        published = published_records(checkout, config)
    except (ArmbenchError, OSError) as exc:
        reason = redact(getattr(exc, "message", str(exc)))
        return GateVerdict(against=None, arms=[], lines=[
            f"The {BRANCH} branch of {redact(destination(checkout, config))} could not be read "
            f"({reason}), so --fail-on-regression has nothing to compare with."])
    return compare_records(record, published, branch=BRANCH)
