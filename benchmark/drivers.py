"""The external drivers' protocol: `workflow start --driver external`, `next --prepare`,
`launch`, `report`, and the host verbs a driver may run itself (`check`, `report`).

An external driver is any process that speaks these verbs; armbench keeps preparation, protect,
`check.add`, the checks and the report, and launches the tool for the driver when asked
(`launch`), in the same sandbox the local driver uses. Composition: next to `run.py`.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import msgspec

from aggregates.workflow import Caps
from benchmark.trials.workfolder import work_root
from edge.config import Checkout, ProjectConfig
from edge.sandbox import Sandbox
from engine.protocol import Done, Lease, Report, Wait, fault_report, host_error_report
from ledger.errors import LedgerError, Refusal
from ledger.events import Usage

if TYPE_CHECKING:  # each verb is a process of its own: it imports what it uses when it runs
    from benchmark.host import BenchmarkHost
    from engine.local_driver import StepRunner
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


def launch(*, engine: Engine, host: BenchmarkHost, checkout: Checkout, run: str,
           lease: str) -> Report:
    """Run a held trial lease's tool in its prepared clone, as the local driver would (the
    arm's workflow turn by turn), renewing the lease meanwhile; the driver reports it."""
    got = engine.lease_of(run, lease)
    step = engine.state(run).steps[got.step]
    if got.kind != "prompt":
        raise Refusal(f"Lease {lease} holds step {got.step!r}, a command step: run its command "
                      "(`armbench check` or `armbench report` run it under the lease) instead "
                      "of launching it.", code="invalid_inputs")
    held = host.relaunch(run, step.spec, got, step.commit or "")
    runner = launch_tool(checkout, host.plan_of(run).baseline_team_revision, run,
                         host.sandbox_of(run), held.tool or "")
    if runner is not None:  # a workflow arm's pinned workflow, turn by turn, as run does it
        from benchmark.agents.base import ToolAdapter
        from benchmark.agents.turns import WorkflowRunner

        if isinstance(runner, ToolAdapter):
            runner = WorkflowRunner(runner, work_root(run) / "scratch")
    if runner is None:
        return Report(outcome="error", cause="tool_unavailable",
                      message=f"armbench cannot run {held.tool} on this machine.")
    with engine.renewing(run, lease):
        try:
            return runner(held, cancel=threading.Event())
        except OSError as exc:
            return fault_report(exc, f"step {held.step}")
        except LedgerError:
            raise
        except Exception as exc:  # a shape no code path foresaw: the step settles host_error
            return host_error_report(exc, f"step {held.step}")


class _ToolCopy(msgspec.Struct, frozen=True, kw_only=True):
    """What `launch` keeps beside a command tool's exported folder."""

    run: str | None
    """tool.yaml's `run:` (None: the team has no valid tool of this name at the revision)."""
    credentials: list[str] = []
    """tool.yaml's `credentials`."""


def launch_tool(checkout: Checkout, revision: str, run: str, sandbox: Sandbox,
                name: str) -> StepRunner | None:
    """The one tool a leased trial runs, as `command_tools` would pick it: the team's valid
    command tool of that name at the frozen revision, else the agent CLI of that name on PATH.

    Under bubblewrap the team tool's read-only folder is exported once per run and revision and
    reused by every later `launch` (made under a temporary name and renamed, so no launch sees it
    half written; every step sees it read-only, so no trial can change it). Under declared
    isolation a trial could write it, so each launch gets its own copy, as before."""
    from benchmark.agents.command import CommandTool

    copy = _tool_copy(checkout, revision, run, name, reuse=sandbox.isolation == "bubblewrap")
    if copy is not None:
        folder, tool = copy
        if tool.run is not None:
            return CommandTool(name, tool.run, folder / name, sandbox, tool.credentials)
    from benchmark.agents import builtin_tools

    return builtin_tools(work_root(run) / "scratch", sandbox).get(name)


def _tool_copy(checkout: Checkout, revision: str, run: str, name: str, *,
               reuse: bool) -> tuple[Path, _ToolCopy] | None:
    tools = work_root(run) / "tools"
    kept = tools / f"{name}@{revision}"
    if reuse:
        try:
            return kept, msgspec.json.decode((kept / "tool.json").read_bytes(), type=_ToolCopy)
        except (OSError, msgspec.DecodeError):
            pass
    from benchmark.agents.command import export_tool_dir
    from edge.team import files_at
    from suites.diagnostics import has_errors
    from suites.validate import parse_tool

    files = files_at(checkout.mirror, revision, f"tools/{name}")
    path = f"tools/{name}/tool.yaml"
    tool, diags = parse_tool(files[path], file=path, folder_name=name) if path in files \
        else (None, [])
    valid = tool is not None and not has_errors(diags)
    made = tools / f".{name}@{revision}.{secrets.token_hex(4)}"
    made.mkdir(parents=True)
    if valid:
        export_tool_dir(files, name, made)
    copy = _ToolCopy(run=tool.run if valid and tool else None,
                     credentials=list(tool.credentials) if valid and tool else [])
    (made / "tool.json").write_bytes(msgspec.json.encode(copy))
    if not reuse:
        return made, copy
    try:
        os.rename(made, kept)  # another launch may have made it first: the same files
    except OSError:
        return made, copy
    return kept, copy


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
