"""The results table: per arm, usage, task by arm, baselines and the caption, from a RunView."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from typing import Any, Literal

import msgspec

from ledger.events import PlannedArm
from projections.agents import deviation, not_verified
from projections.pairs import ArmPair, derive_pairs
from projections.record import arm_entries, trial_entries
from projections.results import RunView, TrialView
from projections.usage import token_components

__all__ = ["ArmRow", "ResultsTable", "UsageRow", "build_table", "render_markdown"]

CAPTION = "These results hold for these tasks, this run and this machine."


class ArmRow(msgspec.Struct, frozen=True, kw_only=True):
    """One arm's counts and pass rate."""

    arm: str
    tool: str
    model: str | None
    effort: str | None
    source: str
    planned: int
    passed: int
    failed: int
    error: int
    unscored: int
    not_run: int
    limited: int
    deviations: int
    not_verified: int
    pass_rate: float | None


class UsageRow(msgspec.Struct, frozen=True, kw_only=True):
    """One arm's medians, each with how many values it used, and its stated cost."""

    arm: str
    median_tokens: float | None
    tokens_n: int
    median_duration_ms: float | None
    duration_n: int
    cost: dict[str, float]
    cost_n: int
    cost_planned: int


class ResultsTable(msgspec.Struct, frozen=True, kw_only=True):
    """Everything the printed text shows, as data (the done envelope's outputs.table)."""

    arms: list[ArmRow]
    usage: list[UsageRow]
    token_components: list[str]
    tasks: list[dict[str, Any]]
    baselines: list[dict[str, str]]
    unavailable: list[dict[str, str]]
    caption: str = CAPTION
    pairs: list[ArmPair] = []
    record: Literal["pending", "published"] | None = None


def build_table(view: RunView, *, record: Literal["pending", "published"] | None = None,
                trials: list[dict[str, Any]] | None = None) -> ResultsTable:
    """The table from the view; `record` is the record's publication state, also from the log.

    `trials` are the record's trial entries when the caller already has them (they are the
    pairs' input), so a report builds them once.
    """
    plan = view.plan
    if plan is None:
        return ResultsTable(arms=[], usage=[], token_components=[], tasks=[], baselines=[],
                            unavailable=[], record=record)
    by_arm: dict[str, list[TrialView]] = defaultdict(list)
    for tv in view.trials:
        by_arm[tv.trial.arm].append(tv)
    components = _components(view.trials)
    return ResultsTable(
        arms=[_arm_row(a, by_arm[a.name], plan.baseline_team_revision) for a in plan.arms],
        usage=[_usage_row(a.name, by_arm[a.name], components) for a in plan.arms],
        token_components=components,
        tasks=_task_rows(view),
        baselines=_baseline_rows(view),
        unavailable=_unavailable(view, plan.arms),
        pairs=derive_pairs(arm_entries(plan),
                           trials if trials is not None else trial_entries(view, plan),
                           components=components),
        record=record,
    )


def _arm_row(arm: PlannedArm, trials: list[TrialView], revision: str) -> ArmRow:
    results = Counter(tv.result for tv in trials)
    planned = len(trials)
    ran = [tv for tv in trials if tv.prompt is not None]
    return ArmRow(
        arm=arm.name, tool=arm.tool, model=arm.model, effort=arm.effort, source=arm.source,
        planned=planned, passed=results["passed"], failed=results["failed"],
        error=results["error"], unscored=results["unscored"], not_run=results["not_run"],
        limited=sum(1 for tv in ran if tv.prompt and tv.prompt.limit),
        deviations=sum(1 for tv in ran if deviation(arm, tv, revision)),
        not_verified=sum(1 for tv in ran if not_verified(tv)),
        pass_rate=results["passed"] / planned if planned else None,
    )


def _components(trials: list[TrialView]) -> list[str]:
    return token_components(tv.prompt.usage.tokens for tv in trials
                            if tv.prompt and tv.prompt.usage)


def _usage_row(arm: str, trials: list[TrialView], components: list[str]) -> UsageRow:
    ran = [tv.prompt for tv in trials if tv.prompt is not None]
    tokens = [sum(p.usage.tokens.get(c, 0) for c in components)
              for p in ran if p.usage and p.usage.tokens]
    durations = [p.duration_ms for p in ran if p.duration_ms is not None]
    cost: dict[str, float] = defaultdict(float)
    cost_n = 0
    for p in ran:
        if p.usage and p.usage.cost:
            cost[p.usage.cost.unit] += p.usage.cost.amount
            cost_n += 1
    return UsageRow(
        arm=arm, median_tokens=statistics.median(tokens) if tokens else None,
        tokens_n=len(tokens),
        median_duration_ms=statistics.median(durations) if durations else None,
        duration_n=len(durations), cost=dict(cost), cost_n=cost_n, cost_planned=len(ran),
    )


def _task_rows(view: RunView) -> list[dict[str, Any]]:
    assert view.plan is not None
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    for tv in view.trials:
        cells[(tv.trial.task, tv.trial.arm)].append(tv.result)
    rows = []
    for task in view.plan.tasks:
        row: dict[str, Any] = {"task": task.id}
        for arm in view.plan.arms:
            got = cells[(task.id, arm.name)]
            row[arm.name] = {"passed": got.count("passed"), "planned": len(got)}
        rows.append(row)
    return rows


def _baseline_rows(view: RunView) -> list[dict[str, str]]:
    rows = []
    for task, b in view.baselines.items():
        if b.status == "invalid":
            rows.append({"task": task, "baseline": "invalid: check passes without changes"})
        elif b.status == "could_not_run":
            cause = b.check.cause if b.check else None
            rows.append({"task": task, "baseline": f"check could not run ({cause})"})
    return rows


def _unavailable(view: RunView, arms: list[PlannedArm]) -> list[dict[str, str]]:
    out = []
    for arm in arms:
        skipped = [tv for tv in view.trials if tv.trial.arm == arm.name and tv.prompt_skipped
                   and tv.prompt_skipped.reason == "tool_unavailable"]
        if skipped:
            out.append({"arm": arm.name, "tool": arm.tool})
    return out


# ---------------------------------------------------------------- Markdown


def _pct(n: int, d: int) -> str:
    return f"{round(100 * n / d)}% ({n}/{d})" if d else "no trials"


def _model(row: ArmRow) -> str:
    model = " ".join(x for x in (row.model, row.effort) if x) or "tool default"
    return f"{model} ({row.source})"


def _cost(u: UsageRow) -> str:
    if not u.cost:
        return "not stated"
    amount = " + ".join(f"{v:.2f} {unit}" for unit, v in sorted(u.cost.items()))
    if u.cost_n < u.cost_planned:
        return f"{amount} ({u.cost_n} of {u.cost_planned}, incomplete)"
    return f"{amount} ({u.cost_n})"


def _median(value: float | None, n: int, fmt: str) -> str:
    return "unknown (0)" if value is None else f"{fmt.format(value)} ({n})"


def render_markdown(t: ResultsTable) -> str:
    """The printed results: Markdown pipe tables that render in a CI job summary."""
    lines = [f'Arm "{u["arm"]}" uses {u["tool"]}, which the local driver cannot run, '
             "so its trials did not run." for u in t.unavailable]
    if lines:
        lines.append("")
    lines += ["| Arm | Tool | Model (source) | Planned | Passed | Failed | Error | Unscored "
              "| Not run | Stopped by a limit | Deviations | Not verified | Pass rate |",
              "| --- " * 13 + "|"]
    for r in t.arms:
        lines.append(f"| {r.arm} | {r.tool} | {_model(r)} | {r.planned} | {r.passed} "
                     f"| {r.failed} | {r.error} | {r.unscored} | {r.not_run} | {r.limited} "
                     f"| {r.deviations} | {r.not_verified} | {_pct(r.passed, r.planned)} |")
    names = " + ".join(t.token_components) or "input + output"
    lines += ["", f"| Arm | Median tokens ({names}) | Median duration | Cost |",
              "| --- | --- | --- | --- |"]
    for u in t.usage:
        dur = None if u.median_duration_ms is None else u.median_duration_ms / 1000
        lines.append(f"| {u.arm} | {_median(u.median_tokens, u.tokens_n, '{:.0f}')} "
                     f"| {_median(dur, u.duration_n, '{:.1f} s')} | {_cost(u)} |")
    arm_names = [r.arm for r in t.arms]
    lines += ["", "| Task | " + " | ".join(arm_names) + " |",
              "| --- " * (len(arm_names) + 1) + "|"]
    for row in t.tasks:
        cells = [_pct(row[a]["passed"], row[a]["planned"]) for a in arm_names]
        lines.append(f"| {row['task']} | " + " | ".join(cells) + " |")
    if t.baselines:
        lines += ["", "| Task | Baseline |", "| --- | --- |"]
        lines += [f"| {b['task']} | {b['baseline']} |" for b in t.baselines]
    lines += ["", t.caption]
    if t.record == "pending":
        lines.append("record: pending")
    return "\n".join(lines) + "\n"
