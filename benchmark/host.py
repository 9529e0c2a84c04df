"""The benchmark host: runs the workflow's `armbench` verbs and prepares trial clones."""

from __future__ import annotations

import dataclasses
import errno
import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import msgspec

from armbench.benchmark.trials.leftovers import kill_left
from armbench.benchmark.trials.teaminstall import installed
from armbench.benchmark.trials.toolstep import ENVIRONMENT_NAME, ENVIRONMENT_ROOT
from armbench.benchmark.trials.workfolder import discard, remove_tree, settle_discards, work_root
from armbench.edge.config import Checkout, ProjectConfig
from armbench.edge.environment import EnvironmentRefused
from armbench.edge.limits import Limits
from armbench.edge.proc import WITHHELD, ProcResult
from armbench.edge.sandbox import Room, Sandbox
from armbench.edge.tree import TreeMoved
from armbench.engine.protocol import HostOutcome, Lease, Prepared, Report
from armbench.ledger.collector import collector_paused
from armbench.ledger.errors import ArmbenchError
from armbench.ledger.events import (
    ChangeFacts,
    CheckRan,
    EvidenceKept,
    JudgeFailed,
    LabelRecorded,
    PlanFrozen,
    PlannedTask,
    Preparation,
    RunStarted,
    StepSpec,
)
from armbench.ledger.store import EventStore
from armbench.suites.workflows import armbench_verb

if TYPE_CHECKING:  # each verb's own modules are imported when it runs (below)
    from armbench.benchmark.agents.base import ToolAdapter
    from armbench.benchmark.teamdelivery import TeamDelivery
    from armbench.benchmark.trials.checks import Graded
    from armbench.benchmark.trials.evidence import Keeper
    from armbench.benchmark.trials.prepared import Copy, Origin, PreparedTrees
    from armbench.benchmark.trials.workspace import TrialSources
    from armbench.edge.change import Change
    from armbench.edge.evidence import EvidenceStore
    from armbench.edge.gitclone import CommitCache

__all__ = ["BenchmarkHost", "verb_of"]

T = TypeVar("T")


def verb_of(spec: StepSpec) -> str | None:
    """Which armbench verb a command step is: its typed `verb`, or, for a step recorded before
    steps had one (or a team workflow's command line), its `armbench <verb>` command."""
    return spec.verb if spec.verb is not None else armbench_verb(spec.command)


class BenchmarkHost:
    """Owns what the steps of `armbench-benchmark` mean.

    A process may run one verb of a run (an external driver's `next`, `launch` or `report`), so
    what only some verbs use (git and the commit cache, the team delivery, the checks, the
    report and its publication) is imported and made when a verb first needs it."""

    def __init__(self, *, store: EventStore, checkout: Checkout, config: ProjectConfig,
                 cache: Callable[[], CommitCache], clock: Callable[[], datetime],
                 progress: Callable[[str], None], sandbox: Sandbox,
                 tools: Callable[[str], Mapping[str, ToolAdapter]]) -> None:
        """`tools(run)`: the run's tools, which its judge steps launch (the composition root
        hands the drivers the same function)."""
        self.store, self.checkout, self.config = store, checkout, config
        self._cache, self.clock, self.progress = cache, clock, progress
        self.sandbox = sandbox
        self._plans: dict[str, PlanFrozen] = {}
        self._sources: dict[str, TrialSources] = {}
        self._started: dict[str, RunStarted] = {}
        self._fixes: dict[tuple[str, str], list[str]] = {}
        self._stops: dict[str, threading.Event] = {}
        self._teams: dict[str, TeamDelivery] = {}
        self._prepared_trees: dict[str, PreparedTrees] = {}
        self._releasing = threading.Lock()
        """Held while a clone is taken off the run's folder and while that folder is removed:
        a driver thread's last report releases its clone after the report is in the log, so
        another thread may already have ended the run and be walking the folder."""
        self.tools_of = tools

    # ---------------------------------------------------------------- what the run knows

    def _first(self, run: str, kind: type[T], memo: dict[str, T]) -> T:
        """The run's first event of a kind, read once from the log (only that kind's rows)."""
        if run not in memo:
            memo[run] = cast(T, self.store.events(run, kinds=(kind,))[0])  # type: ignore[arg-type]
        return memo[run]

    def withheld(self, run: str) -> list[str]:
        """The variables a run's steps never see: armbench's list, or none in a best-effort run
        (a team's override without strict, where no sandbox was declared)."""
        return list(WITHHELD) if self._run_started(run).enforced else []

    def _run_started(self, run: str) -> RunStarted:
        return self._first(run, RunStarted, self._started)

    def plan_of(self, run: str) -> PlanFrozen:
        """The run's frozen plan, from its PlanFrozen event."""
        return self._first(run, PlanFrozen, self._plans)

    def sources(self, run: str) -> TrialSources:
        """The run's commit source (made once, on first use)."""
        if run not in self._sources:
            from armbench.benchmark.trials.workspace import TrialSources, team_suite_file

            plan = self.plan_of(run)
            self._sources[run] = TrialSources(
                plan.repo, plan.tasks, self._cache(), self.checkout.root, work_root(run),
                team_suite_file(plan, self.checkout.mirror))
        return self._sources[run]

    def team_of(self, run: str) -> TeamDelivery:
        """The run's team delivery (made once, on first use): the mirror read by commit, no fetch."""
        if run not in self._teams:
            from armbench.benchmark.teamdelivery import TeamDelivery
            from armbench.edge.team import files_at

            mirror = self.checkout.mirror
            plan = self.plan_of(run)
            roles = plan.roles if plan.roles is not None else list(self.config.roles)
            self._teams[run] = TeamDelivery(plan, lambda rev: files_at(mirror, rev), roles)
        return self._teams[run]

    def sandbox_of(self, run: str) -> Sandbox:
        """The sandbox the run's steps start in: the clone appears as `/tmp/<repo name>`, each
        step held to the plan's limits."""
        plan = self.plan_of(run)
        return dataclasses.replace(self.sandbox.of_repo(plan.repo, self.checkout.root),
                                   limits=Limits.of(plan.trial_limits))

    def sandbox_for(self, run: str, task: PlannedTask) -> Sandbox:
        """The sandbox of one task's steps: the run's, with the task's environment as its root
        (checked against the digest the plan froze; EnvironmentRefused when it cannot be used)."""
        sandbox = self.sandbox_of(run)
        env = task.environment
        if env is None or sandbox.isolation == "declared":
            return sandbox
        from armbench.edge.environment import root_of

        return dataclasses.replace(sandbox, root=root_of(env.kind, env.path or env.source,
                                                         env.digest, base=Path("/")))

    def stop_of(self, run: str) -> threading.Event:
        """Set when the run is cancelled: its setup and checks stop at once."""
        return self._stops.setdefault(run, threading.Event())

    def _time_left(self, run: str) -> Callable[[], float | None]:
        started = self._run_started(run)
        deadline = started.at.timestamp() + started.timeout_s

        def left() -> float | None:
            return max(0.0, deadline - self.clock().timestamp())
        return left

    # ---------------------------------------------------------------- Host

    def runs_itself(self, spec: StepSpec) -> bool:
        """The workflow's `armbench ...` command steps run here, in process."""
        return spec.kind == "command" and verb_of(spec) is not None

    def execute(self, run: str, spec: StepSpec, *, workspace: str | None,
                run_state: str) -> HostOutcome:
        """Run one of plan, check --baseline, check --trial, report."""
        verb = verb_of(spec)
        try:
            if verb == "plan":
                return self._plan(run)
            if verb == "check_baseline":
                return self._baseline(run, spec)
            if verb == "check_trial":
                return self._trial_check(run, spec, workspace)
            if verb == "judge":
                return self._judge(run, spec, workspace)
            if verb == "report":
                return self._report(run, run_state)
        except ArmbenchError as exc:
            return HostOutcome(report=Report(outcome="failed", cause=getattr(exc, "code", "error"),
                                             message=str(exc)))
        return HostOutcome(report=Report(outcome="error", cause="unknown_verb",
                                         message=f"armbench has no verb {spec.command!r}"))

    def _plan(self, run: str) -> HostOutcome:
        from armbench.benchmark.team.planning import load_plan_input
        from armbench.suites.plan import freeze
        from armbench.suites.subset import roles_from_inputs, selection_from_inputs

        inputs = self._run_started(run).inputs
        plan_input = load_plan_input(self.checkout, self.config, inputs["suite"],
                                     aliases=inputs.get("aliases", "team"),
                                     roles=roles_from_inputs(inputs))
        plan, steps = freeze(plan_input, selection_from_inputs(inputs))
        self._plans[run] = plan
        self.progress(f"Planned {len(plan.trials)} trials of suite {plan.suite} "
                      f"({len(plan.tasks)} tasks, {len(plan.arms)} arms, {plan.repetitions} "
                      f"repetitions{'; a subset of the suite' if plan.subset else ''}) "
                      f"at team revision {plan.baseline_team_revision[:7]}.")
        definition = msgspec.to_builtins(steps)
        return HostOutcome(report=Report(outcome="succeeded", outputs={"definition": definition}),
                           events=[plan])

    def _task(self, run: str, spec: StepSpec):  # type: ignore[no-untyped-def]
        plan = self.plan_of(run)
        return next(t for t in plan.tasks if t.id == spec.tags["task"])

    def _baseline(self, run: str, spec: StepSpec) -> HostOutcome:
        from armbench.benchmark.trials.checks import run_baseline

        task = self._task(run, spec)
        self.progress(f"Task {task.id}: trying the check at {task.starting_commit[:7]}")
        try:
            sandbox = self.sandbox_for(run, task)
        except EnvironmentRefused as exc:
            checked = CheckRan(step=spec.id, task=task.id, kind="baseline", result="could_not_run",
                               cause="environment_refused", message=str(exc))
            return HostOutcome(report=Report(outcome="failed", cause="could_not_run"),
                               events=[checked])
        kept: list[EvidenceKept] = []
        keeper = self.keeper(run)
        prepared = None
        if self._setup_once(run):
            def prepared() -> Path | ProcResult:
                got = self._prepared_clone(run, spec.id, task)[0]
                return got if isinstance(got, ProcResult) else got.path
        checked = run_baseline(spec.id, task, self.sources(run), self.plan_of(run).setup,
                               self._time_left(run), sandbox, self.stop_of(run),
                               seen=None if keeper is None else
                               lambda kind, proc: kept.extend(keeper.output(spec.id, kind, proc)),
                               prepared=prepared, withhold=self.withheld(run))
        ok = checked.result == "failed"
        return HostOutcome(report=Report(outcome="succeeded" if ok else "failed",
                                         cause=checked.cause or checked.result,
                                         duration_ms=checked.duration_ms), events=[checked, *kept])

    def _trial_check(self, run: str, spec: StepSpec, workspace: str | None) -> HostOutcome:
        from armbench.benchmark.trials.checks import run_trial_check
        from armbench.edge.change import ChangeUnreadable

        task = self._task(run, spec)
        if workspace is None:
            return HostOutcome(report=Report(outcome="error", cause="no_workspace",
                                             message="The trial's clone is gone."))
        clone = _reached(workspace)
        keeper = self.keeper(run)
        kept: list[EvidenceKept] = []
        graded: Graded | None = None
        checked: CheckRan | None = None
        try:
            if task.check_tree == "change" and clone.is_dir():
                graded = self._graded(run, spec, task, clone)
            if keeper is not None and clone.is_dir():  # the diff of what the check grades
                kept += self._trial_evidence(run, spec, keeper, clone, task.starting_commit,
                                             None if graded is None else graded[1])
            facts = self._change_facts(run, task, graded) if graded is not None else None
            checked = run_trial_check(spec.id, task, self.sources(run), clone,
                                      self._time_left(run), self.sandbox_for(run, task),
                                      self.stop_of(run),
                                      seen=None if keeper is None else
                                      lambda kind, proc: kept.extend(
                                          keeper.output(spec.id, kind, proc)), graded=graded)
            if facts is not None and checked.graded == "change":
                checked = msgspec.structs.replace(checked, change=facts)
        except ChangeUnreadable as exc:
            checked = CheckRan(step=spec.id, task=task.id, kind="trial", result="could_not_run",
                               cause="change_unreadable", message=str(exc), graded="change")
        except EnvironmentRefused as exc:
            checked = CheckRan(step=spec.id, task=task.id, kind="trial", result="could_not_run",
                               cause="environment_refused", message=str(exc))
        except OSError as exc:  # writing the change, protect or add: a full disk, most often
            checked = CheckRan(step=spec.id, task=task.id, kind="trial", result="could_not_run",
                               cause="disk_full" if exc.errno == errno.ENOSPC else "host_error",
                               message=f"preparing the check failed: {exc}")
        except ArmbenchError as exc:  # the check's tree could not be made
            checked = CheckRan(step=spec.id, task=task.id, kind="trial", result="could_not_run",
                               cause="prepare_failed", message=f"the check's tree: {exc}"[:500])
        finally:
            if graded is not None:
                discard(graded[0])
        self.progress(f"{spec.id.removesuffix('.check')}: check {checked.result}"
                      + (f" ({checked.cause})" if checked.cause else ""))
        ok = checked.result != "could_not_run"
        return HostOutcome(report=Report(outcome="succeeded" if ok else "error",
                                         cause=checked.cause, message=checked.message,
                                         exit_code=checked.exit_code,
                                         duration_ms=checked.duration_ms), events=[checked, *kept])

    def _change_facts(self, run: str, task: PlannedTask, graded: Graded) -> ChangeFacts | None:
        """What the graded change shows, read off the check's tree before protect and add are
        written (`suites.suspicion`); None where it cannot be read (it decides nothing)."""
        from armbench.edge import nofollow
        from armbench.suites.suspicion import change_facts

        tree, change = graded
        try:
            written = [p for p in change.written if p not in change.oversized][:200]
            before = self.sources(run).blobs_at(task.starting_commit, written)
            files: dict[str, tuple[bytes | None, bytes | None]] = {}
            for path in written:
                try:
                    files[path] = (before.get(path), nofollow.read_file(tree, path, 1 << 20))
                except ValueError:  # a link, or over a MiB: not read
                    continue
            return change_facts(files, removed=change.removed, added=change.added,
                                protect=task.protect, fix_paths=self._fix_paths(run, task),
                                written=change.written)
        except (ArmbenchError, OSError):
            return None

    def _fix_paths(self, run: str, task: PlannedTask) -> list[str] | None:
        """The non-test files the task's fix changes (read once per run and task)."""
        if task.fix is None:
            return None
        from armbench.suites.pathspec import matches_any

        key = (run, task.id)
        if key not in self._fixes:
            tests = (*task.protect, *task.add, *task.add_from)
            self._fixes[key] = sorted(p for p in self.sources(run).changed(task.starting_commit, task.fix)
                                      if not matches_any(tests, p))
        return self._fixes[key]

    def keeps_evidence(self, run: str) -> bool:
        """Whether the run keeps each trial's evidence (its check's output, diff, transcript,
        judges' prompts and answers): yes, unless `run --no-evidence` or `workflows.evidence:
        false` turned it off."""
        inputs = self._run_started(run).inputs
        return inputs.get("evidence") != "off" and self.config.workflows.evidence

    def evidence_store(self) -> EvidenceStore:
        """The checkout's evidence folder (local, never published)."""
        from armbench.edge.evidence import EvidenceStore
        return EvidenceStore(self.checkout.evidence_dir)

    def keeper(self, run: str) -> Keeper | None:
        """What keeps the run's evidence, or None when it keeps none."""
        from armbench.benchmark.trials.evidence import Keeper
        return Keeper(self.evidence_store(), self.clock) if self.keeps_evidence(run) else None

    def evidence_dir(self, run: str) -> Path:
        """Where a run before evidence was kept by hash kept each checked trial's diff and
        transcript for `judge calibrate` (`run --keep-evidence`)."""
        return self.checkout.runs_dir(self.config) / run / "evidence"

    def _trial_evidence(self, run: str, spec: StepSpec, keeper: Keeper, clone: Path,
                        base: str, change: Change | None = None) -> list[EvidenceKept]:
        """The trial's diff from its starting commit (of the graded `change`'s paths, when its
        check grades one) and its transcript, kept under its prompt step."""
        from armbench.benchmark.agents.judge import transcript_of
        from armbench.benchmark.trials.evidence import SESSION_LIMIT, read_tool_output

        trial = spec.id.removesuffix(".check").removesuffix(".judge") + ".prompt"
        session = transcript_of(self._arm_tool(run, spec), Room.of(clone).home)
        return [*keeper.diff(trial, lambda: self.sources(run).diff_once(clone, base, change)),
                *keeper.transcript(trial, session, read_tool_output(clone), SESSION_LIMIT)]

    def _graded(self, run: str, spec: StepSpec, task: PlannedTask, clone: Path) -> Graded:
        """The trial's check tree for this step, the tool's change written onto it
        (`benchmark.trials.graded`)."""
        from armbench.benchmark.trials.graded import graded_tree
        from armbench.benchmark.trials.workspace import overlays_for

        overlays = overlays_for(self.sandbox_for(run, task))
        prepared: Callable[[str], Path] | None = None
        if self._setup_once(run):
            def prepared(step: str) -> Path:
                got = self._prepared_clone(run, step, task, overlays=overlays)[0]
                if isinstance(got, ProcResult):
                    raise OSError(f"setup failed in the task's prepared tree ({got.cause})")
                return got.path
        return graded_tree(self.sources(run), task, clone, step=spec.id,
                           setup=bool(self.plan_of(run).setup), prepared=prepared,
                           overlays=overlays)

    def _arm_tool(self, run: str, spec: StepSpec) -> str | None:
        arm = next((a for a in self.plan_of(run).arms if a.name == spec.tags.get("arm")), None)
        return arm.tool if arm else None

    def _judge(self, run: str, spec: StepSpec, workspace: str | None) -> HostOutcome:
        """The trial's scorers, each asked of the run's judge; always `succeeded` (a judge that
        gives no label is a measurement, and the clone stays for the check)."""
        from armbench.benchmark.agents.judge import applies_to
        plan = self.plan_of(run)
        task = self._task(run, spec)
        trial = spec.id.removesuffix(".judge") + ".prompt"
        if workspace is None or not _reached(workspace).is_dir() or plan.judge is None:
            failed = [JudgeFailed(step=trial, scorer=s.name, rubric_hash=s.rubric_hash,
                                  cause="workspace_lost", at=self.clock(),
                                  message="The trial's clone is gone, so nothing could be judged.")
                      for s in plan.scorers if applies_to(s, task.id)]
            return HostOutcome(report=Report(outcome="succeeded", cause="workspace_lost"),
                               events=failed)
        clone = _reached(workspace)
        graded: Graded | None = None
        try:  # the judge reads the tree the check grades; on the clone, the tool's git is gone
            if task.check_tree == "change":
                graded = self._graded(run, spec, task, clone)
            else:
                self.sources(run).renew_git(clone, task.starting_commit)
        except (ArmbenchError, OSError) as exc:
            failed = [JudgeFailed(step=trial, scorer=s.name, rubric_hash=s.rubric_hash,
                                  cause="prepare_failed", at=self.clock(),
                                  message=f"The tree to judge could not be made: {exc}"[:500])
                      for s in plan.scorers if applies_to(s, task.id)]
            return HostOutcome(report=Report(outcome="succeeded", cause="prepare_failed"),
                               events=failed)
        try:
            return self._judged(run, spec, task, clone, graded)
        finally:
            if graded is not None:
                discard(graded[0])

    def _judged(self, run: str, spec: StepSpec, task: PlannedTask, clone: Path,
                graded: Graded | None) -> HostOutcome:
        """Ask the run's judge about the trial: of the tree its check grades (`graded`), or of
        its own clone (`check.tree: clone`)."""
        from armbench.benchmark.agents.judge import JudgeCall, judge_trial, transcript_of
        plan = self.plan_of(run)
        trial = spec.id.removesuffix(".judge") + ".prompt"
        keeper = self.keeper(run)
        change = None if graded is None else graded[1]
        assert plan.judge is not None  # `_judge` answered a run without one
        call = JudgeCall(run=run, step=trial, task=task,
                         clone=clone if graded is None else graded[0],
                         diff=self.sources(run).diff(clone, task.starting_commit,
                                                     remember=keeper is not None, only=change),
                         transcript=transcript_of(self._arm_tool(run, spec), Room.of(clone).home),
                         judge=plan.judge,
                         network="private" if plan.trial_network == "private" else "host")
        kept: list[EvidenceKept] = []
        if keeper is not None and not task.check_run:  # no check step keeps the diff: keep it here
            kept += self._trial_evidence(run, spec, keeper, clone, task.starting_commit, change)
        if keeper is not None:
            def keep(kind: str, scorer: str, data: bytes) -> None:
                got = keeper.keep(trial, "judge_prompt" if kind == "judge_prompt" else "judge_answer",
                                  data, scorer=scorer)
                kept.extend([got] if got else [])
            call = dataclasses.replace(call, keep=keep)
        known = [e for e in self.store.events(run, kinds=(LabelRecorded,))
                 if isinstance(e, LabelRecorded) and not e.calibration]
        verdicts = judge_trial(call, plan.scorers, self.tools_of(run), known,
                               clock=self.clock, cancel=self.stop_of(run))
        for v in verdicts:
            said = (f"{v.label}" if isinstance(v, LabelRecorded) else f"no label ({v.cause})")
            self.progress(f"{trial.removesuffix('.prompt')}: {v.scorer} {said}")
        return HostOutcome(report=Report(outcome="succeeded"), events=[*verdicts, *kept])

    @collector_paused()
    def _report(self, run: str, run_state: str) -> HostOutcome:
        """The report step: project the log, write the record, queue and deliver it; its one
        collector pause covers the read, the projection and the record."""
        from armbench.benchmark.records.publish import queue_and_deliver
        from armbench.benchmark.records.reporting import chain_head, record_file, report_events, write_report

        self.store.recheck(run)  # the whole chain once more: a forged row is never reported on
        head = chain_head(self.store, run)  # before the events: the head is never past them
        events = report_events(self.store, run)
        runs_dir = self.checkout.runs_dir(self.config)
        try:
            written, projected = write_report(run, events, run_state, runs_dir, self.clock(), head)
        except OSError as exc:
            full = exc.errno == errno.ENOSPC
            return HostOutcome(report=Report(
                outcome="failed", cause="disk_full" if full else "record_unwritable",
                message=f"The record {record_file(runs_dir, run)} could not be written: "
                        f"{exc.strerror or exc}. The run's events are all in the ledger; "
                        f"{'free some space' if full else 'make the folder writable'} and run "
                        f"`armbench replay {run} --write` to write it."))
        published = queue_and_deliver(store=self.store, checkout=self.checkout, config=self.config,
                                      run=run, written=written, now=self.clock(),
                                      progress=self.progress)
        projected = projected.restated([*events, written, *published])
        return HostOutcome(report=Report(outcome="succeeded", outputs={
                               "text": projected.text, "table": projected.outputs}),
                           events=[written, *published])

    def prepare(self, run: str, spec: StepSpec, lease: str) -> Prepared | HostOutcome:
        """A fresh isolated clone at the task's starting commit, with setup run in it."""
        from armbench.benchmark.trials.checks import run_setup
        from armbench.benchmark.trials.workspace import overlays_for
        from armbench.edge.overlay import entered

        started = time.monotonic()
        task = self._task(run, spec)
        plan = self.plan_of(run)
        try:
            sandbox = self.sandbox_for(run, task)
        except EnvironmentRefused as exc:
            return HostOutcome(report=Report(outcome="error", cause="environment_refused",
                                             message=str(exc)))
        key: str | None = None
        origin: Origin | None = None
        preparation: Preparation = "clone"
        try:
            overlays = overlays_for(sandbox)
            if self._setup_once(run):
                got, key = self._prepared_clone(run, f"{spec.id}#{lease}", task, overlays=overlays)
                if isinstance(got, ProcResult):
                    keeper = self.keeper(run)
                    return HostOutcome(report=Report(outcome="error", cause="setup_failed",
                                                     message=f"setup ended: {got.cause}"),
                                       events=keeper.output(spec.id, "setup", got) if keeper else [])
                clone, origin = got.path, got.origin
                preparation = "overlay" if entered(clone) else self.prepared_of(run).preparation()
            elif overlays:
                clone, preparation = self._overlay_clone(run, f"{spec.id}#{lease}", task)
            else:
                clone = self.sources(run).fresh_clone(f"{spec.id}#{lease}", task.starting_commit)
        except ArmbenchError as exc:
            return HostOutcome(report=Report(outcome="error", cause="prepare_failed",
                                             message=str(exc)))
        if sandbox.isolation == "bubblewrap":  # no step can set the clock back: stamps hold
            self.sources(run).stamp_protected(clone, task)
        self.sources(run).keep_index(clone)
        setup = None if key else run_setup(plan.setup, clone, self._time_left(run)(), sandbox,
                                           self.stop_of(run), self.withheld(run))
        if setup is not None and setup.cause != "ok":
            discard(clone)
            keeper = self.keeper(run)
            kept = keeper.output(spec.id, "setup", setup) if keeper is not None else []
            return HostOutcome(report=Report(outcome="error", cause="setup_failed",
                                             message=f"setup ended: {setup.cause}"), events=kept)
        if plan.setup:  # the trial's diff leaves out what setup made
            self.sources(run).settle(clone)
        if plan.setup and not key and task.check_tree == "change":
            try:  # the check's tree is made from setup's, never from what the tool touched
                self.sources(run).keep_setup_tree(clone)
            except OSError as exc:
                discard(clone)
                return HostOutcome(report=Report(
                    outcome="error", cause="disk_full" if exc.errno == errno.ENOSPC else "prepare_failed",
                    message=f"The tree setup left could not be kept for the check: {exc}"[:500]))
        arm = next((a for a in plan.arms if a.name == spec.tags.get("arm")), None)
        try:
            if arm is not None:
                self.team_of(run).install(Room.of(clone), arm)
        except (ArmbenchError, OSError, KeyError, ValueError) as exc:
            discard(clone)
            return HostOutcome(report=Report(outcome="error", cause="prepare_failed",
                                             message=f"The arm's team could not be installed: {exc}"))
        from armbench.edge.gitclone import head_commit

        return self._prepared(run, spec, clone, head_commit(clone),
                              int((time.monotonic() - started) * 1000), key, origin, preparation)

    def _overlay_clone(self, run: str, step: str, task: PlannedTask) -> tuple[Path, Preparation]:
        """The step's clone as an overlay over the starting commit's pristine tree; where it
        cannot be mounted, a clone checked out as without overlays."""
        try:
            return self.sources(run).overlay_clone(step, task.starting_commit), "overlay"
        except OSError as exc:  # said, so a trial that was not an overlay says why
            self.progress(f"The overlay of {step} could not be mounted ({exc}): its clone is "
                          "checked out instead.")
            return self.sources(run).fresh_clone(step, task.starting_commit), "clone"

    def _setup_once(self, run: str) -> bool:
        """Whether the run's tasks start from prepared trees (`trial: {setup: once}`)."""
        plan = self.plan_of(run)
        return plan.trial_setup == "once" and bool(plan.setup)

    def prepared_of(self, run: str) -> PreparedTrees:
        """The run's prepared trees (made once, on first use): in the run's work folder, or kept
        between runs in armbench's home with `workflows.setup_cache: true`."""
        if run not in self._prepared_trees:
            from armbench.benchmark.trials.prepared import PreparedTrees
            from armbench.edge.prepared import cache_dir

            cache = cache_dir() if self.config.workflows.setup_cache else None
            self._prepared_trees[run] = PreparedTrees(self.sources(run), cache=cache,
                                                      notify=self.progress)
        return self._prepared_trees[run]

    def _prepared_clone(self, run: str, step: str, task: PlannedTask, *, overlays: bool = False
                        ) -> tuple[Copy | ProcResult, str]:
        """A step's clone copied from its task's prepared tree (built first when needed), or
        setup's result when setup failed; and the tree's key."""
        from armbench.benchmark.trials.checks import run_setup
        from armbench.benchmark.trials.prepared import prepared_key

        plan, sandbox = self.plan_of(run), self.sandbox_for(run, task)  # keyed by its environment too
        setup = plan.setup or ""
        trees = self.prepared_of(run)
        key = prepared_key(task.starting_commit, setup, sandbox, shared=trees.shared)

        def setup_in(clone: Path) -> ProcResult | None:
            return run_setup(setup, clone, self._time_left(run)(), sandbox, self.stop_of(run),
                             self.withheld(run))
        return trees.clone(step, task.starting_commit, key, setup_in, overlays=overlays), key

    def _prepared(self, run: str, spec: StepSpec, clone: Path, head: str, duration_ms: int,
                  prepared_tree: str | None = None, origin: Origin | None = None,
                  preparation: Preparation | None = None) -> Prepared:
        """What a trial's lease carries from its clone: the commit, the team revision its install
        holds, the variables to withhold, and the frozen arm (`context.arm`)."""
        plan = self.plan_of(run)
        env = {"ARMBENCH_PROJECT_COMMIT": head}
        install = installed(Room.of(clone))
        if install is not None and install.revision is not None:
            env["ARMBENCH_TEAM_REVISION"] = install.revision
        arm = next((a for a in plan.arms if a.name == spec.tags.get("arm")), None)
        context = {"task": spec.tags.get("task"), "arm": msgspec.to_builtins(arm)} if arm else {}
        task = next((t for t in plan.tasks if t.id == spec.tags.get("task")), None)
        if task is not None and task.environment is not None and arm is not None:
            sandbox = self.sandbox_for(run, task)
            if sandbox.root is not None:
                context[ENVIRONMENT_ROOT] = str(sandbox.root)
                context[ENVIRONMENT_NAME] = f"{task.environment.kind}: {task.environment.source}"
        context["limits"] = dataclasses.asdict(Limits.of(plan.trial_limits))  # the tool step's, at launch
        return Prepared(path=str(clone), commit=head, duration_ms=duration_ms, env=env,
                        withhold=self.withheld(run), context=context, prepared_tree=prepared_tree,
                        prepared_origin=origin, preparation=preparation)

    def relaunch(self, run: str, spec: StepSpec, lease: Lease, commit: str) -> Lease:
        """A held trial lease as `prepare` gave it, for a process other than the one that
        leased it (`armbench workflow launch`): its clone's install is read back, never redone,
        and its commit is the one its preparation recorded. A clone that is an overlay is
        reached in this process (mounted again when the process that prepared it has ended)."""
        if lease.cwd is None:
            return lease
        clone = _reached(lease.cwd)
        got = self._prepared(run, spec, clone, commit, 0)
        return msgspec.structs.replace(lease, cwd=str(clone), env={**lease.env, **got.env},
                                       withhold=got.withhold, context=got.context)

    def release(self, run: str, workspace: str) -> None:
        """Remove a clone no later step continues (once the run's folder is gone: nothing)."""
        with self._releasing:
            discard(Path(workspace))

    def abandoned(self, run: str, lease: str, workspace: str | None) -> None:
        """Kill what a dead driver's tool left running, then remove its clone."""
        if kill_left(run, lease):
            self.progress(f"Stopped what the lapsed lease {lease} left running.")
        if workspace:
            self.release(run, workspace)

    def cancel(self, run: str) -> None:
        """The run is stopping: stop its setup and checks now (the tools stop with the driver)."""
        self.stop_of(run).set()

    def finished(self, run: str) -> None:
        """Remove the run's work folder: clones, prompts, tool copies (after any release under
        way: its clone's room moving to the trash mid-walk would stop the walk). A worker in
        another process may still move a clone's room: a walk stopped that way starts again
        from the run's folder (a fresh walk, which follows no link either), three times at most."""
        with self._releasing:
            settle_discards()
            root = work_root(run)
            for attempt in range(3):
                try:
                    if root.exists():
                        remove_tree(root)
                    break
                except TreeMoved:
                    if attempt == 2:
                        raise
        self._sources.pop(run, None)
        self._prepared_trees.pop(run, None)
        self._teams.pop(run, None)


def _reached(workspace: str) -> Path:
    """A step's clone as this process reaches it: an overlay whose holder has ended (a run
    resumed in a new process) is mounted again from its layers (`edge.overlay.reach`); one
    that cannot be is left as recorded, and found gone."""
    from armbench.edge import overlay

    try:
        return overlay.reach(Path(workspace))
    except OSError:
        return Path(workspace)
