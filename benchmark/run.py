"""`armbench run`: refuse what cannot run, start the default workflow, drive it, exit as the spec says."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import msgspec

from armbench.benchmark.agents import LAYOUTS
from armbench.benchmark.agents.base import ToolAdapter
from armbench.benchmark.agents.turns import WorkflowRunner
from armbench.benchmark.records.regression import check_regression
from armbench.benchmark.records.reporting import project_run, record_file
from armbench.benchmark.runtools import refuse_secret_credentials
from armbench.benchmark.team.override import BENCHMARK_WORKFLOW, active_workflow_namespaces, team_override
from armbench.benchmark.team.planning import dry_plan
from armbench.benchmark.team.userscope import refuse_undelivered_teams, refuse_user_scope
from armbench.benchmark.trials.workfolder import remove_tree, work_root
from armbench.edge.config import Checkout, ProjectConfig
from armbench.edge.sandbox import Sandbox, probe
from armbench.edge.team import files_at
from armbench.engine.local_driver import LocalDriver, StepRunner
from armbench.engine.protocol import Done
from armbench.engine.service import Engine, Workflow
from armbench.ledger.errors import DiskFull, EdgeFailure, Refusal, UnknownRun
from armbench.ledger.events import PlanFrozen, StepReported, StepSpec
from armbench.projections.closing import closing_lines
from armbench.suites.durations import format_duration
from armbench.suites.namespaces import ROLES_FILE
from armbench.suites.subset import Selection, roles_inputs, subset_inputs, subset_words

__all__ = ["DEFAULT_WORKFLOW", "SANDBOX_MESSAGE", "RunOutcome", "RunToolsOf", "WorkOutcome",
           "benchmark_workflow", "require_sandbox", "resume_run", "run_suite", "run_workflow",
           "trial_runners", "work_run"]

RunToolsOf = Callable[[str], Mapping[str, ToolAdapter]]
"""`tools(run)`: the run's tools, from the composition root (`cli/compose.py`)."""

SANDBOX_MESSAGE = (
    'Step "trials" requires strict isolation, and the local driver here is not a sandbox. Run it '
    "in CI or a container, and declare it with --sandbox or workflows.sandbox: true."
)

BEST_EFFORT_MESSAGE = (
    "The team's workflow does not require strict isolation and no sandbox was declared, so its "
    "trials run best-effort: no credential is withheld from them (isolation: unenforced). "
    "Declare the machine a sandbox with --sandbox or workflows.sandbox: true to withhold them."
)

DEFAULT_WORKFLOW = Workflow(name="armbench-benchmark", steps=[
    StepSpec(id="plan", kind="command", command='armbench plan "$SUITE" --aliases "$ALIASES"',
             verb="plan"),
    StepSpec(id="trials", kind="workflow", needs=["plan"], from_step="plan", independent=True),
    StepSpec(id="report", kind="command", command="armbench report", verb="report",
             final=True),
])


class RunOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """How `armbench run` ended, and its exit code."""

    run: str
    done: Done
    report_ok: bool
    exit_code: int
    regression: list[str] = []
    """The lines `--fail-on-regression` prints, when it was set and the run succeeded."""
    text: str = ""
    """The results table (Markdown), from the report or, when the report failed, the log."""
    closing: list[str] = []
    """What a person reads after the tables: the pairs in a line each, a trial of each result to
    paste into `explain`, the next commands (`projections.closing`, from the log)."""
    failure: tuple[str, str] | None = None
    """(code, message) when the report step failed: the run ended failed, and why."""


def _drive(driver: LocalDriver, run: str) -> Done:
    """Drive the run; a disk or ledger that fills up mid-run is an envelope, never a traceback
    (the run is left for `armbench resume` once there is space)."""
    try:
        return driver.drive(run)
    except (OSError, sqlite3.OperationalError, DiskFull) as exc:
        full = isinstance(exc, DiskFull) or getattr(exc, "errno", None) == errno.ENOSPC \
            or "full" in str(exc)
        if not full:
            raise
        raise EdgeFailure(
            f"The disk filled up while run {run} was being recorded ({exc}), so it could not be "
            f"ended. Nothing it recorded is lost. Free some space and run `armbench resume {run} "
            "--sandbox` to finish it.", code="disk_full") from None


def _outcome(engine: Engine, run: str, done: Done, *, regression: list[str] | None = None,
             verdict: int | None = None) -> RunOutcome:
    """The run's exit code, its table, and, when the report failed, the failure."""
    report = engine.state(run).steps.get("report")
    report_ok = report is not None and report.status == "succeeded"
    code = 0 if done.state == "succeeded" and report_ok else 1
    text = done.outputs.get("text") or ""
    failure = None
    projected = project_run(engine.store, run, done.state)
    if not report_ok:
        failure = _report_failure(engine, run)
        if not text:
            text = projected.text
    closing = closing_lines(run, projected.table.pairs, projected.record.trials)
    return RunOutcome(run=run, done=done, report_ok=report_ok,
                      exit_code=code if verdict is None else verdict, regression=regression or [],
                      text=text, failure=failure, closing=closing)


def flagged_lines(engine: Engine, run: str, state: str) -> list[str]:
    """`--fail-on-flagged`'s lines: one per flagged pass, naming its flags; none when none is."""
    record = project_run(engine.store, run, state).record
    found = [t for t in record.trials if t.flags]
    if not found:
        return []
    lines = [f"r{t.repetition}.{t.task}.{t.arm} passed, flagged: "
             + ", ".join(f.name for f in t.flags or []) for t in found]
    return [*lines, f"--fail-on-flagged: {len(found)} passed trial(s) are flagged (exit 1). Each "
            f"still passed; `armbench explain {run} <trial>` shows why it is worth a look."]


def _report_failure(engine: Engine, run: str) -> tuple[str, str]:
    got = [e for e in engine.store.events(run, kinds=(StepReported,))
           if isinstance(e, StepReported) and e.step == "report"]
    if not got:
        return ("report_not_run", f"Run {run} ended without its report step; its table is "
                f"projected from the log. `armbench replay {run} --write` writes its record.")
    last = got[-1]
    return (last.cause or "report_failed",
            last.message or f"Run {run}'s report step ended {last.outcome} ({last.cause}).")


def run_suite(*, engine: Engine, checkout: Checkout, config: ProjectConfig, suite: str,
              sandbox: bool, member_aliases: bool, progress: Callable[[str], None],
              new_run_id: Callable[[], str], isolation: Sandbox, tools: RunToolsOf,
              fail_on_regression: bool = False, allow_inconclusive: bool = False, evidence: bool = True,
              drive: bool = True, selection: Selection | None = None,
              timeout_s: int | None = None, fail_on_flagged: bool = False) -> RunOutcome:
    """Plan dry, refuse or start, drive on the local driver, and decide the exit code.

    Without `drive` (`--driver none`), the run is started for workers only (`armbench work`):
    the outcome is `running`, exit 0. `timeout_s` (`workflow start --timeout`) shortens the
    run's time limit; one longer than the suite's is refused."""
    aliases = "member" if member_aliases else "team"
    workflow, strict = benchmark_workflow(checkout, config, member_aliases=member_aliases,
                                          progress=progress)
    enforced = strict or sandbox or config.workflows.sandbox
    if enforced:
        require_sandbox(sandbox, config, isolation)
    else:  # a team override without strict, where no sandbox was declared (benchmark-suites.md)
        probe(isolation)
        progress(BEST_EFFORT_MESSAGE)
    plan, _ = dry_plan(checkout, config, suite, aliases=aliases, selection=selection)
    limit = run_timeout(plan.timeout_s, timeout_s, suite)
    refuse_secret_credentials(checkout, plan)
    if isolation.isolation == "declared":  # trials share the member's home
        refuse_user_scope(plan, home=isolation.home, mirror=checkout.mirror,
                          roles=list(config.roles), layouts=LAYOUTS)
        refuse_undelivered_teams(plan, set(LAYOUTS))
    run = new_run_id()
    try:
        run_workflow(engine=engine, checkout=checkout, config=config, run=run, suite=suite,
                     aliases=aliases, timeout_s=limit, sandbox=enforced, isolation=isolation,
                     progress=progress, evidence=evidence, selection=selection,
                     workflow=(workflow, strict))
    except BaseException:  # refused (the team's override) or stopped: nothing owns its folder
        if work_root(run).exists():
            remove_tree(work_root(run))
        raise
    progress(f"Run {run}: suite {suite}, {len(plan.trials)} trials"
             + (f" (a subset: {subset_words(plan.subset)})." if plan.subset else "."))
    if not drive:
        progress(f"No driver here: start `armbench work {run} --sandbox` on any machine that "
                 "has the ledger URL, the team repo and the suite's repo.")
        return RunOutcome(run=run, done=Done(state="running"), report_ok=True, exit_code=0)
    done, outcome = _drive_run(engine, run, tools(run), plan.parallel, config, progress)
    if fail_on_flagged and outcome.exit_code == 0:
        flagged = flagged_lines(engine, run, done.state)
        if flagged:
            return msgspec.structs.replace(outcome, exit_code=1, regression=flagged)
    if not (fail_on_regression and outcome.exit_code == 0):
        return outcome
    verdict = check_regression(store=engine.store, checkout=checkout, config=config, run=run,
                               state=done.state, allow_inconclusive=allow_inconclusive)
    return _outcome(engine, run, done, regression=verdict.lines,
                    verdict=verdict.exit_code(allow_inconclusive=allow_inconclusive))


def benchmark_workflow(checkout: Checkout, config: ProjectConfig, *, member_aliases: bool,
                       progress: Callable[[str], None]) -> tuple[Workflow, bool]:
    """armbench's benchmark workflow, or the team's `workflows/armbench-benchmark.yaml` (by
    namespace) at the pulled revision, named on stderr; never silently the shipped one. With
    it, whether its trials require strict isolation (armbench's own always do)."""
    pulled = checkout.read_pull()
    if pulled is None:
        return DEFAULT_WORKFLOW, True
    files = files_at(checkout.mirror, pulled.revision, "workflows")
    files.update(files_at(checkout.mirror, pulled.revision, ROLES_FILE))
    found = team_override(files, active_workflow_namespaces(files, config),
                          member_aliases=member_aliases)
    if found is None:
        return DEFAULT_WORKFLOW, True
    file, steps, strict = found
    progress(f"Running the team's {file}, which replaces armbench's benchmark workflow.")
    return Workflow(name=BENCHMARK_WORKFLOW, steps=steps, origin="team"), strict


def run_timeout(suite_s: int, asked_s: int | None, suite: str) -> int:
    """The run's time limit: the suite's, or `asked_s` where that is not longer (refused if it is)."""
    if asked_s is None:
        return suite_s
    if asked_s > suite_s:
        raise Refusal(f"--timeout {format_duration(asked_s)} is longer than suite {suite}'s timeout "
                      f"of {format_duration(suite_s)}; a run may be given less time than its suite "
                      "says, never more. Give a shorter --timeout, or raise the suite's timeout.",
                      code="invalid_inputs")
    return asked_s


def run_workflow(*, engine: Engine, checkout: Checkout, config: ProjectConfig, run: str,
                 suite: str, aliases: str, timeout_s: int, sandbox: bool, isolation: Sandbox,
                 progress: Callable[[str], None], evidence: bool = True,
                 selection: Selection | None = None,
                 workflow: tuple[Workflow, bool] | None = None) -> None:
    """Start run `run` of the benchmark workflow (the team's, when it has one, or `workflow` as
    `benchmark_workflow` found it) on the suite (the `selection`'s subset of it, carried to the
    plan step as a run input); without `evidence` (`run --no-evidence`) its trials keep no
    evidence. A run is enforced (credentials withheld) unless its workflow's trials need no
    strict isolation and `sandbox` was not declared: a best-effort run."""
    flow, strict = workflow or benchmark_workflow(checkout, config, member_aliases=aliases == "member",
                                                  progress=progress)
    inputs = ({"suite": suite, "aliases": aliases} | ({} if evidence else {"evidence": "off"})
              | subset_inputs(selection) | roles_inputs(list(config.roles)))
    engine.start(flow, inputs=inputs, timeout_s=timeout_s,
                 sandbox=sandbox, run=run, isolation=isolation.isolation,
                 shared=[str(p) for p in isolation.write] if isolation.isolation != "declared"
                 else [], enforced=strict or sandbox)


def record_path(checkout: Checkout, config: ProjectConfig, run: str) -> Path:
    """Where the run's record is."""
    return record_file(checkout.runs_dir(config), run)


def resume_run(*, engine: Engine, config: ProjectConfig, run: str, sandbox: bool,
               progress: Callable[[str], None], isolation: Sandbox,
               tools: RunToolsOf) -> RunOutcome:
    """Finish a run another driver left: lapsed leases expire, reported trials never rerun."""
    state = engine.state(run)
    if state.started is None:
        raise UnknownRun(run)
    require_sandbox(sandbox, config, isolation, enforced=state.started.enforced)
    plan = _plan_event(engine, run)
    progress(f"Resuming run {run}.")
    return _drive_run(engine, run, tools(run), plan.parallel if plan else 1, config, progress)[1]


class WorkOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """How `armbench work` ended: the run ended (by this worker or another)."""

    run: str
    state: str
    """The run's end state."""
    driver: str
    """This worker's driver name in the log's leases."""


def work_run(*, engine: Engine, config: ProjectConfig, run: str, sandbox: bool, lanes: int,
             progress: Callable[[str], None], isolation: Sandbox, tools: RunToolsOf,
             name: str) -> WorkOutcome:
    """Join a run as one of its workers: lease its steps on `lanes` lanes until none is left.

    Any number of workers, on any machines sharing the ledger, work one run; a worker that dies
    loses its leases to the others once they lapse. The run's report step runs once, in
    whichever worker leases it."""
    state = engine.state(run)
    require_sandbox(sandbox, config, isolation,
                    enforced=state.started is None or state.started.enforced)
    if state.started is None:
        raise UnknownRun(run, ledger=f"The ledger {engine.store.path}",
                         fix="armbench runs lists them; check ARMBENCH_LEDGER_URL or ledger.url")
    progress(f"Working run {run} as {name} on {lanes} lane(s).")
    done = _drive(_driver(engine, run, tools(run), lanes=lanes, progress=progress, name=name,
                          sole=False), run)
    return WorkOutcome(run=run, state=done.state, driver=name)


def require_sandbox(sandbox: bool, config: ProjectConfig, isolation: Sandbox, *,
                    enforced: bool = True) -> None:
    """`run`, `resume` and `work` need a declared sandbox and a sandbox that works (a sandbox
    that works alone for a best-effort run, one not `enforced`)."""
    if enforced and not (sandbox or config.workflows.sandbox):
        raise Refusal(SANDBOX_MESSAGE, code="requirement_unmet")
    probe(isolation)


def _drive_run(engine: Engine, run: str, tools: Mapping[str, ToolAdapter], parallel: int,
               config: ProjectConfig, progress: Callable[[str], None]) -> tuple[Done, RunOutcome]:
    """The one drive loop of `run` and `resume`: the local driver on as many lanes as the plan
    and the project allow, then the run's outcome."""
    lanes = max(1, min(parallel, config.workflows.max_parallel))
    done = _drive(_driver(engine, run, tools, lanes=lanes, progress=progress), run)
    return done, _outcome(engine, run, done)


def _driver(engine: Engine, run: str, tools: Mapping[str, ToolAdapter], *, lanes: int,
            progress: Callable[[str], None], name: str = "local",
            sole: bool = True) -> LocalDriver:
    """The local driver of `run`, `resume` and `work` over the run's tools (a workflow arm's
    turn by turn): the ones its judge steps launch too, from the composition root."""
    return LocalDriver(engine, tools=trial_runners(tools, work_root(run) / "scratch"),
                       commands=None, lanes=max(1, lanes), name=name, on_progress=progress,
                       sole=sole)


class TrialRunners(Mapping[str, StepRunner]):
    """The tools as a trial runs them (a workflow arm's pinned workflow turn by turn), each
    made when first asked for, as the run's tools are."""

    def __init__(self, tools: Mapping[str, ToolAdapter], scratch: Path) -> None:
        self.tools, self.scratch = tools, scratch

    def __getitem__(self, name: str) -> StepRunner:
        return WorkflowRunner(self.tools[name], self.scratch)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tools)

    def __len__(self) -> int:
        return len(self.tools)


def trial_runners(tools: Mapping[str, ToolAdapter], scratch: Path) -> Mapping[str, StepRunner]:
    """The tools as a trial runs them: a workflow arm's pinned workflow turn by turn."""
    return TrialRunners(tools, scratch)


def _plan_event(engine: Engine, run: str) -> PlanFrozen | None:
    for rec in engine.store.read(run):
        if isinstance(rec.event, PlanFrozen):
            return rec.event
    return None
