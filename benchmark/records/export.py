"""`armbench export`: a run's record as SQLite tables, for ad-hoc SQL (sqlite-utils, Datasette).

The rows come from the record the log projects to today, never from anything stored beside it;
only `--with-evidence` adds the run's kept evidence (private: the one way it leaves the
evidence folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from armbench.benchmark.records.evidence import kept_of
from armbench.benchmark.records.reporting import REPORTED, project_record
from armbench.benchmark.records.runlist import run_events
from armbench.edge.evidence import EvidenceStore
from armbench.ledger.collector import collector_paused
from armbench.ledger.events import Event, EvidenceKept
from armbench.ledger.store import EventStore
from armbench.projections.record_types import Record, RecordArm, present

__all__ = ["export_run"]


def _trial_rows(run: str, record: Record) -> list[dict[str, Any]]:
    rows = []
    for t in record.trials:
        model = t.agent.model if t.agent is not None else None
        rows.append({
            "run": run, "task": t.task, "arm": t.arm, "repetition": t.repetition,
            "trial_order": t.order, "result": t.result, "duration_ms": t.duration_ms,
            "limit_hit": t.limit, "tokens": t.tokens,
            "cost_amount": t.cost.amount if t.cost else None,
            "cost_unit": t.cost.unit if t.cost else None,
            "model_requested": model.requested if model else None,
            "model_reported": model.reported if model else None,
            "deviation": t.deviation,
            "attempts": t.attempts or 1, "transient": t.transient,
        })
    return rows


def _evidence_rows(run: str, events: list[Event], evidence: EvidenceStore) -> list[dict[str, Any]]:
    collected = run in evidence.collected()
    rows = []
    for e in kept_of(events):
        data = None if collected else evidence.get(e.sha256)
        rows.append({"run": run, "step": e.step, "kind": e.kind, "scorer": e.scorer or "",
                     "sha256": e.sha256, "size": e.size, "cut": e.cut, "redacted": e.redacted,
                     "text": data.decode(errors="replace") if data is not None else None,
                     "collected": collected})
    return rows


def _arm_row(run: str, arm: RecordArm) -> dict[str, Any]:
    """An arm's columns, as the record writes it (its team left out: a nested value)."""
    return {"run": run, **msgspec.to_builtins(msgspec.structs.replace(arm, team=None))}


@collector_paused()
def export_run(store: EventStore, run: str, db_path: Path,
               evidence: EvidenceStore | None = None) -> dict[str, int]:
    """Write the run's arms, tasks and trials into `db_path` (replacing the run's earlier rows);
    with `evidence` (`--with-evidence`), its kept evidence too, as table `evidence`."""
    import sqlite_utils  # it imports pandas and numpy: a second at every start, so only here

    record = project_record(run, run_events(store, run, kinds=REPORTED), None)
    db = sqlite_utils.Database(db_path)
    runs, arms_t, tasks_t, trials_t = (db.table(n) for n in ("runs", "arms", "tasks", "trials"))
    arms = [_arm_row(run, a) for a in record.arms]
    tasks = [{"run": run, **msgspec.to_builtins(t)} for t in record.tasks]
    trials = _trial_rows(run, record)
    runs.insert({"run": run, "suite": record.suite.name, "outcome": present(record.outcome),
                 "started_at": present(record.started_at),
                 "team_revision": record.baseline_team_revision},
                pk="run", replace=True)
    arms_t.insert_all(arms, pk=("run", "name"), replace=True, alter=True)
    tasks_t.insert_all(tasks, pk=("run", "id"), replace=True, alter=True)
    trials_t.insert_all(trials, pk=("run", "task", "arm", "repetition"), replace=True,
                            alter=True)
    counts = {"arms": len(arms), "tasks": len(tasks), "trials": len(trials)}
    if evidence is not None:
        rows = _evidence_rows(run, run_events(store, run, kinds=(EvidenceKept,)), evidence)
        db.table("evidence").insert_all(rows, pk=("run", "step", "kind", "scorer"),
                                        replace=True, alter=True)
        counts["evidence"] = len(rows)
    return counts
