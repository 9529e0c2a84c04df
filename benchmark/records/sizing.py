"""`armbench plan <suite> --detect <points>`: read earlier records, then ask `projections.detect`.

Earlier records are this checkout's (under the runs folder) and the published ones on the
reports branch; a run found in both counts once. An unreadable reports branch leaves the local
records, and says so. A record that does not decode as a `Record` is skipped, and named.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from armbench.benchmark.records.published import published_records
from armbench.edge.config import Checkout, ProjectConfig
from armbench.edge.reports import BRANCH, redact
from armbench.ledger.errors import ArmbenchError, Refusal
from armbench.ledger.events import PlanFrozen
from armbench.projections.detect import Detection, plan_detection
from armbench.projections.record import arm_entries
from armbench.projections.record_types import Record, RecordArm, decode_records

__all__ = ["detect", "local_records"]


def local_records(checkout: Checkout, config: ProjectConfig,
                  warn: Callable[[str], None]) -> list[Record]:
    """Every record under the runs folder that decodes; `warn` is told of each one that does not."""
    named = []
    for file in sorted(checkout.runs_dir(config).glob("*/benchmark.json")):
        try:
            named.append((str(file), file.read_bytes()))
        except OSError as exc:
            warn(_skipped_local(str(file), f"it cannot be read ({exc.strerror or exc})"))
    records, bad = decode_records(named)
    for path, problem in bad:
        warn(_skipped_local(path, problem))
    return records


def _skipped_local(path: str, problem: str) -> str:
    run = path.rsplit("/", 2)[-2] if "/" in path else path
    return (f"Skipped the record {path}: {problem}. It is left out of the estimate; rebuild it "
            f"from its log with `armbench replay {run} --write`, or remove it.")


def detect(plan: PlanFrozen, points: float, *, checkout: Checkout, config: ProjectConfig,
           progress: Callable[[str], None]) -> Detection:
    """The repetitions (or tasks) and cost to detect `points` between two arms of the plan."""
    if not 0 < points <= 100:
        raise Refusal(f"--detect takes a difference in percentage points above 0 and at most 100, "
                      f"not {points:g}. For example --detect 10.", code="invalid_inputs")
    records = {r.run: r for r in local_records(checkout, config, progress)}
    try:
        records.update({r.run: r for r in published_records(checkout, config, progress)})
    except (ArmbenchError, OSError) as exc:
        progress(f"The {BRANCH} branch could not be read "
                 f"({redact(getattr(exc, 'message', str(exc)))}): planning from this checkout's "
                 "records only.")
    arms = msgspec.convert(arm_entries(plan), list[RecordArm])
    return plan_detection(tasks={t.id: t.source_hash for t in plan.tasks}, arms=arms,
                          repetitions=plan.repetitions, records=list(records.values()),
                          points=points)
