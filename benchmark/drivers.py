"""The external drivers' protocol: `workflow start --driver external`, `next --prepare`,
`launch`, `report`, `renew`, `cancel` (one-shot, or as request lines to `workflow serve`), and
the host verbs a driver may run itself (`check`, `report`).

An external driver is any process that speaks these verbs; armbench keeps preparation, protect,
`check.add`, the checks and the report, and launches the tool for the driver when asked
(`launch`), in the same sandbox the local driver uses. What each verb answers is a camel-cased
Struct here (`LeaseEnvelope`, `WaitEnvelope`, `DoneEnvelope`, `Reported`, ...); the drivers
guide's field tables are generated from them. `cli/workflowcmd.py` only parses and prints.
Composition: next to `run.py`.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from armbench.aggregates.workflow import Caps
from armbench.benchmark.trials.workfolder import work_root
from armbench.edge.config import Checkout, ProjectConfig
from armbench.edge.sandbox import Sandbox
from armbench.engine.protocol import Done, Lease, Report, Wait, fault_report, host_error_report
from armbench.ledger.errors import LedgerError, Refusal, UnknownRun
from armbench.ledger.events import Cost, Usage

if TYPE_CHECKING:  # each verb is a process of its own: it imports what it uses when it runs
    from armbench.benchmark.agents.base import ToolAdapter
    from armbench.benchmark.host import BenchmarkHost
    from armbench.engine.service import Engine
    from armbench.suites.subset import Selection

__all__ = ["ENVELOPES", "Can", "CancelRequest", "Cancelled", "DoneEnvelope", "LaunchRequest",
           "LeaseEnvelope", "NextRequest", "RenewRequest", "Renewed", "ReportRequest", "Reported",
           "Request", "WaitEnvelope", "Wiring", "answer", "caps_of", "launch", "lease_envelope",
           "lease_next", "report_lease", "start_external"]


class Can(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What an external driver declares it can do (`next --can`), as the spec names it."""

    driver: str = "external"
    """Its name, recorded on every step it takes; give drivers on different machines different
    names: a trial's judge and check go to the driver whose machine holds its clone."""
    isolation: Literal["sandbox", "none"] = "none"
    """`sandbox`: this machine is one (CI, a container without personal logins); trials go only
    to such drivers."""
    env: bool = False
    """It starts processes with the lease's `env` and removes the lease's `withhold` variables."""
    unattended: bool = False
    """Its tools never ask a person."""
    workspace: list[str] = []
    """`clone`: it works in clones armbench prepares (it asks with `--prepare`)."""
    setup: bool = False
    """It could run a suite's setup itself (armbench runs it at preparation either way)."""
    tools: list[str] = []
    """The tools it runs."""
    trials: list[str] | None = None
    """The tools it runs benchmark trials with, committing to the trial rules (default:
    `tools`)."""


# ---------------------------------------------------------------- what the verbs answer


class LeaseEnvelope(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """`{"data": {"lease": {...}}}`: a step leased to this driver."""

    id: str
    """The lease id, for `launch`, `report` and `renew`."""
    run: str
    """The run."""
    step: str
    """The step id."""
    kind: Literal["command", "prompt"]
    """`prompt` (a trial) or `command`."""
    expires_at: datetime
    """Renew before this (`launch` renews for you), or the step goes back to pending."""
    cwd: str | None
    """The prepared clone (a trial), setup run and the arm's team already installed for its tool
    (read from the team mirror by commit: the driver runs no `init` or `pull`), or the clone a
    command step works in."""
    tool: str | None
    """The arm's tool."""
    model: str | None
    """The exact model the plan froze: pass it as given."""
    effort: str | None
    """The effort the plan froze: pass it as given."""
    prompt: str | None
    """The task's prompt."""
    command: str | None
    """A command step's command line."""
    launch: list[str] | None
    """The argv that launches the trial's tool in armbench's sandbox (`<armbench> workflow launch
    <run> --lease <id>`, where `<armbench>` is the path of the CLI that gave the lease)."""
    env: dict[str, str]
    """Variables to set (`ARMBENCH_WORKFLOW_ATTEMPT`, the step's attempt from 1;
    `ARMBENCH_TEAM_REVISION`, the team commit the trial's install holds, absent for `team: none`;
    `ARMBENCH_PROJECT_COMMIT`; for a command, `ARMBENCH_RUN`, `ARMBENCH_LEASE` and a `PATH` with
    the folder of the CLI that gave the lease first, so its `armbench` runs the step)."""
    withhold: list[str]
    """Variables to remove from every process the step starts."""
    timeout_s: float | None
    """The step's time left, in seconds."""
    limit_s: float | None
    """The step's own limit: stopping there ends the turn, it is not an error."""
    max_turns: int | None
    """The step's turn limit, for tools that have one."""
    max_tokens: int | None = None
    """The trial's token cap (`trial.budget.tokens`), for tools that have one (no pinned
    built-in CLI does)."""
    max_cost: Cost | None = None
    """The trial's cost cap (`trial.budget.cost`), for tools that have one (Claude Code's
    `--max-budget-usd`, in USD); `launch` passes it."""
    network: Literal["host", "none", "private"]
    """`host` (the host's network), `none`, or `private` (a namespace of its own that reaches out,
    with only its model endpoint's loopback port of the host's forwarded)."""
    tags: dict[str, str]
    """The trial's task, arm and repetition."""
    arm: dict[str, Any] | None
    """The trial's arm as the plan froze it: `name`, `tool`, `model`, `alias`, `effort`,
    `source`, `team`, `workflow`."""


class WaitEnvelope(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """`{"data": {"wait": {...}}}`: nothing for this driver now."""

    retry_after_s: float
    """Ask again after this many seconds."""


class DoneEnvelope(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """`{"data": {"done": {...}}}`: the run ended."""

    run: str
    """The run."""
    state: str
    """`succeeded`, `failed`, `timed_out` or `cancelled`."""
    outputs: dict[str, Any]
    """The report step's outputs, `text` (the results table) and `table`; projected from the
    log when the report step could not write the record, so a driver always gets the table."""


class Reported(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """`{"data": {"reported": {...}}}`: `report` settled the leased step."""

    step: str
    """The step the lease held."""
    lease: str
    """The lease."""


class Renewed(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """`{"data": {"renewed": {...}}}`: `renew` extended the lease."""

    lease: str
    """The lease."""
    expires_at: datetime | None
    """Its new expiry."""


class Cancelled(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """`{"data": {"cancelled": {...}}}`: `cancel` asked the run to stop."""

    run: str
    """The run."""


ENVELOPES: dict[str, type[msgspec.Struct]] = {
    "can": Can, "lease": LeaseEnvelope, "wait": WaitEnvelope, "done": DoneEnvelope,
    "reported": Reported, "renewed": Renewed, "cancelled": Cancelled}
"""Each Struct of the protocol by the name its field table has in the drivers guide."""


def running_cli() -> Path:
    """The `armbench` command this process runs as (the console script beside its Python, else
    the first on PATH), so a step that runs `armbench ...` runs this same version: a second
    install or an `npx`-style one elsewhere on PATH never answers a step of this run."""
    called = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if called is not None and called.name == "armbench" and called.is_file():
        return called.absolute()
    beside = Path(sys.executable).with_name("armbench")
    if beside.is_file():
        return beside
    found = shutil.which("armbench")
    return Path(found) if found else Path("armbench")


def lease_envelope(lease: Lease) -> LeaseEnvelope:
    """A lease as a driver reads it: a trial's with the argv that launches it, a command's with
    the variables `armbench check` and `armbench report` read the lease from and the running
    CLI's folder first on PATH; either way `armbench` is the CLI that answered `next`."""
    env = dict(lease.env)
    launch_argv: list[str] | None = None
    cli = running_cli()
    if lease.kind == "prompt":
        launch_argv = [str(cli), "workflow", "launch", lease.run, "--lease", lease.lease]
    else:
        env.update(ARMBENCH_RUN=lease.run, ARMBENCH_LEASE=lease.lease)
        if cli.is_absolute():
            env["PATH"] = os.pathsep.join([str(cli.parent), *filter(None, [os.environ.get("PATH")])])
    arm = lease.context.get("arm")
    return LeaseEnvelope(
        id=lease.lease, run=lease.run, step=lease.step, kind=lease.kind,
        expires_at=lease.expires_at, cwd=lease.cwd, tool=lease.tool, model=lease.model,
        effort=lease.effort, prompt=lease.prompt, command=lease.command, launch=launch_argv,
        env=env, withhold=lease.withhold, timeout_s=lease.timeout_s, limit_s=lease.limit_s,
        max_turns=lease.max_turns, max_tokens=lease.max_tokens, max_cost=lease.max_cost,
        network=lease.network, tags=lease.tags,
        arm=arm if isinstance(arm, dict) else None)


# ---------------------------------------------------------------- the requests


class _Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True,
               tag_field="verb", rename="camel"):
    pass


class NextRequest(_Request, tag="next"):
    """`next --prepare --can` (`"prepare": false` asks as `next` without `--prepare`)."""

    can: Can = Can()
    prepare: bool = True


class LaunchRequest(_Request, tag="launch"):
    """`launch --lease`."""

    lease: str


class ReportRequest(_Request, tag="report"):
    """`report --lease`, its options as fields; `result` is the report `launch` answered."""

    lease: str
    outcome: Literal["succeeded", "failed", "error"] | None = None
    result: Report | None = None
    usage_file: str | None = None
    duration_ms: int | None = None
    cause: str | None = None
    message: str | None = None


class RenewRequest(_Request, tag="renew"):
    """`renew --lease`."""

    lease: str


class CancelRequest(_Request, tag="cancel"):
    """`cancel`."""


Request = NextRequest | LaunchRequest | ReportRequest | RenewRequest | CancelRequest


class Wiring(Protocol):
    """What answering a request needs (the composition root's `App` is one)."""

    @property
    def engine(self) -> Engine: ...

    @property
    def host(self) -> BenchmarkHost: ...

    @property
    def tools(self) -> Callable[[str], Mapping[str, ToolAdapter]]: ...


Answer = tuple[str, LeaseEnvelope | WaitEnvelope | DoneEnvelope | Report | Reported | Renewed
               | Cancelled]
"""The envelope's key and its value: what a one-shot verb prints and `serve` answers."""


def answer(wiring: Wiring, run: str, request: Request) -> Answer:
    """What the verb of `request` answers for the run: one answer for the one-shot verbs and
    `workflow serve` alike."""
    engine = wiring.engine
    if isinstance(request, NextRequest):
        got = lease_next(engine, run, request.can, prepare=request.prepare)
        if isinstance(got, Lease):
            return "lease", lease_envelope(got)
        if isinstance(got, Wait):
            return "wait", WaitEnvelope(retry_after_s=got.retry_after_s)
        return "done", DoneEnvelope(run=run, state=got.state, outputs=got.outputs)
    if isinstance(request, LaunchRequest):
        return "report", launch(engine=engine, host=wiring.host, tools=wiring.tools(run),
                                run=run, lease=request.lease)
    if isinstance(request, ReportRequest):
        return "reported", Reported(step=report_lease(engine, run, request.lease,
                                                      driver_report(request)),
                                    lease=request.lease)
    if isinstance(request, RenewRequest):
        engine.renew(run, request.lease)
        step = engine.state(run).steps[engine.lease_holder(run, request.lease)]
        return "renewed", Renewed(lease=request.lease, expires_at=step.expires_at)
    engine.cancel(run)
    return "cancelled", Cancelled(run=run)


def caps_of(can: Can) -> Caps:
    """The engine's capabilities for a declaration: trial tools only for a driver that declares
    the sandbox, clears the environment, runs unattended and takes prepared clones."""
    trusted = can.isolation == "sandbox" and can.env and can.unattended \
        and "clone" in can.workspace
    tools = frozenset(can.trials if can.trials is not None else can.tools) if trusted \
        else frozenset()
    return Caps(driver=can.driver, tools=tools, sole=False, runs_commands=True)


def start_external(*, engine: Engine, checkout: Checkout, config: ProjectConfig, suite: str,
                   sandbox: bool, member_aliases: bool, isolation: Sandbox,
                   new_run_id: Callable[[], str], progress: Callable[[str], None],
                   selection: Selection | None = None, timeout_s: int | None = None) -> str:
    """Create the run, freeze its plan (of the `selection`'s subset, when given; the plan step
    runs here) and return its id; the trials wait for drivers. `timeout_s` shortens the run's
    time limit (one longer than the suite's is refused)."""
    from armbench.benchmark.run import run_timeout, run_workflow
    from armbench.benchmark.team.planning import dry_plan

    aliases = "member" if member_aliases else "team"
    plan, _ = dry_plan(checkout, config, suite, aliases=aliases, selection=selection)
    limit = run_timeout(plan.timeout_s, timeout_s, suite)
    run = new_run_id()
    run_workflow(engine=engine, checkout=checkout, config=config, run=run, suite=suite,
                 aliases=aliases, timeout_s=limit, sandbox=sandbox,
                 isolation=isolation, progress=progress, selection=selection)
    got = engine.next(run, Caps(driver="armbench", tools=frozenset(), sole=False),
                      prepare=False, host_steps=1)
    if isinstance(got, Lease):  # pragma: no cover - a driver with no tools gets no prompt
        raise RuntimeError(f"run {run}: the plan step handed out {got.step}")
    progress(f"Run {run}: suite {suite}, {len(plan.trials)} trials, waiting for drivers "
             f"(armbench workflow next {run} --prepare --can ...).")
    return run


def lease_next(engine: Engine, run: str, can: Can, *, prepare: bool) -> Lease | Done | Wait:
    """The next step for this driver: a lease, a wait, or the run's end (with its table)."""
    _known(engine, run)
    got = engine.next(run, caps_of(can), prepare=prepare)
    return done_outputs(engine, run, got) if isinstance(got, Done) else got


def launch(*, engine: Engine, host: BenchmarkHost, tools: Mapping[str, ToolAdapter], run: str,
           lease: str) -> Report:
    """Run a held trial lease's tool (one of the run's `tools`, from the composition root) in
    its prepared clone, as the local driver would (the arm's workflow turn by turn), renewing
    the lease meanwhile; the driver reports it."""
    got = engine.lease_of(run, lease)
    step = engine.state(run).steps[got.step]
    if got.kind != "prompt":
        raise Refusal(f"Lease {lease} holds step {got.step!r}, a command step: run its command "
                      "(`armbench check` or `armbench report` run it under the lease) instead "
                      "of launching it.", code="invalid_inputs")
    held = host.relaunch(run, step.spec, got, step.commit or "")
    tool = tools.get(held.tool or "")
    if tool is None:
        return Report(outcome="error", cause="tool_unavailable",
                      message=f"armbench cannot run {held.tool} on this machine.")
    from armbench.benchmark.agents.turns import WorkflowRunner

    runner = WorkflowRunner(tool, work_root(run) / "scratch")
    with engine.renewing(run, lease):
        try:
            return runner(held, cancel=threading.Event())
        except OSError as exc:
            return fault_report(exc, f"step {held.step}")
        except LedgerError:
            raise
        except Exception as exc:  # a shape no code path foresaw: the step settles host_error
            return host_error_report(exc, f"step {held.step}")


def report_lease(engine: Engine, run: str, lease: str, report: Report) -> str:
    """Settle a held lease with the driver's report; returns the step it held."""
    step = engine.lease_holder(run, lease)
    engine.report(run, lease, step, report)
    return step


def driver_report(request: ReportRequest) -> Report:
    """A driver's report from `workflow report`'s options, over `launch`'s result when given
    (the usage file is read, never removed: it is the driver's)."""
    if not request.outcome and request.result is None:
        raise Refusal("Give the outcome (succeeded, failed or error) or the result (the report "
                      "`launch` answered).", code="invalid_inputs")
    base = request.result or Report(outcome="succeeded")
    changes: dict[str, object] = {"outcome": request.outcome} if request.outcome else {}
    usage = _usage(request.usage_file) if request.usage_file else None
    for key, value in (("usage", usage), ("duration_ms", request.duration_ms),
                       ("cause", request.cause), ("message", request.message)):
        if value is not None:
            changes[key] = value
    return msgspec.structs.replace(base, **changes)


def _usage(path: str) -> Usage | None:
    """The driver's usage file, read as a command tool's is."""
    from pathlib import Path

    from armbench.benchmark.agents.command import read_usage_file

    file = Path(path)
    if not file.is_file():
        raise Refusal(f"The usage file {path} could not be read: there is no such file. Give a "
                      "file that exists.", code="invalid_inputs")
    return read_usage_file(file)[0]


def done_outputs(engine: Engine, run: str, done: Done) -> Done:
    """The done envelope's outputs: the report step's, or, when it left none (the record could
    not be written), the table projected from the log, as `run` prints it then."""
    if done.outputs:
        return done
    from armbench.benchmark.records.reporting import project_run

    projected = project_run(engine.store, run, done.state)
    return Done(state=done.state, outputs={"text": projected.text, "table": projected.outputs})


def _known(engine: Engine, run: str) -> None:
    if engine.state(run).started is None:
        raise UnknownRun(run)
