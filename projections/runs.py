"""The runs in a ledger: a row per run, folded from its events."""

from __future__ import annotations

import msgspec

from armbench.ledger.events import Event, PlanFrozen, RunEnded, RunStarted, StepReported, StepSkipped
from armbench.projections.text import plain

__all__ = ["ROW_KINDS", "RunRow", "describe", "fold_run_row"]

ROW_KINDS = (RunStarted, PlanFrozen, StepReported, StepSkipped, RunEnded)
"""The event kinds a run's row is folded from."""


class RunRow(msgspec.Struct, kw_only=True):
    """One run: id, suite, state, start, trials reported out of planned, and those that never
    ran (skipped: no driver had the tool, the baseline was not valid, cancelled, timed out)."""

    run: str
    workflow: str | None = None
    suite: str | None = None
    state: str = "running"
    started_at: str | None = None
    planned: int = 0
    reported: int = 0
    not_run: int = 0
    problem: str | None = None
    """For a `tampered` run, its first bad event and why; for a `quarantined` one, why it was set
    aside (nothing else of either is read)."""


def fold_run_row(run: str, events: list[Event]) -> RunRow:
    """A run's row from its events."""
    row = RunRow(run=run)
    prompts: set[str] = set()
    for e in events:
        if isinstance(e, RunStarted):
            row.workflow, row.started_at = e.workflow, e.at.isoformat()
            row.suite = e.inputs.get("suite")
        elif isinstance(e, PlanFrozen):
            row.planned = len(e.trials)
            prompts = {t.prompt_step for t in e.trials}
        elif isinstance(e, StepReported) and e.step in prompts:
            row.reported += 1
        elif isinstance(e, StepSkipped) and e.step in prompts:
            row.not_run += 1
        elif isinstance(e, RunEnded):
            row.state = e.state
    return row


def describe(e: Event) -> str:
    """One readable line for an event (what a tool reported in it shown escaped, `plain`)."""
    name = type(e).__name__
    fields = msgspec.to_builtins(e)
    fields.pop("type", None)
    if isinstance(e, PlanFrozen):
        return plain(f"{name} suite={e.suite} tasks={len(e.tasks)} arms={len(e.arms)} "
                     f"trials={len(e.trials)} team={e.baseline_team_revision[:12]}")
    if name == "StepsPlanned":
        return plain(f"{name} parent={fields['parent']} steps={len(fields['steps'])}")
    parts = []
    for key, value in fields.items():
        if value in (None, [], {}, False) or key in ("outputs",):
            continue
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = f"[{', '.join(value)}]"  # as the log has them: a name's `\xNN` once, not twice
        parts.append(f"{key}={value}")
    return plain(f"{name} " + " ".join(parts))
