"""`armbench export`: a run's record as SQLite tables, for ad-hoc SQL (sqlite-utils, Datasette).

The rows come from the record the log projects to today, never from anything stored beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmark.records.reporting import REPORTED, project_record
from benchmark.records.runlist import run_events
from ledger.collector import collector_paused
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
            "attempts": t.get("attempts", 1), "transient": bool(t.get("transient")),
        })
    return rows


@collector_paused()
def export_run(store: EventStore, run: str, db_path: Path) -> dict[str, int]:
    """Write the run's arms, tasks and trials into `db_path` (replacing the run's earlier rows)."""
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
    return {"arms": len(arms), "tasks": len(tasks), "trials": len(trials)}
