"""The benchmark record: what a reader needs to rebuild the comparison, and nothing private.

No prompts, commands, local paths, URLs with credentials or hidden check bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from armbench.ledger.events import (
    Agent,
    AttemptFailed,
    NoTeam,
    PlanFrozen,
    PlannedArm,
    PlannedTeam,
    PulledTeam,
    RefTeam,
    WithoutTeam,
)
from armbench.projections.agents import deviation
from armbench.projections.flags import flags_of
from armbench.projections.labels import published_scorers, scoring_usage, trial_labels
from armbench.projections.record_types import (
    Record,
    RecordAgent,
    RecordAgentModel,
    RecordAgentTool,
    RecordAliases,
    RecordArm,
    RecordArmWorkflow,
    RecordAttempt,
    RecordBaseline,
    RecordChain,
    RecordCommit,
    RecordCost,
    RecordFlag,
    RecordRevision,
    RecordSandbox,
    RecordSubset,
    RecordSuite,
    RecordTask,
    RecordTeam,
    RecordTrial,
    RecordWorkflow,
)
from armbench.projections.results import RunView, TrialView
from armbench.projections.skill_loads import skill_change_entries
from armbench.projections.usage import trusted_usage
from armbench.suites.plan import sha256

__all__ = ["RECORD_SCHEMA", "RecordChain", "arm_entries", "build_record", "encode_record",
           "read_record_chain", "trial_entries"]

RECORD_SCHEMA = "armbench.record/v1"


class _Chained(msgspec.Struct, frozen=True):
    chain: RecordChain | None = None


_CHAINED = msgspec.json.Decoder(_Chained)


def read_record_chain(data: bytes) -> RecordChain | None:
    """The chain head a record's bytes carry (None: none, or not a readable record)."""
    try:
        return _CHAINED.decode(data).chain
    except msgspec.DecodeError:
        return None


def build_record(view: RunView, *, run: str, trials: Sequence[RecordTrial] | None = None,
                 chain: RecordChain | None = None) -> Record:
    """The record; the same view (and chain head) always gives the same bytes."""
    plan, started, ended = view.plan, view.started, view.ended
    head = Record(
        schema=RECORD_SCHEMA, run=run,
        workflow=RecordWorkflow(name=started.workflow if started else None,
                                origin=started.origin if started else None,
                                source_hash=started.source_hash if started else None),
        outcome=ended.state if ended else None,
        started_at=started.at.isoformat() if started else None,
        isolated=True, isolation=(started.isolation if started.enforced else "unenforced")
        if started else None,
        shared_folders=len(started.shared) if started and started.shared else None,
        chain=chain)
    if plan is None:
        return head
    return msgspec.structs.replace(
        head,
        suite=RecordSuite(name=plan.suite, source_hash=plan.suite_hash),
        repetitions=plan.repetitions,
        setup=plan.trial_setup if plan.setup else None,
        subset=(RecordSubset(tasks=plan.subset.tasks, arms=plan.subset.arms,
                             repetitions=plan.subset.repetitions)
                if plan.subset is not None else None),
        baseline_team_revision=plan.baseline_team_revision,
        aliases=RecordAliases(source=plan.aliases, source_hash=plan.aliases_hash),
        scorers=published_scorers(plan),
        tasks=[RecordTask(id=t.id, starting_commit=t.starting_commit, source_hash=t.source_hash,
                          fix=t.fix or None,
                          environment=t.environment.digest if t.environment else None)
               for t in plan.tasks],
        baselines=[RecordBaseline(task=b.task, status=b.status,
                                  cause=b.check.cause if b.check and b.check.cause else None)
                   for b in view.baselines.values()],
        arms=arm_entries(plan),
        trials=list(trials) if trials is not None else trial_entries(view, plan),
        skill_changes=skill_change_entries(view))


def arm_entries(plan: PlanFrozen) -> list[RecordArm]:
    """The record's `arms[]`: each arm as frozen, in suite order."""
    return [RecordArm(name=a.name, tool=a.tool, model=a.model, alias=a.alias, effort=a.effort,
                      source=a.source, team=_arm_team(a), workflow=_arm_workflow(a),
                      roles=None if isinstance(a.team, NoTeam) or plan.roles is None
                      else list(plan.roles))
            for a in plan.arms]


def _arm_team(arm: PlannedArm) -> RecordTeam:
    """The arm's `team`, with the hash of the assets the plan froze for it."""
    team = record_team(arm.team)
    return msgspec.structs.replace(team, assets=arm.assets_hash) if arm.assets_hash else team


def _arm_workflow(arm: PlannedArm) -> RecordArmWorkflow | str | None:
    """An arm's `workflow`: `{name, sourceHash}` of the workflow plan pinned for it."""
    pinned = arm.pinned_workflow
    if pinned is None:
        return arm.workflow
    return RecordArmWorkflow(name=pinned.name, source_hash=pinned.source_hash)


def record_team(team: PlannedTeam) -> RecordTeam:
    """An arm's team as the record carries it: `{kind: pulled, revision}`, `{kind: ref, ref,
    revision}`, `{kind: without, paths, revision}` or `{kind: none}` (the plan's own `commit` of a
    without arm, the tree its trials get, stays in the ledger)."""
    match team:
        case PulledTeam(revision=revision):
            return RecordTeam(kind="pulled", revision=revision)
        case RefTeam(ref=ref, revision=revision):
            return RecordTeam(kind="ref", ref=ref, revision=revision)
        case WithoutTeam(paths=paths, revision=revision):
            return RecordTeam(kind="without", paths=list(paths), revision=revision)
        case NoTeam():
            return RecordTeam(kind="none")


def trial_entries(view: RunView, plan: PlanFrozen) -> list[RecordTrial]:
    """The record's `trials[]`: every planned trial with its result, in plan order (the i-th
    entry is `view.trials[i]`'s)."""
    arms = {a.name: a for a in plan.arms}
    revision = plan.baseline_team_revision
    digests = {t.id: t.environment.digest for t in plan.tasks if t.environment is not None}
    return [_trial(tv, arms, revision, digests.get(tv.trial.task)) for tv in view.trials]


def _trial(tv: TrialView, arms: dict[str, PlannedArm], revision: str,
           environment: str | None = None) -> RecordTrial:
    """One entry; keys are written only when they have a value, in the record's order."""
    t = tv.trial
    p = tv.prompt
    usage = trusted_usage(p.usage) if p is not None and p.usage is not None else None
    agent = p.agent if p is not None else None
    labels = trial_labels(tv) if tv.labels else None
    tokens, cost = scoring_usage(tv) if tv.labels else ({}, {})
    return RecordTrial(
        task=t.task, arm=t.arm, repetition=t.repetition, order=t.order, step=t.prompt_step,
        result=tv.result,
        duration_ms=p.duration_ms if p is not None else None,
        limit=p.limit if p is not None else None,
        tokens=dict(usage.tokens) if usage is not None and usage.tokens else None,
        cost=RecordCost(amount=usage.cost.amount, unit=usage.cost.unit)
        if usage is not None and usage.cost else None,
        usage_verified=usage.verified if usage is not None else None,
        unenforced=list(agent.unenforced) if agent is not None and agent.unenforced else None,
        credentials=list(agent.credentials) if agent is not None and agent.credentials else None,
        agent=_agent(agent, _workflow_hash(arms.get(t.arm))) if agent is not None else None,
        used=dict(agent.skills_used) if agent is not None and agent.skills_used is not None
        else None,
        deviation=agent is not None and deviation(arms[t.arm], tv, revision),
        attempts=tv.attempts if tv.retried else None,
        retried=[_retried(a) for a in tv.retried] if tv.retried else None,
        transient=bool(tv.transient),
        check_exit=tv.check.exit_code if tv.check is not None else None,
        labels=labels, scoring_tokens=dict(tokens) if tokens else None,
        scoring_cost=[RecordCost(amount=a, unit=u) for u, a in sorted(cost.items())] or None,
        environment=environment, clone=tv.preparation,
        graded=tv.check.graded if tv.check is not None else None,
        flags=[RecordFlag(name=f.name, evidence=f.evidence or None) for f in flags]
        if (flags := flags_of(tv.check, tv.result)) else None)


def _retried(attempt: AttemptFailed) -> RecordAttempt:
    """An earlier attempt in the entry's `retried`: its transient cause, and what it used (spent
    whatever came of it)."""
    usage = trusted_usage(attempt.usage) if attempt.usage is not None else None
    return RecordAttempt(
        attempt=attempt.attempt, cause=attempt.cause, duration_ms=attempt.duration_ms,
        tokens=dict(usage.tokens) if usage is not None and usage.tokens else None,
        cost=RecordCost(amount=usage.cost.amount, unit=usage.cost.unit)
        if usage is not None and usage.cost else None,
        usage_verified=usage.verified if usage is not None else None)


def _workflow_hash(arm: PlannedArm | None) -> str | None:
    """The source hash of the workflow an arm's trials ran (None: the task's one prompt)."""
    return arm.pinned_workflow.source_hash if arm is not None and arm.pinned_workflow else None


def _agent(agent: Agent, workflow: str | None = None) -> RecordAgent:
    """The entry's `agent`: only what was observed (a trial has one; a run has thousands), and
    the fingerprint of it with the workflow its arm ran."""
    tool, version = agent.tool, agent.tool_version
    requested, reported = agent.model_requested, agent.model_reported
    return RecordAgent(
        tool=RecordAgentTool(name=tool, version=version)
        if tool is not None or version is not None else None,
        model=RecordAgentModel(requested=requested, reported=reported)
        if requested is not None or reported is not None else None,
        effort=agent.effort,
        team=RecordRevision(revision=agent.team_revision, assets=agent.assets_hash)
        if agent.team_revision else None,
        project=RecordCommit(commit=agent.project_commit) if agent.project_commit else None,
        session_id=agent.session_id,
        sandbox=RecordSandbox(limits=agent.limits, network=agent.network, ports=list(agent.ports) or None,
                              egress=agent.egress, disk=agent.disk)
        if agent.limits is not None or agent.network is not None else None,
        roles=list(agent.roles) if agent.roles is not None else None,
        fingerprint=fingerprint(agent, workflow))


FINGERPRINTED = ("tool", "tool_version", "model_requested", "model_reported", "effort",
                 "team_revision", "assets_hash", "roles")
"""The parts of an `Agent` every trial of one agent shares, in the order the fingerprint reads them
(never the project commit, the session or the sandbox: those are the trial's, not the agent's)."""


def fingerprint(agent: Agent, workflow: str | None = None) -> str | None:
    """sha256 over the agent's shared parts (`FINGERPRINTED`, each as JSON, unknown ones as null)
    and the source hash of the `workflow` its arm ran (None: the one prompt), or None unless its
    tool, the tool's version, a model (requested or reported) and its team revision are all
    known: "the same agent" is never claimed from partial data."""
    model = agent.model_reported or agent.model_requested
    if not (agent.tool and agent.tool_version and model and agent.team_revision):
        return None
    parts = {name: getattr(agent, name) for name in FINGERPRINTED} | {"workflow": workflow}
    return sha256(msgspec.json.encode(parts, order="sorted"))


def encode_record(record: Record) -> bytes:
    """Stable, indented JSON bytes."""
    return msgspec.json.format(msgspec.json.encode(record), indent=2) + b"\n"
