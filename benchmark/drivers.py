"""The external drivers' protocol: `workflow start --driver external`, `next --prepare`,
`launch`, `report`, and the host verbs a driver may run itself (`check`, `report`).

An external driver is any process that speaks these verbs; armbench keeps preparation, protect,
`check.add`, the checks and the report, and launches the tool for the driver when asked
(`launch`), in the same sandbox the local driver uses. Composition: next to `run.py`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

import msgspec

from aggregates.workflow import Caps
from benchmark.trials.workfolder import work_root
from edge.config import Checkout, ProjectConfig
from edge.sandbox import Sandbox
from engine.protocol import Done, Lease, Report, Wait, fault_report
from ledger.errors import Refusal
from ledger.events import Usage

if TYPE_CHECKING:  # each verb is a process of its own: it imports what it uses when it runs
    from benchmark.agents.base import ToolAdapter
    from benchmark.host import BenchmarkHost
    from engine.service import Engine

__all__ = ["Can", "caps_of", "launch", "lease_next", "report_lease", "start_external"]


class Can(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """What an external driver declares it can do (`next --can`), as the spec names it."""

    driver: str = "external"
    """The driver's name, as the ledger records who took each step."""
    isolation: Literal["sandbox", "none"] = "none"
    """`sandbox`: the machine is a sandbox (CI, a container); trials go only to such drivers."""
    env: bool = False
    """It starts processes with the lease's env and removes the lease's withheld variables."""
    unattended: bool = False
    """Its tools run without asking a person."""
    workspace: list[str] = []
    """`clone`: it works in clones armbench prepares (it asks with `--prepare`)."""
    setup: bool = False
    """It can run a suite's setup itself (armbench runs it at preparation either way)."""
    tools: list[str] = []
    """The tools it can run."""
    trials: list[str] | None = None
    """The tools it runs benchmark trials with, committing to the trial rules; None: `tools`."""


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
                   new_run_id: Callable[[], str], progress: Callable[[str], None]) -> str:
    """Create the run, freeze its plan (the plan step runs here) and return its id; the trials
    wait for drivers."""
    from benchmark.run import run_workflow
    from benchmark.team.planning import dry_plan

    aliases = "member" if member_aliases else "team"
    plan, _ = dry_plan(checkout, config, suite, aliases=aliases)
    run = new_run_id()
    run_workflow(engine=engine, checkout=checkout, config=config, run=run, suite=suite,
                 aliases=aliases, timeout_s=plan.timeout_s, sandbox=sandbox,
                 isolation=isolation, progress=progress)
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
    from benchmark.agents.turns import WorkflowRunner

    runner = WorkflowRunner(tool, work_root(run) / "scratch")
    with engine.renewing(run, lease):
        try:
            return runner(held, cancel=threading.Event())
        except OSError as exc:
            return fault_report(exc, f"step {held.step}")


def report_lease(engine: Engine, run: str, lease: str, report: Report) -> str:
    """Settle a held lease with the driver's report; returns the step it held."""
    step = engine.lease_holder(run, lease)
    engine.report(run, lease, step, report)
    return step


def driver_report(*, outcome: str, result: bytes | None, usage: Usage | None,
                  duration_ms: int | None, cause: str | None, message: str | None) -> Report:
    """A driver's report from `workflow report`'s options, over `launch`'s result when given."""
    base = msgspec.json.decode(result, type=Report) if result else Report(outcome="succeeded")
    changes: dict[str, object] = {"outcome": outcome} if outcome else {}
    for key, value in (("usage", usage), ("duration_ms", duration_ms), ("cause", cause),
                       ("message", message)):
        if value is not None:
            changes[key] = value
    return msgspec.structs.replace(base, **changes)


def done_outputs(engine: Engine, run: str, done: Done) -> Done:
    """The done envelope's outputs: the report step's, or, when it left none (the record could
    not be written), the table projected from the log, as `run` prints it then."""
    if done.outputs:
        return done
    from benchmark.records.reporting import project_run

    projected = project_run(engine.store, run, done.state)
    return Done(state=done.state, outputs={"text": projected.text, "table": projected.outputs})


def _known(engine: Engine, run: str) -> None:
    if engine.state(run).started is None:
        raise Refusal(f"The ledger has no run {run!r} (armbench runs lists them).",
                      code="unknown_run")
