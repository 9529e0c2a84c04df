"""The frozen plan: arms resolved, trials ordered and laned, hashes and commits fixed. Pure.

`freeze` is the same function for `armbench plan`, the dry plan of `armbench run` and the
plan step of a run, so a suite that cannot run is refused before any run exists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal

import msgspec

from armbench.ledger.errors import Refusal
from armbench.ledger.events import (
    Cost,
    NoTeam,
    PinnedWorkflow,
    PlanFrozen,
    PlannedArm,
    PlannedEnvironment,
    PlannedJudge,
    PlannedLabel,
    PlannedLimits,
    PlannedScorer,
    PlannedTask,
    PlannedTeam,
    PlannedTrial,
    PulledTeam,
    RubricRef,
    StepSpec,
)
from armbench.suites.arms import ResolvedArm, resolve_arms, team_kind
from armbench.suites.model import (
    DEFAULT_DISK,
    DEFAULT_MEMORY,
    DEFAULT_PIDS,
    AddFrom,
    Aliases,
    AliasTarget,
    CostCap,
    StepLimits,
    Suite,
    TrialLimits,
)
from armbench.suites.scorers import ScorerFile, correctness_scorer
from armbench.suites.sizes import parse_size
from armbench.suites.subset import Selection, select
from armbench.suites.validate import TaskEntry
from armbench.suites.values import unpublishable

__all__ = ["PlanInput", "freeze", "frozen_team", "plan_task", "resolve_model", "scorer_entry",
           "sha256", "trial_steps", "worst_case"]


def sha256(data: bytes) -> str:
    """Hex sha256 of bytes."""
    return hashlib.sha256(data).hexdigest()


class PlanInput(msgspec.Struct, frozen=True, kw_only=True):
    """Everything plan reads, already loaded from the pulled team revision."""

    suite: Suite
    suite_hash: str
    tasks: list[TaskEntry]
    task_hashes: dict[str, str]
    team_aliases: Aliases | None
    member_aliases: Aliases | None = None
    aliases_hash: str | None = None
    use_member_aliases: bool = False
    team_revision: str
    suite_dir: str | None = None
    suite_revision: str | None = None
    scorers: list[ScorerFile] = []
    """The suite's scorers, read from the pulled team revision, in suite order."""
    arm_teams: dict[str, PlannedTeam] = {}
    """Arm name -> its frozen team, for each arm on a team ref or `without` (resolved against the
    team mirror by `benchmark.team.planning`); pulled and none arms need none."""
    arm_workflows: dict[str, PinnedWorkflow] = {}
    """Arm name -> the team workflow pinned for it at its team revision, for each arm with a
    `workflow` (`benchmark.team.armworkflows`)."""
    environments: dict[str, PlannedEnvironment] = {}
    """Task id -> the environment its steps see (the task's own, else the suite's), read and
    hashed by `edge.environment` at plan time; a task without one is absent."""
    private_network: bool = False
    """Whether this machine can give a trial's tool a private network (`edge.usernet`): the
    default `trial.network` then, else the host's."""
    roles: list[str] = []
    """The member's roles and projects, whose namespaces' team assets every trial receives."""
    arm_assets: dict[str, str] = {}
    """Arm name -> the hash of the team assets its trials get (`suites.teamassets.assets_hash`,
    read by `benchmark.team.planning` at the arm's team commit for `roles`); none arms need none."""


def freeze(inp: PlanInput, selection: Selection | None = None
           ) -> tuple[PlanFrozen, list[StepSpec]]:
    """The frozen plan and the trials workflow, or a Refusal that leaves no run; `selection`
    (`--task`, `--arm`, `--repetitions`) narrows it to a subset the plan freezes."""
    suite = inp.suite
    if not inp.tasks:
        raise Refusal(f'Suite "{suite.name}" has no valid task, so there is nothing to run. '
                      "Fix its task files (armbench pull lists their problems) and pull again.",
                      code="suite_invalid")
    resolved = resolve_arms(suite)
    subset = select(selection, suite=suite.name, tasks=[t.id for t in inp.tasks],
                    arms=[a.name for a in resolved], repetitions=suite.repetitions)
    entries = [t for t in inp.tasks if subset is None or t.id in subset.tasks]
    arms = [_plan_arm(a, inp) for a in resolved if subset is None or a.name in subset.arms]
    tasks = [plan_task(t, inp.task_hashes[t.id], _environment(t, inp)) for t in entries]
    scorers = _scorers(inp, tasks)
    judge = _judge(suite, tasks, scorers, inp.suite_dir)
    if judge is not None:
        judge, scorers = _judge_models(judge, scorers, inp, suite.name)
    lanes = suite.parallel
    repetitions = suite.repetitions if subset is None else subset.repetitions
    trials = _order(tasks, arms, repetitions, lanes, judged=bool(inp.scorers))
    limits = suite.trial or TrialLimits()
    plan = PlanFrozen(
        suite=suite.name, suite_hash=inp.suite_hash, repo=_strip_credentials(suite.repo),
        repetitions=repetitions, parallel=suite.parallel, timeout_s=suite.timeout_seconds,
        setup=suite.setup, trial_timeout_s=limits.timeout_seconds,
        trial_max_turns=limits.max_turns,
        trial_network=limits.network or ("private" if inp.private_network else "host"),
        trial_limits=_limits(limits.limits),
        trial_egress=["*"] if limits.egress == "any" else sorted({h.strip() for h in limits.egress}),
        trial_retries=limits.retries, trial_retry_backoff_s=limits.retry_backoff_seconds,
        trial_setup=limits.setup,
        baseline_team_revision=inp.team_revision, roles=list(inp.roles), aliases_hash=inp.aliases_hash,
        suite_dir=inp.suite_dir, suite_revision=inp.suite_revision,
        aliases="member" if inp.use_member_aliases else "team",
        scorers=scorers, tasks=tasks, arms=arms, trials=trials, judge=judge, subset=subset,
        budget_cost=_cost(suite.budget.cost if suite.budget is not None else None),
        trial_budget_tokens=limits.budget.tokens if limits.budget is not None else None,
        trial_budget_cost=_cost(limits.budget.cost if limits.budget is not None else None),
    )
    return plan, trial_steps(plan)


def _limits(limits: StepLimits | None) -> PlannedLimits:
    """The suite's `trial.limits`, armbench's defaults where it says nothing."""
    memory = limits.memory if limits is not None else None
    pids = limits.pids if limits is not None else None
    disk = limits.disk if limits is not None else None
    return PlannedLimits(memory=parse_size(memory or DEFAULT_MEMORY),
                         pids=pids or DEFAULT_PIDS, disk=parse_size(disk or DEFAULT_DISK))


def _cost(cap: CostCap | None) -> Cost | None:
    """A suite's cost cap as the plan freezes it."""
    return None if cap is None else Cost(amount=cap.amount, unit=cap.unit)


def worst_case(plan: PlanFrozen) -> Cost | None:
    """The most the plan's trials can cost that is known before a run: trials x the per-trial
    cost cap (None without one; a tool that cannot enforce it can spend more)."""
    cap = plan.trial_budget_cost
    return None if cap is None else Cost(amount=len(plan.trials) * cap.amount, unit=cap.unit)


def scorer_entry(scorer: ScorerFile, task: str | None = None) -> PlannedScorer:
    """A scorer as the plan freezes it (`PlanFrozen.scorers`)."""
    return PlannedScorer(
        name=scorer.name, rubric=RubricRef(source_hash=scorer.source_hash),
        labels=[PlannedLabel(value=lb.value, score=lb.score) for lb in scorer.labels],
        passing_score=scorer.passing_score, model=scorer.model, text=scorer.rubric,
        task=task if task is not None else msgspec.UNSET)


def _scorers(inp: PlanInput, tasks: Sequence[PlannedTask]) -> list[PlannedScorer]:
    """The generated correctness scorers (one per successCriteria task), then the suite's."""
    generated = [scorer_entry(correctness_scorer(t.id, t.success_criteria), t.id)
                 for t in tasks if t.success_criteria]
    return generated + [scorer_entry(s) for s in inp.scorers]


def _judge(suite: Suite, tasks: Sequence[PlannedTask], scorers: Sequence[PlannedScorer],
           suite_dir: str | None) -> PlannedJudge | None:
    """The suite's judge; a suite with something to judge and no judge refuses."""
    if suite.judge is None:
        if scorers:
            criteria = [t.id for t in tasks if t.success_criteria]
            what = (f"task(s) judged by successCriteria ({', '.join(criteria)})" if criteria
                    else "") + (" and " if criteria and suite.scorers else "") + (
                f"scorers ({', '.join(suite.scorers)})" if suite.scorers else "")
            where = f"{suite_dir or 'benchmarks/' + suite.name}/suite.yaml"
            raise Refusal(f'Suite "{suite.name}" has {what} but no judge, so nothing could label '
                          f"its trials. Add `judge: {{ tool: claude }}` (a built-in agent CLI or a "
                          f"team command tool) to {where}, push, pull and start again.",
                          code="judge_missing")
        return None
    j = suite.judge
    return PlannedJudge(tool=j.tool, model=j.model, effort=j.effort, timeout_s=j.timeout_seconds)


def _judge_models(judge: PlannedJudge, scorers: list[PlannedScorer], inp: PlanInput, suite: str
                  ) -> tuple[PlannedJudge, list[PlannedScorer]]:
    """The judge's model and each scorer's own model resolved through the model aliases for the
    judge's tool, as an arm's model is for its tool: the plan freezes the alias's model, with the
    alias beside it, and the alias's effort unless the suite's `judge:` states one."""
    stated = judge.effort
    if judge.model is not None:
        model, effort, alias, _ = _resolve(judge.model, judge.tool, inp, f'Suite "{suite}"\'s judge')
        judge = msgspec.structs.replace(judge, model=model, alias=alias,
                                        effort=stated if stated is not None else effort)
    resolved = []
    for entry in scorers:
        if entry.model is not None:
            model, effort, alias, _ = _resolve(entry.model, judge.tool, inp,
                                               f'Scorer "{entry.name}"', " (the suite's judge)")
            entry = msgspec.structs.replace(
                entry, model=model, effort=stated if stated is not None else effort,
                alias=alias if alias else msgspec.UNSET)
        resolved.append(entry)
    return judge, resolved


def _plan_arm(arm: ResolvedArm, inp: PlanInput) -> PlannedArm:
    for key in ("tool", "model", "effort"):
        value = getattr(arm, key)
        if value is not None and unpublishable(value):
            raise Refusal(
                f'Arm "{arm.name}" has {key} "{value}", which looks like a URL or a path and '
                "would reach the published record. Use a plain name (a tool, a model alias or "
                "a model id) and start again.", code="arm_unpublishable")
    model, effort, alias, source = resolve_model(arm, inp)
    return PlannedArm(name=arm.name, tool=arm.tool, model=model, alias=alias,
                      effort=arm.effort if arm.effort is not None else effort, source=source,
                      team=frozen_team(arm, inp), workflow=arm.workflow,
                      pinned_workflow=_pinned(arm, inp), assets_hash=inp.arm_assets.get(arm.name))


def _pinned(arm: ResolvedArm, inp: PlanInput) -> PinnedWorkflow | None:
    """The workflow pinned for a workflow arm (`PlanInput.arm_workflows`)."""
    if arm.workflow is None:
        return None
    pinned = inp.arm_workflows.get(arm.name)
    if pinned is None or pinned.name != arm.workflow:
        raise Refusal(f'Arm "{arm.name}" runs workflow "{arm.workflow}", which was not pinned at '
                      "the arm's team revision. Run armbench pull and start again.",
                      code="workflow_not_found")
    return pinned


def frozen_team(arm: ResolvedArm, inp: PlanInput) -> PlannedTeam:
    """The arm's team as the plan freezes it: `{kind: pulled, revision}`, `{kind: none}`, or the
    ref or without entry resolved against the team mirror (`PlanInput.arm_teams`)."""
    kind = team_kind(arm.team)
    if kind == "pulled":
        return PulledTeam(revision=inp.team_revision)
    if kind == "none":
        return NoTeam()
    resolved = inp.arm_teams.get(arm.name)
    if resolved is None or resolved.kind != kind:
        raise Refusal(f'Arm "{arm.name}" has a team that was not resolved against the team repo, '
                      "so no commit can be frozen for it. Run armbench pull and start again.",
                      code="arm_team_unresolved")
    return resolved


def resolve_model(arm: ResolvedArm, inp: PlanInput
                  ) -> tuple[str | None, str | None, str | None, Literal["team", "member"]]:
    """(model, effort, alias, source) for the arm; an alias without its tool refuses."""
    if arm.model is None:
        return None, None, None, "team"
    return _resolve(arm.model, arm.tool, inp, f'Arm "{arm.name}"')


def _resolve(model: str, tool: str, inp: PlanInput, who: str, role: str = ""
             ) -> tuple[str, str | None, str | None, Literal["team", "member"]]:
    """(model, effort, alias, source) of `model` for `tool`: the alias's target (the member's
    aliases first, with --aliases member), else the model as written; an alias without `tool`
    refuses, naming `who` uses it."""
    files: list[tuple[Literal["team", "member"], Aliases | None]] = (
        [("member", inp.member_aliases)] if inp.use_member_aliases else [])
    files.append(("team", inp.team_aliases))
    for source, aliases in files:
        if aliases is None or model not in aliases.aliases:
            continue
        per_tool = aliases.aliases[model]
        target = per_tool.get(tool)
        if target is None:
            where = ("~/.armbench/models/aliases.yaml" if source == "member"
                     else "models/aliases.yaml")
            raise Refusal(
                f'{who} uses model alias "{model}", which has no model for '
                f"{tool}{role} in {where}. Add one and start again.", code="alias_unresolved")
        if isinstance(target, AliasTarget):
            return target.model, target.effort, model, source
        return target, None, model, source
    return model, None, None, "team"


def _environment(entry: TaskEntry, inp: PlanInput) -> PlannedEnvironment | None:
    """The task's environment as resolved for the plan; a declared one left unresolved refuses."""
    declared = entry.task.environment or inp.suite.environment
    if declared is None:
        return None
    found = inp.environments.get(entry.id)
    if found is None or (found.kind, found.source) != (declared.kind, declared.source):
        raise Refusal(f'Task "{entry.id}" declares the environment {declared.kind} '
                      f"{declared.source}, which was not read before planning. Start again.",
                      code="environment_unresolved")
    return found


def plan_task(entry: TaskEntry, source_hash: str,
              environment: PlannedEnvironment | None = None) -> PlannedTask:
    """A task as a plan freezes it (try tries the same frozen form)."""
    t = entry.task
    check = t.check
    return PlannedTask(
        id=entry.id, title=t.title, source_hash=source_hash, starting_commit=t.starting_commit,
        fix=t.source.fix if t.source else None, prompt=t.prompt,
        check_run=check.run if check else None,
        check_timeout_s=check.timeout_seconds if check else None,
        protect=list(check.protect) if check else [],
        check_tree=check.tree if check else "change",
        add=[a for a in check.add if isinstance(a, str)] if check else [],
        add_from={a.to: a.from_ for a in check.add if isinstance(a, AddFrom)} if check else {},
        success_criteria=t.success_criteria, environment=environment,
    )


def _order(tasks: Sequence[PlannedTask], arms: Sequence[PlannedArm], reps: int,
           lanes: int, *, judged: bool = False) -> list[PlannedTrial]:
    """Every trial in plan order; `judged`: the suite's scorers judge every trial (a
    successCriteria task's trials are judged anyway)."""
    trials: list[PlannedTrial] = []
    for rep in range(reps):
        k = rep % len(arms)
        rotated = [*arms[k:], *arms[:k]]
        for task in tasks:
            for arm in rotated:
                order = len(trials)
                lane = order % lanes + 1
                base = f"trials.{'' if lanes == 1 else f'lane{lane}.'}r{rep}.{task.id}.{arm.name}"
                trials.append(PlannedTrial(
                    task=task.id, arm=arm.name, repetition=rep, order=order, lane=lane,
                    prompt_step=f"{base}.prompt",
                    check_step=f"{base}.check" if task.check_run else "",
                    judge_step=f"{base}.judge" if judged or task.success_criteria else ""))
    return trials


def baseline_step(task: str) -> str:
    """The id of a task's baseline check step."""
    return f"trials.baselines.{task}"


def trial_steps(plan: PlanFrozen) -> list[StepSpec]:
    """The trials workflow: a baseline per checked task, then a prompt and a check per trial."""
    steps: list[StepSpec] = []
    checked = [t for t in plan.tasks if t.check_run]
    for i, task in enumerate(checked):
        steps.append(StepSpec(id=baseline_step(task.id), kind="command",
                              command="armbench check --baseline", verb="check_baseline",
                              lane=i % plan.parallel + 1,
                              tags={"task": task.id}))
    by_id = {t.id: t for t in plan.tasks}
    arms = {a.name: a for a in plan.arms}
    for trial in plan.trials:
        task, arm = by_id[trial.task], arms[trial.arm]
        tags = {"task": trial.task, "arm": trial.arm, "repetition": str(trial.repetition)}
        steps.append(StepSpec(
            id=trial.prompt_step, kind="prompt", tool=arm.tool, model=arm.model,
            effort=arm.effort, prompt=task.prompt, workspace="clone", lane=trial.lane,
            needs=[baseline_step(task.id)] if task.check_run else [],
            timeout_s=plan.trial_timeout_s, max_turns=plan.trial_max_turns,
            network=plan.trial_network, egress=plan.trial_egress, retries=plan.trial_retries,
            retry_backoff_s=float(plan.trial_retry_backoff_s), budget=plan.budget_cost,
            max_tokens=plan.trial_budget_tokens, max_cost=plan.trial_budget_cost, tags=tags))
        if trial.judge_step:  # before the check: the judge reads the tool's work, not protect's
            steps.append(StepSpec(id=trial.judge_step, kind="command", command="armbench judge",
                                  verb="judge", needs=[trial.prompt_step], workspace="continue",
                                  lane=trial.lane, tags=tags))
        if trial.check_step:
            steps.append(StepSpec(id=trial.check_step, kind="command",
                                  command="armbench check --trial", verb="check_trial",
                                  needs=[trial.prompt_step],
                                  workspace="continue", lane=trial.lane, tags=tags))
    return steps


def _strip_credentials(url: str) -> str:
    if "://" in url and "@" in url.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://{rest.split('@', 1)[1]}"
    return url
