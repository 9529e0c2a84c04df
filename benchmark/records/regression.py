"""`armbench run --fail-on-regression`: the run's record against the published history.

The history is the reports branch after a fetch, never this machine's pending queue: a record
not yet on the branch is not history. The comparison itself is `projections.history`. Each
published record is decoded as a typed `Record`; one that does not decode is skipped with a line
that names it and says what was wrong, and the gate decides from the others.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from benchmark.records.publish import destination
from benchmark.records.reporting import project_run
from edge.config import Checkout, ProjectConfig
from edge.reports import BRANCH, read_published, record_path, redact
from ledger.errors import ArmbenchError
from ledger.store import EventStore
from projections.history import GateVerdict, compare_records
from projections.record_types import Record, as_record, decode_records

__all__ = ["check_regression", "published_records", "skipped_published"]


def skipped_published(path: str, source: str, problem: str) -> str:
    """The warning for a published record that does not decode."""
    return (f"Skipped the record {path} on the {BRANCH} branch of {redact(source)}: {problem}. "
            "It is left out of the comparison; remove it from the branch, or put back the record "
            "armbench wrote for that run.")


def published_records(checkout: Checkout, config: ProjectConfig,
                      warn: Callable[[str], None]) -> list[Record]:
    """Every record on the reports branch (a fetch first) that decodes; `warn` is told of each one
    that does not. Raises when the branch cannot be read."""
    source = destination(checkout, config)
    found = read_published(source, checkout.reports_mirror)
    records, bad = decode_records((record_path(run), data) for run, data in sorted(found.items()))
    for path, problem in bad:
        warn(skipped_published(path, source, problem))
    return records


def check_regression(*, store: EventStore, checkout: Checkout, config: ProjectConfig, run: str,
                     state: str) -> GateVerdict:
    """The verdict on `run`, whose record is projected from its log; its lines start with a
    warning for each published record that was skipped."""
    record = as_record(project_run(store, run, state).record)
    skipped: list[str] = []
    try:
        published = published_records(checkout, config, skipped.append)
    except (ArmbenchError, OSError) as exc:
        reason = redact(getattr(exc, "message", str(exc)))
        return GateVerdict(against=None, arms=[], lines=[
            f"The {BRANCH} branch of {redact(destination(checkout, config))} could not be read "
            f"({reason}), so --fail-on-regression has nothing to compare with."])
    verdict = compare_records(record, published, branch=BRANCH)
    return msgspec.structs.replace(verdict, lines=[*skipped, *verdict.lines])
