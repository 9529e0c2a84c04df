"""The results table: per arm, usage, task by arm, baselines and the caption, from a RunView."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Literal

import msgspec

from armbench.ledger.events import (
    NoTeam,
    PlanFrozen,
    PlannedArm,
    PlannedTeam,
    PulledTeam,
    RefTeam,
    WithoutTeam,
)
from armbench.projections.agents import not_verified
from armbench.projections.arm_pairs import ArmPair, derive_pairs
from armbench.projections.calibration import calibration_report, render_calibration
from armbench.projections.flags import flags_of
from armbench.projections.labels import scorer_rows, scoring_usage
from armbench.projections.record import arm_entries, trial_entries
from armbench.projections.record_types import RecordTrial
from armbench.projections.results import RunView, TrialView
from armbench.projections.skill_loads import SkillLoadRow, skill_load_rows
from armbench.projections.text import cell, plain
from armbench.projections.usage import StatedUsage, stated_usage, token_components
from armbench.suites.subset import subset_words

__all__ = ["ArmRow", "ResultsTable", "UsageRow", "build_table", "render_markdown"]

CAPTION = "These results hold for these tasks, this run and this machine."


class ArmRow(msgspec.Struct, frozen=True, kw_only=True):
    """One arm's counts and pass rate."""

    arm: str
    tool: str
    model: str | None
    effort: str | None
    source: str
    team: str
    """The arm's team as the Team column shows it: `pulled 3f9c2ab`, `bench/no-skill 81d0e4c`,
    `3f9c2ab without skills/release` or `none`."""
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
    transient: int = 0
    """Of the errors, those whose last attempt failed for a transient cause (the provider's or
    the network's, not the agent's)."""
    flagged: int = 0
    """Of the passes, those with a flag (`projections.flags`): a reason to look, not a failure."""


class _ArmUsage(StatedUsage, frozen=True):
    """An arm's name before its stated usage (positional, so first in the JSON)."""

    arm: str


class UsageRow(_ArmUsage, frozen=True, kw_only=True):
    """One arm's medians, each with how many values it used, and its stated cost: in the JSON,
    `arm`, then `StatedUsage`'s six figures, then `cost_planned`."""

    cost_planned: int
    """Trials whose prompt ran (the trials a complete cost would need)."""


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
    skill_loads: list[SkillLoadRow] = []
    scorers: list[dict[str, Any]] = []
    """Per scorer and arm: trials judged, labelled, each label's count, mean score."""
    scoring: list[dict[str, Any]] = []
    """Per arm: what judging its trials cost (tokens and cost as the judges stated them)."""
    calibration: dict[str, Any] | None = None
    """How the correctness judge agreed with the checks, once `armbench judge calibrate` ran."""


def build_table(view: RunView, *, record: Literal["pending", "published"] | None = None,
                trials: list[RecordTrial] | None = None) -> ResultsTable:
    """The table from the view; `record` is the record's publication state, also from the log.

    Its figures are counted from the record's trial entries (`trials`, built from the view when
    not given), so the table, the pairs and the record agree by construction and a report
    classifies each trial once.
    """
    plan = view.plan
    if plan is None:
        return ResultsTable(arms=[], usage=[], token_components=[], tasks=[], baselines=[],
                            unavailable=[], record=record)
    entries = trials if trials is not None else trial_entries(view, plan)
    by_arm: dict[str, list[tuple[TrialView, Entry]]] = defaultdict(list)
    for tv, entry in zip(view.trials, entries, strict=True):
        by_arm[entry.arm].append((tv, entry))
    components = token_components(e.tokens for e in entries if e.tokens is not None)
    usage = {a.name: stated_usage([e for _, e in by_arm[a.name]], components) for a in plan.arms}
    return ResultsTable(
        arms=[_arm_row(a, by_arm[a.name]) for a in plan.arms],
        usage=[_usage_row(a.name, by_arm[a.name], usage[a.name]) for a in plan.arms],
        token_components=components,
        tasks=_task_rows(plan, entries),
        baselines=_baseline_rows(view),
        unavailable=[{"arm": a.name, "tool": a.tool} for a in plan.arms
                     if any(_unavailable(tv) for tv, _ in by_arm[a.name])],
        pairs=derive_pairs(arm_entries(plan), entries, components=components, usage=usage),
        record=record, caption=caption(view), skill_loads=skill_load_rows(view),
        scorers=scorer_rows(plan, view.trials) if plan.scorers else [],
        scoring=[_scoring_row(a.name, by_arm[a.name]) for a in plan.arms] if plan.scorers else [],
        calibration=calibration_report(view),
    )


def _scoring_row(arm: str, trials: list[tuple[TrialView, Entry]]) -> dict[str, Any]:
    tokens: Counter[str] = Counter()
    cost: dict[str, float] = {}
    for tv, _ in trials:
        t, c = scoring_usage(tv)
        tokens.update(t)
        for unit, amount in c.items():
            cost[unit] = cost.get(unit, 0.0) + amount
    calls = sum(1 for tv, _ in trials for v in tv.labels.values()
                if not getattr(v, "reused_from", ""))
    return {"arm": arm, "calls": calls, "tokens": sum(tokens.values()), "cost": cost}


def caption(view: RunView) -> str:
    """The caption under the table, saying so when trials were not in armbench's own sandbox,
    how setup ran when the suite has one, and when the run was a subset of its suite or stopped
    at its budget."""
    return (_isolation_caption(view) + _egress_said(view) + _setup_said(view) + _graded_said(view)
            + _subset_caption(view) + budget_notice(view) + _flagged_said(view))


def _flagged_said(view: RunView) -> str:
    """How many passes are flagged, where any is (`projections.flags`)."""
    flagged = sum(1 for tv in view.trials if flags_of(tv.check, tv.result))
    if not flagged:
        return ""
    return (f" {flagged} passed trial(s) are flagged (the Flagged column): each still passed, "
            "and `armbench explain` shows why it is worth a look.")


def budget_notice(view: RunView) -> str:
    """When the run's budget stopped it: how many trials were not run, and how many of those
    that ran stated no cost in the budget's unit (counted as nothing, never as zero)."""
    plan = view.plan
    cap = plan.budget_cost if plan is not None else None
    if cap is None:
        return ""
    stopped = sum(1 for tv in view.trials
                  if tv.prompt_skipped is not None and tv.prompt_skipped.reason == "budget")
    if not stopped:
        return ""
    unstated = sum(1 for tv in view.trials if tv.prompt is not None and not _states(tv, cap.unit))
    return (f" The run's budget of {cap.amount:g} {cap.unit} was reached: {stopped} trial(s) were "
            "not run (budget)"
            + (f"; {unstated} trial(s) that ran stated no cost in {cap.unit}, so what they spent "
               "is not counted" if unstated else "") + ".")


def _states(tv: TrialView, unit: str) -> bool:
    """The trial's prompt stated a cost in `unit`."""
    usage = tv.prompt.usage if tv.prompt is not None else None
    return usage is not None and usage.cost is not None and usage.cost.unit == unit


def _isolation_caption(view: RunView) -> str:
    started = view.started
    if started is not None and not started.enforced:
        return (f"{CAPTION} Trials ran best-effort (isolation: unenforced): the team's workflow "
                "requires no strict isolation and no sandbox was declared, so no credential was "
                "withheld from them.")
    if started is None or started.isolation == "declared":
        return f"{CAPTION} Trials ran without armbench's sandbox (isolation: declared)."
    if started.shared:
        return (f"{CAPTION} Every trial's sandbox could write {len(started.shared)} shared "
                "folder(s) (workflows.sandbox_write).")
    return CAPTION


def _egress_said(view: RunView) -> str:
    """When trials' tools could reach any host: the suite opted out of the filter
    (`trial.egress: any`), or a private network could not be filtered (a plan from before)."""
    plan = view.plan
    if plan is None or plan.trial_network != "private" or view.started is None \
            or view.started.isolation == "declared":
        return ""
    if plan.trial_egress == ["*"]:
        return " Every trial's tool could reach any host (trial.egress: any)."
    return ""


def _setup_said(view: RunView) -> str:
    plan = view.plan
    if plan is None or not plan.setup:
        return ""
    if plan.trial_setup == "once":
        return (" Setup ran once per task; every trial started from a copy of its tree "
                "(setup: once).")
    return " Setup ran in every trial's clone (setup: each)."


def _graded_said(view: RunView) -> str:
    """The tasks whose checks ran on the tool's own clone (`check.tree: clone`), not on its
    change written onto a tree it never touched: what the tool left anywhere in the clone,
    setup's work and ignored files included, was graded."""
    plan = view.plan
    on_clone = [t.id for t in plan.tasks if t.check_run and t.check_tree == "clone"] if plan else []
    if not on_clone:
        return ""
    named = ", ".join(on_clone[:5]) + (f" and {len(on_clone) - 5} more" if len(on_clone) > 5 else "")
    return (f" The checks of {named} ran on the tool's own clone (check.tree: clone), so what "
            "it left there outside its change, ignored files included, was graded too.")


def _subset_caption(view: RunView) -> str:
    plan = view.plan
    if plan is None or plan.subset is None:
        return ""
    return (f" This run was a subset of suite {plan.suite} ({subset_words(plan.subset)}): "
            "the regression gate compares it only with runs of the same subset.")


Entry = RecordTrial


def _arm_row(arm: PlannedArm, trials: list[tuple[TrialView, Entry]]) -> ArmRow:
    results = Counter(e.result for _, e in trials)
    planned = len(trials)
    return ArmRow(
        arm=arm.name, tool=arm.tool, model=arm.model, effort=arm.effort, source=arm.source,
        team=team_label(arm.team),
        planned=planned, passed=results["passed"], failed=results["failed"],
        error=results["error"], unscored=results["unscored"], not_run=results["not_run"],
        limited=sum(1 for _, e in trials if e.limit),
        deviations=sum(1 for _, e in trials if e.deviation),
        not_verified=sum(1 for tv, _ in trials if not_verified(tv)),
        pass_rate=results["passed"] / planned if planned else None,
        transient=sum(1 for _, e in trials if e.transient),
        flagged=sum(1 for _, e in trials if e.flags),
    )


def _usage_row(arm: str, trials: list[tuple[TrialView, Entry]], usage: StatedUsage) -> UsageRow:
    """The arm's stated usage (the pairs' own, over all its trials) and how many of its trials
    ran the prompt (the trials a complete cost would need)."""
    return UsageRow(arm=arm, **msgspec.structs.asdict(usage),
                    cost_planned=sum(1 for tv, _ in trials if tv.prompt is not None))


def team_label(team: PlannedTeam) -> str:
    """The Team column's cell for a frozen team."""
    match team:
        case NoTeam():
            return "none"
        case RefTeam(ref=ref, revision=revision):
            return f"{ref} {revision[:7]}"
        case WithoutTeam(paths=paths, revision=revision):
            return f"{revision[:7]} without {', '.join(paths)}"
        case PulledTeam(revision=revision):
            return f"pulled {(revision or '')[:7]}".rstrip()


def _task_rows(plan: PlanFrozen, entries: list[Entry]) -> list[dict[str, Any]]:
    cells: dict[tuple[str, str], list[int]] = {}
    for e in entries:
        cell = cells.setdefault((e.task, e.arm), [0, 0])
        cell[0] += e.result == "passed"
        cell[1] += 1
    rows = []
    for task in plan.tasks:
        row: dict[str, Any] = {"task": task.id}
        for arm in plan.arms:
            passed, planned = cells.get((task.id, arm.name), (0, 0))
            row[arm.name] = {"passed": passed, "planned": planned}
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


def _unavailable(tv: TrialView) -> bool:
    return tv.prompt_skipped is not None and tv.prompt_skipped.reason == "tool_unavailable"


# ---------------------------------------------------------------- Markdown


def _pct(n: int, d: int) -> str:
    return f"{round(100 * n / d)}% ({n}/{d})" if d else "no trials"


def _model(row: ArmRow) -> str:
    model = " ".join(x for x in (row.model, row.effort) if x) or "tool default"
    return cell(f"{model} ({row.source})")


def _cost(u: UsageRow) -> str:
    if not u.cost:
        return "not stated"
    amount = " + ".join(f"{v:.2f} {cell(unit)}" for unit, v in sorted(u.cost.items()))
    if u.cost_n < u.cost_planned:
        return f"{amount} ({u.cost_n} of {u.cost_planned}, incomplete)"
    return f"{amount} ({u.cost_n})"


def _median(value: float | None, n: int, fmt: str) -> str:
    return "unknown (0)" if value is None else f"{fmt.format(value)} ({n})"


def render_markdown(t: ResultsTable) -> str:
    """The printed results: Markdown pipe tables that render in a CI job summary. Every name
    from a team file or a tool passes through `cell` (`plain` outside a table), so a row keeps
    its cells and a terminal shows an escape sequence instead of obeying it."""
    lines = [f'Arm "{plain(u["arm"])}" uses {plain(u["tool"])}, which the local driver cannot run, '
             "so its trials did not run." for u in t.unavailable]
    if lines:
        lines.append("")
    teams = any(not r.team.startswith("pulled") for r in t.arms)  # a Team column when one differs
    flagged = any(r.flagged for r in t.arms)  # a Flagged column when a pass has a flag
    lines += ["| Arm | Tool | Model (source) | " + ("Team | " if teams else "") + "Planned | Passed "
              "| Failed | Error | Unscored | Not run | Stopped by a limit | Deviations | Not verified "
              "| " + ("Flagged | " if flagged else "") + "Pass rate |",
              "| --- " * (13 + teams + flagged) + "|"]
    for r in t.arms:
        team = f"{cell(r.team)} | " if teams else ""
        marks = f"{r.flagged} | " if flagged else ""
        rate = _pct(r.passed, r.planned)
        if r.flagged:
            rate = rate[:-1] + f", {r.flagged} flagged)"
        lines.append(f"| {cell(r.arm)} | {cell(r.tool)} | {_model(r)} | {team}{r.planned} "
                     f"| {r.passed} | {r.failed} | {_errors(r)} | {r.unscored} | {r.not_run} "
                     f"| {r.limited} | {r.deviations} | {r.not_verified} | {marks}{rate} |")
    names = " + ".join(map(cell, t.token_components)) or "input + output"
    lines += ["", f"| Arm | Median tokens ({names}) | Median duration | Cost |",
              "| --- | --- | --- | --- |"]
    for u in t.usage:
        dur = None if u.median_duration_ms is None else u.median_duration_ms / 1000
        lines.append(f"| {cell(u.arm)} | {_median(u.median_tokens, u.tokens_n, '{:.0f}')} "
                     f"| {_median(dur, u.duration_n, '{:.1f} s')} | {_cost(u)} |")
    arm_names = [r.arm for r in t.arms]
    lines += ["", "| Task | " + " | ".join(map(cell, arm_names)) + " |",
              "| --- " * (len(arm_names) + 1) + "|"]
    invalid = {b["task"] for b in t.baselines if b["baseline"].startswith("invalid")}
    for row in t.tasks:
        cells = (["not run: task invalid"] * len(arm_names) if row["task"] in invalid
                 else [_pct(row[a]["passed"], row[a]["planned"]) for a in arm_names])
        lines.append(f"| {cell(row['task'])} | " + " | ".join(cells) + " |")
    lines += _scorer_lines(t)
    if t.baselines:
        lines += ["", "| Task | Baseline |", "| --- | --- |"]
        lines += [f"| {cell(b['task'])} | {cell(b['baseline'])} |" for b in t.baselines]
    if t.skill_loads:
        lines += ["", "| Arm | Skill | Change | Loaded in this arm | Loaded in the defaults arm |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [f"| {cell(r.arm)} | {cell(r.skill)} | {r.change} | {r.loaded} | {r.loaded_defaults} |"
                  for r in t.skill_loads]
    if t.calibration is not None:
        lines += ["", render_calibration(t.calibration).rstrip("\n")]
    lines += ["", plain(t.caption)]
    if t.record == "pending":
        lines.append("record: pending")
    return "\n".join(lines) + "\n"


def _errors(r: ArmRow) -> str:
    """The Error cell: the errors, and how many of them were transient (the provider's)."""
    return f"{r.error} ({r.transient} transient)" if r.transient else str(r.error)


def _scorer_lines(t: ResultsTable) -> list[str]:
    """Each scorer's labels per arm, then what judging cost per arm (apart from the prompt's)."""
    lines: list[str] = []
    for name in dict.fromkeys(r["scorer"] for r in t.scorers):
        rows = [r for r in t.scorers if r["scorer"] == name]
        values = list(rows[0]["labels"])
        lines += ["", f"| Arm | {cell(name)}: labelled | " + " | ".join(map(cell, values))
                  + " | No label | Mean score |", "| --- " * (len(values) + 4) + "|"]
        for r in rows:
            mean = "no labels" if r["meanScore"] is None else f"{r['meanScore']:.2f}"
            lines.append(f"| {cell(r['arm'])} | {r['labelled']} of {r['trials']} | "
                         + " | ".join(str(r["labels"][v]) for v in values)
                         + f" | {r['trials'] - r['labelled']} | {mean} |")
    if t.scoring:
        lines += ["", "| Arm | Judge calls | Scoring tokens | Scoring cost |",
                  "| --- | --- | --- | --- |"]
        for s in t.scoring:
            cost = " + ".join(f"{v:.2f} {cell(u)}" for u, v in sorted(s["cost"].items()))
            lines.append(f"| {cell(s['arm'])} | {s['calls']} | {s['tokens']} | "
                         f"{cost or 'not stated'} |")
    return lines
