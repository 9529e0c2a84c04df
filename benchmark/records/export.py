"""`armbench export`: a run's record as SQLite tables, for ad-hoc SQL (sqlite-utils, Datasette).

The rows come from the record the log projects to today, never from anything stored beside it;
only `--with-evidence` adds the run's kept evidence (private: the one way it leaves the
evidence folder).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.records.evidence import kept_of
from benchmark.records.reporting import REPORTED, project_record
from benchmark.records.runlist import run_events
from edge.evidence import EvidenceStore
from ledger.collector import collector_paused
from ledger.events import Event, EvidenceKept
from ledger.store import EventStore

__all__ = ["export_run"]


def _trial_rows(run: str, record: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for t in record.get("trials", []):
        agent = t.get("agent", {})
        rows.append({
            "run": run, "task": t["task"], "arm": t["arm"], "repetition": t["repetition"],
            "trial_order": t["order"], "result": t["result"], "duration_ms": t.get("durationMs"),
            "limit_hit": t.get("limit"), "tokens": t.get("tokens"),
            "cost_amount": t.get("cost", {}).get("amount"), "cost_unit": t.get("cost", {}).get("unit"),
            "model_requested": agent.get("model", {}).get("requested"),
            "model_reported": agent.get("model", {}).get("reported"),
            "deviation": bool(t.get("deviation")),
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


@collector_paused()
def export_run(store: EventStore, run: str, db_path: Path,
               evidence: EvidenceStore | None = None) -> dict[str, int]:
    """Write the run's arms, tasks and trials into `db_path` (replacing the run's earlier rows);
    with `evidence` (`--with-evidence`), its kept evidence too, as table `evidence`."""
    import sqlite_utils  # it imports pandas and numpy: a second at every start, so only here

    record = project_record(run, run_events(store, run, kinds=REPORTED), None)
    db = sqlite_utils.Database(db_path)
    runs, arms_t, tasks_t, trials_t = (db.table(n) for n in ("runs", "arms", "tasks", "trials"))
    arms = [{"run": run, **{k: v for k, v in a.items() if k != "team"}} for a in record.get("arms", [])]
    tasks = [{"run": run, **t} for t in record.get("tasks", [])]
    trials = _trial_rows(run, record)
    runs.insert({"run": run, "suite": record.get("suite", {}).get("name"),
                       "outcome": record.get("outcome"), "started_at": record.get("startedAt"),
                       "team_revision": record.get("baselineTeamRevision")},
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
