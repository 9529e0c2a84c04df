"""`armbench run --fail-on-regression`: the run's record against the published history.

The history is the reports branch after a fetch, never this machine's pending queue: a record
not yet on the branch is not history. The comparison itself is `projections.history`; the branch
is read by `benchmark.records.published`, which decodes each record as a typed `Record`; one that
does not decode is skipped with a line that names it and says what was wrong, and the gate
decides from the others.
"""

from __future__ import annotations

import msgspec

from armbench.benchmark.records.published import destination, published_records
from armbench.benchmark.records.reporting import project_run
from armbench.edge.config import Checkout, ProjectConfig
from armbench.edge.reports import BRANCH, redact
from armbench.ledger.errors import ArmbenchError
from armbench.ledger.store import EventStore
from armbench.projections.history import GateVerdict, compare_records
from armbench.projections.record_types import as_record

__all__ = ["check_regression"]


def check_regression(*, store: EventStore, checkout: Checkout, config: ProjectConfig, run: str,
                     state: str, allow_inconclusive: bool = False) -> GateVerdict:
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
    verdict = compare_records(record, published, branch=BRANCH, allow_inconclusive=allow_inconclusive)
    return msgspec.structs.replace(verdict, lines=[*skipped, *verdict.lines])
