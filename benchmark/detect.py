"""`armbench plan <suite> --detect <points>`: read earlier records, then ask `projections.detect`.

Earlier records are this checkout's (under the runs folder) and the published ones on the
reports branch; a run found in both counts once. An unreadable reports branch leaves the local
records, and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from benchmark.gate import published_records
from edge.config import Checkout, ProjectConfig
from edge.reports import BRANCH, redact
from ledger.errors import ArmbenchError, Refusal
from ledger.events import PlanFrozen
from projections.detect import Detection, plan_detection
from projections.record import arm_entries

__all__ = ["detect", "local_records"]


def local_records(checkout: Checkout, config: ProjectConfig) -> list[dict[str, Any]]:
    """Every readable record under the runs folder."""
    records = []
    for path in sorted(checkout.runs_dir(config).glob("*/benchmark.json")):
        try:
            record = msgspec.json.decode(path.read_bytes())
        except (OSError, msgspec.DecodeError):
            continue
        if isinstance(record, dict) and isinstance(record.get("run"), str):
            records.append(record)
    return records


def detect(plan: PlanFrozen, points: float, *, checkout: Checkout, config: ProjectConfig,
           progress: Callable[[str], None]) -> Detection:
    """The repetitions (or tasks) and cost to detect `points` between two arms of the plan."""
    if not 0 < points <= 100:
        raise Refusal(f"--detect takes a difference in percentage points above 0 and at most 100, "
                      f"not {points:g}. For example --detect 10.", code="invalid_inputs")
    records = {r["run"]: r for r in local_records(checkout, config)}
    try:
        records.update({r["run"]: r for r in published_records(checkout, config)})
    except (ArmbenchError, OSError) as exc:
        progress(f"The {BRANCH} branch could not be read "
                 f"({redact(getattr(exc, 'message', str(exc)))}): planning from this checkout's "
                 "records only.")
    return plan_detection(tasks={t.id: t.source_hash for t in plan.tasks}, arms=arm_entries(plan),
                          repetitions=plan.repetitions, records=list(records.values()),
                          points=points)
