"""The report verb: project the run's log into the table and the record, and write the record."""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec

from ledger.events import Event, RecordWritten
from projections.publication import publication_state
from projections.record import build_record, encode_record, trial_entries
from projections.results import fold_run
from projections.table import build_table, render_markdown

__all__ = ["project", "write_report"]


def project(run: str, events: list[Event], run_state: str | None
            ) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(text, table, record) from the log alone."""
    view = fold_run(events)
    trials = trial_entries(view, view.plan) if view.plan is not None else None
    table = build_table(view, record=publication_state(events), trials=trials)
    record = build_record(view, run=run, trials=trials)
    if record.get("outcome") is None:
        record["outcome"] = run_state
    return render_markdown(table), msgspec.to_builtins(table), record


def write_report(run: str, events: list[Event], run_state: str, runs_dir: Path,
                 now: datetime) -> tuple[RecordWritten, str, dict[str, Any]]:
    """Write `<runs_dir>/<run>/benchmark.json`; return the event that says so, text and table."""
    text, table, record = project(run, events, run_state)
    data = encode_record(record)
    target = runs_dir / run / "benchmark.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".json.tmp")
    tmp.write_bytes(data)
    tmp.replace(target)
    return RecordWritten(sha256=hashlib.sha256(data).hexdigest(), at=now), text, table
