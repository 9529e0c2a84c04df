"""The benchmark record: what a reader needs to rebuild the comparison, and nothing private.

No prompts, commands, local paths, URLs with credentials or hidden check bytes.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ledger.events import Agent, PlanFrozen, PlannedArm
from projections.agents import deviation
from projections.labels import published_scorers, scoring_usage, trial_labels
from projections.results import RunView, TrialView
from projections.skill_loads import skill_change_entries
from projections.usage import trusted_usage

__all__ = ["RECORD_SCHEMA", "RecordChain", "arm_entries", "build_record", "encode_record",
           "read_record_chain", "trial_entries"]

RECORD_SCHEMA = "armbench.record/v1"


class RecordChain(msgspec.Struct, frozen=True, kw_only=True):
    """The record's `chain`: the run's chain head when the record was projected."""

    kind: str
    """`hmac-sha256` (keyed with the ledger key) or `sha256` (a ledger written before keys)."""
    event: int
    """The version of the run's last event when the report read the log (always before the
    `RecordWritten` that names this record's bytes)."""
    head: str
    """That event's chain value."""


class _Chained(msgspec.Struct, frozen=True):
    chain: RecordChain | None = None


_CHAINED = msgspec.json.Decoder(_Chained)


def read_record_chain(data: bytes) -> RecordChain | None:
    """The chain head a record's bytes carry (None: none, or not a readable record)."""
    try:
        return _CHAINED.decode(data).chain
    except msgspec.DecodeError:
        return None


def build_record(view: RunView, *, run: str, trials: list[dict[str, Any]] | None = None,
                 chain: RecordChain | None = None) -> dict[str, Any]:
    """The record as plain data; the same view (and chain head) always gives the same bytes."""
    plan, started, ended = view.plan, view.started, view.ended
    record: dict[str, Any] = {
        "schema": RECORD_SCHEMA,
        "run": run,
        "workflow": {
            "name": started.workflow if started else None,
            "origin": started.origin if started else None,
            "sourceHash": started.source_hash if started else None,
        },
        "outcome": ended.state if ended else None,
        "startedAt": started.at.isoformat() if started else None,
        "isolated": True,
        "isolation": started.isolation if started else None,
        **({"sharedFolders": len(started.shared)} if started and started.shared else {}),
    }
    if chain is not None:
        record["chain"] = msgspec.to_builtins(chain)
    if plan is None:
        return record
    record.update({
        "suite": {"name": plan.suite, "sourceHash": plan.suite_hash},
        "repetitions": plan.repetitions,
        "baselineTeamRevision": plan.baseline_team_revision,
        "aliases": {"source": plan.aliases, "sourceHash": plan.aliases_hash},
        "scorers": published_scorers(plan),
        "tasks": [{"id": t.id, "startingCommit": t.starting_commit, "sourceHash": t.source_hash,
                   **({"fix": t.fix} if t.fix else {})} for t in plan.tasks],
        "baselines": [{"task": b.task, "status": b.status,
                       **({"cause": b.check.cause} if b.check and b.check.cause else {})}
                      for b in view.baselines.values()],
        "arms": arm_entries(plan),
        "trials": trials if trials is not None else trial_entries(view, plan),
    })
    changes = skill_change_entries(view)
    if changes:
        record["skillChanges"] = changes
    return record


def arm_entries(plan: PlanFrozen) -> list[dict[str, Any]]:
    """The record's `arms[]`: each arm as frozen, in suite order."""
    return [_drop_none({"name": a.name, "tool": a.tool, "model": a.model, "alias": a.alias,
                        "effort": a.effort, "source": a.source, "team": record_team(a.team),
                        "workflow": _arm_workflow(a)}) for a in plan.arms]


def _arm_workflow(arm: PlannedArm) -> dict[str, str] | str | None:
    """An arm's `workflow`: `{name, sourceHash}` of the workflow plan pinned for it."""
    pinned = arm.pinned_workflow
    if pinned is None:
        return arm.workflow
    return {"name": pinned.name, "sourceHash": pinned.source_hash}


def record_team(team: dict[str, Any]) -> dict[str, Any] | None:
    """An arm's team as the record carries it: `{kind: pulled, revision}`, `{kind: ref, ref,
    revision}`, `{kind: without, paths, revision}` or `{kind: none}` (the plan's own `commit` of a
    without arm, the tree its trials get, stays in the ledger)."""
    if not team:
        return None
    keys = {"pulled": ("kind", "revision"), "ref": ("kind", "ref", "revision"),
            "without": ("kind", "paths", "revision"), "none": ("kind",)}.get(team.get("kind", ""))
    return {k: team[k] for k in keys if k in team} if keys else dict(team)


def trial_entries(view: RunView, plan: PlanFrozen) -> list[dict[str, Any]]:
    """The record's `trials[]`: every planned trial with its result, in plan order (the i-th
    entry is `view.trials[i]`'s)."""
    arms = {a.name: a for a in plan.arms}
    revision = plan.baseline_team_revision
    return [_trial(tv, arms, revision) for tv in view.trials]


def _trial(tv: TrialView, arms: dict[str, PlannedArm], revision: str) -> dict[str, Any]:
    """One entry; keys are written only when they have a value, in the record's order."""
    t = tv.trial
    entry: dict[str, Any] = {"task": t.task, "arm": t.arm, "repetition": t.repetition,
                             "order": t.order, "step": t.prompt_step, "result": tv.result}
    p = tv.prompt
    if p is not None:
        if p.duration_ms is not None:
            entry["durationMs"] = p.duration_ms
        if p.limit is not None:
            entry["limit"] = p.limit
        usage, agent = p.usage, p.agent
        if usage is not None:
            usage = trusted_usage(usage)
            if usage.tokens:
                entry["tokens"] = dict(usage.tokens)
            if usage.cost:
                entry["cost"] = {"amount": usage.cost.amount, "unit": usage.cost.unit}
            entry["usageVerified"] = usage.verified
        if agent is not None:
            if agent.unenforced:
                entry["unenforced"] = list(agent.unenforced)
            entry["agent"] = _agent(agent)
            if agent.skills_used is not None:
                entry["used"] = dict(agent.skills_used)
            if deviation(arms[t.arm], tv, revision):
                entry["deviation"] = True
    if tv.check is not None and tv.check.exit_code is not None:
        entry["checkExit"] = tv.check.exit_code
    if tv.labels:
        entry["labels"] = trial_labels(tv)
        tokens, cost = scoring_usage(tv)
        if tokens:
            entry["scoringTokens"] = tokens
        if cost:
            entry["scoringCost"] = [{"amount": a, "unit": u} for u, a in sorted(cost.items())]
    return entry


def _agent(agent: Agent) -> dict[str, Any]:
    """The entry's `agent`: only what was observed (a trial has one; a run has thousands)."""
    entry: dict[str, Any] = {}
    tool, version = agent.tool, agent.tool_version
    if tool is not None or version is not None:
        entry["tool"] = ({"name": tool} if version is None else {"version": version}
                         if tool is None else {"name": tool, "version": version})
    requested, reported = agent.model_requested, agent.model_reported
    if requested is not None or reported is not None:
        entry["model"] = ({"requested": requested} if reported is None else
                          {"reported": reported} if requested is None else
                          {"requested": requested, "reported": reported})
    if agent.effort is not None:
        entry["effort"] = agent.effort
    if agent.team_revision:
        entry["team"] = {"revision": agent.team_revision}
    if agent.project_commit:
        entry["project"] = {"commit": agent.project_commit}
    if agent.session_id is not None:
        entry["sessionId"] = agent.session_id
    if agent.limits is not None or agent.network is not None:
        entry["sandbox"] = _drop_none({"limits": agent.limits, "network": agent.network,
                                       "ports": list(agent.ports) or None})
    return entry



def _drop_none(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


def encode_record(record: dict[str, Any]) -> bytes:
    """Stable, indented JSON bytes."""
    return msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n"
