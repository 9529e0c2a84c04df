"""`armbench workflow start|next|launch|report|renew|cancel` (the drivers' protocol), `workflow
serve` (the same verbs answered by one long-lived process, a JSON line each) and the host verbs a
driver runs itself, `armbench check` and `armbench report` (thin adapters)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from armbench.cli.envelope import emit, emit_data, finish
from armbench.cli.guard import protocol
from armbench.cli.output import new_id
from armbench.cli.subsetopts import ArmOpt, RepetitionsOpt, TaskOpt, selection
from armbench.ledger.errors import Refusal

if TYPE_CHECKING:
    from armbench.benchmark.drivers import Can, Request
    from armbench.cli.compose import App
    from armbench.engine.protocol import Report
    from armbench.engine.service import Engine

# Each verb imports what it uses when it runs: an external driver starts a process for every
# `next`, `launch` and `report` (perf/bench_drivers.py; docs/architecture.md).

__all__ = ["STEP_SNAPSHOTS", "register_workflow"]

STEP_SNAPSHOTS = 50
"""Events between snapshots for the verbs that work one step of a run (`next`, `launch`,
`report`, `renew`, `check`, `report`): each is a process that restores the run's state, so it
folds at most this many events after the newest snapshot rather than the whole run."""

RunArg = Annotated[str, typer.Argument(help="The run id (armbench runs lists them).")]
LeaseOpt = Annotated[str, typer.Option("--lease", help="The lease id `next` gave.")]


class Driver(StrEnum):
    local = "local"
    external = "external"


class Outcome(StrEnum):
    succeeded = "succeeded"
    failed = "failed"
    error = "error"


def register_workflow(app: typer.Typer) -> None:
    """Add `armbench workflow ...`, `armbench check` and `armbench report` to the app."""
    flow = typer.Typer(no_args_is_help=True, help="Start and work runs as a driver: the protocol "
                       "any driver (CI, a container runner, a harness) speaks. See "
                       "docs/guide/drivers.md.")
    for name, fn in (("start", start), ("next", next_), ("launch", launch_),
                     ("report", report_), ("renew", renew), ("cancel", cancel),
                     ("serve", serve)):
        flow.command(name)(protocol(fn))
    app.add_typer(flow, name="workflow")
    app.command("check")(protocol(check))
    app.command("report")(protocol(report_step))


WORKFLOW = "armbench-benchmark"
"""The one workflow `workflow start` starts (a team's override of it included)."""


class StartInputs(msgspec.Struct, forbid_unknown_fields=True):
    """`workflow start`'s `--inputs`, the benchmark workflow's inputs."""

    suite: str
    aliases: str = "team"


def _inputs(text: str) -> StartInputs:
    try:
        got = msgspec.json.decode(text, type=StartInputs)
    except msgspec.ValidationError as exc:
        raise Refusal(f"--inputs is not the benchmark workflow's inputs: {exc}. Expected a JSON "
                      'object such as {"suite": "auth-fixes", "aliases": "team"}.',
                      code="invalid_inputs") from None
    except msgspec.DecodeError as exc:
        raise Refusal(f"--inputs is not JSON ({exc}). Expected a JSON object such as "
                      '{"suite": "auth-fixes", "aliases": "team"}.', code="invalid_inputs") from None
    if got.aliases not in ("team", "member"):
        raise Refusal(f"--inputs names aliases {got.aliases!r}; expected team or member.",
                      code="invalid_inputs")
    return got


def _timeout(text: str | None) -> int | None:
    if text is None:
        return None
    from armbench.suites.durations import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise Refusal(f"--timeout: {exc}.", code="invalid_inputs") from None


def start(
    name: Annotated[str, typer.Argument(
        help="The workflow to start: armbench-benchmark (with --benchmark, the suite's name).")],
    inputs: Annotated[str | None, typer.Option(
        help='The workflow\'s inputs as JSON: {"suite": "<suite>", "aliases": "team"} '
             '("member" resolves arm aliases with ~/.armbench/models/aliases.yaml over the '
             "team's).")] = None,
    timeout: Annotated[str | None, typer.Option(
        help="The run's time limit (90m, 6h, 1h30m): the suite's timeout by default, never "
             "longer.")] = None,
    benchmark: Annotated[bool, typer.Option(
        help="Take the argument as the suite's name (the older form of --inputs).")] = False,
    driver: Annotated[Driver, typer.Option(
        help="local: drive it here, as `armbench run`; external: create the run, freeze its "
             "plan, print its id and leave its steps to drivers.")] = Driver.local,
    sandbox: Annotated[bool, typer.Option(
        help="Declare this machine a sandbox (a CI runner or a container without personal "
             "logins).")] = False,
    member_aliases: Annotated[bool, typer.Option(
        help="Resolve arm aliases with ~/.armbench/models/aliases.yaml over the team's.")] = False,
    task: TaskOpt = None, arm: ArmOpt = None, repetitions: RepetitionsOpt = None,
) -> None:
    """Start a benchmark run: {"data":{"done":...}} when driven here, {"data":{"run":{"id"}}}
    for external drivers.

    `armbench workflow start armbench-benchmark --inputs '{"suite":"auth-fixes","aliases":"team"}'
    --timeout 6h`, as the specification writes it."""
    if benchmark:
        if inputs is not None:
            raise Refusal("--benchmark takes the suite from the argument, --inputs from its JSON: "
                          f"give one. `armbench workflow start {WORKFLOW} --inputs "
                          f"'{{\"suite\":\"{name}\"}}'` is the same run.", code="invalid_inputs")
        suite = name
    elif name != WORKFLOW:
        raise Refusal(f"armbench starts only the benchmark workflow, {WORKFLOW}; found {name!r}. "
                      f"`armbench workflow start {WORKFLOW} --inputs '{{\"suite\":\"<suite>\"}}'` "
                      "starts it on a suite.", code="invalid_inputs")
    elif inputs is None:
        raise Refusal(f"{WORKFLOW} needs --inputs naming its suite, such as "
                      '--inputs \'{"suite":"auth-fixes","aliases":"team"}\'.', code="invalid_inputs")
    else:
        given = _inputs(inputs)
        suite, member_aliases = given.suite, member_aliases or given.aliases == "member"
    timeout_s = _timeout(timeout)
    from armbench.cli.compose import compose

    a = compose(access="run" if driver == Driver.local else "write")
    if driver == Driver.local:
        from armbench.benchmark.run import record_path, run_suite

        outcome = run_suite(engine=a.engine, checkout=a.checkout, config=a.config, suite=suite,
                            sandbox=sandbox, member_aliases=member_aliases, progress=a.progress,
                            new_run_id=lambda: new_id("r"), isolation=a.sandbox, tools=a.tools,
                            selection=selection(task, arm, repetitions), timeout_s=timeout_s)
        finish(outcome, record_path(a.checkout, a.config, outcome.run))
    from armbench.benchmark.drivers import start_external

    run = start_external(engine=a.engine, checkout=a.checkout, config=a.config, suite=suite,
                         sandbox=sandbox or a.config.workflows.sandbox,
                         member_aliases=member_aliases, isolation=a.sandbox,
                         new_run_id=lambda: new_id("r"), progress=a.progress,
                         selection=selection(task, arm, repetitions), timeout_s=timeout_s)
    emit_data("run", {"id": run})


def next_(
    run: RunArg,
    can: Annotated[str, typer.Option(
        help='What this driver can do, as JSON or @file: {"driver", "isolation": "sandbox", '
             '"env": true, "unattended": true, "workspace": ["clone"], "tools": [...], '
             '"trials": [...]}.')] = "{}",
    prepare: Annotated[bool, typer.Option(
        help="Have armbench prepare the clone of a trial it leases (and run its own steps: "
             "setup, checks, the report); trials go only to drivers that ask this.")] = False,
) -> None:
    """Lease this driver's next step: {"data":{"lease":...}}, {"data":{"wait":...}} or
    {"data":{"done":...}}."""
    from armbench.benchmark.drivers import NextRequest
    from armbench.cli.compose import compose

    request = NextRequest(can=_can(can), prepare=prepare)
    _print(compose(snapshot_every=STEP_SNAPSHOTS), run, request)


def launch_(
    run: RunArg, lease: LeaseOpt,
    result: Annotated[Path | None, typer.Option(
        help="Also write the report, as JSON, to this file (for `report --result`).")] = None,
) -> None:
    """Run a leased trial's tool in its prepared clone, in armbench's sandbox, as the local
    driver would; prints {"data":{"report":...}} and reports nothing (the driver does)."""
    from armbench.benchmark.drivers import LaunchRequest, answer
    from armbench.cli.compose import compose

    key, report = answer(compose(access="run", snapshot_every=STEP_SNAPSHOTS), run,
                         LaunchRequest(lease=lease))
    if result is not None:
        result.write_bytes(msgspec.json.encode(report))
    emit_data(key, report)


def report_(
    run: RunArg, lease: LeaseOpt,
    outcome: Annotated[Outcome | None, typer.Option(
        help="How the step ended (over --result's).")] = None,
    result: Annotated[Path | None, typer.Option(
        help="A report `launch --result` wrote: its usage, agent and limits.")] = None,
    usage_file: Annotated[Path | None, typer.Option(
        help='The tool\'s usage as JSON: {"tokens": {...}, "cost": {"amount", "unit"}}.')] = None,
    duration_ms: Annotated[int | None, typer.Option(help="How long the step took.")] = None,
    cause: Annotated[str | None, typer.Option(help="Why it ended so, in one word.")] = None,
    message: Annotated[str | None, typer.Option(help="What happened, for people.")] = None,
) -> None:
    """Settle a leased step with its outcome: {"data":{"reported":{"step","lease"}}}."""
    if outcome is None and result is None:
        raise Refusal("Give --outcome (succeeded, failed or error) or --result.",
                      code="invalid_inputs")
    from armbench.benchmark.drivers import ReportRequest
    from armbench.cli.compose import compose

    request = ReportRequest(
        lease=lease, outcome=outcome.value if outcome else None,
        result=_result(_read(result, "--result")) if result else None,
        usage_file=str(usage_file) if usage_file else None, duration_ms=duration_ms,
        cause=cause, message=message)
    _print(compose(snapshot_every=STEP_SNAPSHOTS), run, request)


def renew(run: RunArg, lease: LeaseOpt) -> None:
    """Extend a held lease by the lease time to live: {"data":{"renewed":{"lease"}}}."""
    from armbench.benchmark.drivers import RenewRequest
    from armbench.cli.compose import compose

    _print(compose(snapshot_every=STEP_SNAPSHOTS), run, RenewRequest(lease=lease))


def cancel(run: RunArg) -> None:
    """Ask the run to stop: steps not yet leased settle not_run; the report still runs."""
    from armbench.benchmark.drivers import CancelRequest
    from armbench.cli.compose import compose

    _print(compose(), run, CancelRequest())


def serve(run: RunArg) -> None:
    """Answer `next`, `launch`, `report`, `renew` and `cancel` requests for the run, one JSON
    line on stdin each ({"verb": "next", "can": {...}}, ...), each with the envelope the one-shot
    verb prints, one line on stdout; ends at end of input or after answering `done`."""
    import io
    import os
    import sys

    from armbench.cli.compose import compose

    a = compose(access="run", snapshot_every=STEP_SNAPSHOTS)
    # The answers get stdout to themselves: whatever else writes to it (a child process that
    # inherited it) goes to stderr instead.
    answers = io.TextIOWrapper(io.FileIO(os.dup(1), "w"), encoding="utf-8", write_through=True)
    sys.stdout.flush()
    os.dup2(2, 1)
    kept, sys.stdout = sys.stdout, answers
    try:
        for line in sys.stdin:
            if line.strip() and _serve_one(a, run, line) == "done":
                return
    finally:
        sys.stdout = kept
        answers.close()


def _serve_one(a: App, run: str, line: str) -> str:
    """Answer one request line (an error envelope for a request or a step that fails); returns
    the answer's key."""
    from armbench.benchmark.drivers import answer
    from armbench.cli.envelope import emit_error
    from armbench.ledger.errors import ArmbenchError

    try:
        key, value = answer(a, run, _request(line))
    except ArmbenchError as exc:
        emit_error(exc.code, exc.message)
        return "error"
    emit_data(key, value)
    return key


def _print(a: App, run: str, request: Request) -> None:
    """Answer one request and print its envelope."""
    from armbench.benchmark.drivers import answer

    emit_data(*answer(a, run, request))


def _request(line: str) -> Request:
    from armbench.benchmark.drivers import Request

    try:
        return msgspec.json.decode(line, type=Request)
    except msgspec.DecodeError as exc:
        raise Refusal(f"The request {line.strip()[:200]!r} is not one `workflow serve` reads: "
                      f"{exc}. Expected one JSON object a line, such as "
                      '{"verb": "next", "can": {...}}, {"verb": "launch", "lease": "..."} or '
                      '{"verb": "report", "lease": "...", "outcome": "succeeded"} '
                      "(docs/guide/drivers.md).", code="invalid_inputs") from None


def check(
    baseline: Annotated[bool, typer.Option("--baseline", help="A task's baseline check.")] = False,
    trial: Annotated[bool, typer.Option("--trial", help="A trial's check, in its clone.")] = False,
    run: Annotated[str, typer.Option(envvar="ARMBENCH_RUN", help="The run.")] = "",
    lease: Annotated[str, typer.Option(envvar="ARMBENCH_LEASE", help="The lease.")] = "",
) -> None:
    """Run a leased check step (the plan's `armbench check --baseline|--trial`, with the
    lease's env) and report it: {"result": "passed"|"failed"|"could_not_run", "data":
    {"report": ...}}; exit 1 when the check could not be set up (its result could_not_run)."""
    if baseline == trial:
        raise Refusal("Give one of --baseline and --trial.", code="invalid_inputs")
    from armbench.ledger.events import CheckRan

    engine, step, got = _host_step(run, lease)
    ran = [e for e in engine.store.events(run, kinds=(CheckRan,))
           if isinstance(e, CheckRan) and e.step == step]
    result = ran[-1].result if ran else "could_not_run"
    emit({"result": result, "data": {"report": msgspec.to_builtins(got)}})
    if result == "could_not_run":
        raise typer.Exit(1)


def report_step(
    run: Annotated[str, typer.Option(envvar="ARMBENCH_RUN", help="The run.")] = "",
    lease: Annotated[str, typer.Option(envvar="ARMBENCH_LEASE", help="The lease.")] = "",
) -> None:
    """Run a leased report step (the workflow's `armbench report`, with the lease's env):
    writes the record and reports the step: {"text": ..., "table": ..., "data": {"report": ...}}."""
    _, _, got = _host_step(run, lease)
    emit({"text": got.outputs.get("text"), "table": got.outputs.get("table"),
          "data": {"report": msgspec.to_builtins(got)}})


def _host_step(run: str, lease: str) -> tuple[Engine, str, Report]:
    """Run the host step the lease holds and report it: the engine, the step, and its report."""
    if not run or not lease:
        raise Refusal("This verb runs a step a driver leased: give --run and --lease (the "
                      "lease's env sets ARMBENCH_RUN and ARMBENCH_LEASE).", code="invalid_inputs")
    from armbench.cli.compose import compose

    a = compose(access="run", snapshot_every=STEP_SNAPSHOTS)
    step = a.engine.lease_holder(run, lease)
    return a.engine, step, a.engine.execute_leased(run, lease)


def _can(text: str) -> Can:
    from armbench.benchmark.drivers import Can

    raw = _read(Path(text[1:]), "--can") if text.startswith("@") else text.encode()
    try:
        return msgspec.json.decode(raw, type=Can)
    except msgspec.DecodeError as exc:
        raise Refusal(f"--can is not a declaration armbench reads: {exc}. Expected JSON such as "
                      '{"isolation": "sandbox", "env": true, "unattended": true, "workspace": '
                      '["clone"], "tools": ["claude"]}.', code="invalid_inputs") from None


def _read(path: Path, option: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise Refusal(f"{option} {path} could not be read: {exc.strerror or exc}. Give a file "
                      "that exists.", code="invalid_inputs") from None


def _result(data: bytes) -> Report:
    from armbench.engine.protocol import Report

    try:
        return msgspec.json.decode(data, type=Report)
    except msgspec.DecodeError as exc:
        raise Refusal(f"--result is not a report `launch --result` wrote: {exc}.",
                      code="invalid_inputs") from None
