"""`armbench workflow start|next|launch|report|renew|cancel` (the drivers' protocol), `workflow
serve` (the same verbs answered by one long-lived process, a JSON line each) and the host verbs a
driver runs itself, `armbench check` and `armbench report` (thin adapters)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import msgspec
import typer

from cli.envelope import emit_data, finish
from cli.guard import guarded
from cli.output import new_id, progress
from cli.subsetopts import ArmOpt, RepetitionsOpt, TaskOpt, selection
from ledger.errors import Refusal

if TYPE_CHECKING:
    from benchmark.drivers import Can
    from cli.compose import App
    from engine.protocol import Done, Lease
    from ledger.events import Usage

# Each verb imports what it uses when it runs: an external driver starts a process for every
# `next`, `launch` and `report` (benchmarks/bench_drivers.py; docs/architecture.md).

__all__ = ["STEP_SNAPSHOTS", "lease_envelope", "register_workflow"]

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
        flow.command(name)(guarded(fn))
    app.add_typer(flow, name="workflow")
    app.command("check")(guarded(check))
    app.command("report")(guarded(report_step))


def start(
    suite: Annotated[str, typer.Argument(help="The suite's name.")],
    benchmark: Annotated[bool, typer.Option(
        help="Start the benchmark workflow on the suite (the only workflow armbench starts).")] = False,
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
    for external drivers."""
    if not benchmark:
        raise Refusal("armbench starts only the benchmark workflow: add --benchmark.",
                      code="invalid_inputs")
    from cli.compose import compose

    a = compose(access="run" if driver == Driver.local else "write")
    if driver == Driver.local:
        from benchmark.run import record_path, run_suite

        outcome = run_suite(engine=a.engine, checkout=a.checkout, config=a.config, suite=suite,
                            sandbox=sandbox, member_aliases=member_aliases, progress=progress,
                            new_run_id=lambda: new_id("r"), isolation=a.host.sandbox,
                            selection=selection(task, arm, repetitions))
        finish(outcome, record_path(a.checkout, a.config, outcome.run))
    from benchmark.drivers import start_external

    run = start_external(engine=a.engine, checkout=a.checkout, config=a.config, suite=suite,
                         sandbox=sandbox or a.config.workflows.sandbox,
                         member_aliases=member_aliases, isolation=a.host.sandbox,
                         new_run_id=lambda: new_id("r"), progress=progress,
                         selection=selection(task, arm, repetitions))
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
    from cli.compose import compose

    declared = _can(can)
    emit_data(*answer_next(compose(snapshot_every=STEP_SNAPSHOTS), run, declared,
                           prepare=prepare))


def launch_(
    run: RunArg, lease: LeaseOpt,
    result: Annotated[Path | None, typer.Option(
        help="Also write the report, as JSON, to this file (for `report --result`).")] = None,
) -> None:
    """Run a leased trial's tool in its prepared clone, in armbench's sandbox, as the local
    driver would; prints {"data":{"report":...}} and reports nothing (the driver does)."""
    from cli.compose import compose

    key, report = answer_launch(compose(access="run", snapshot_every=STEP_SNAPSHOTS), run, lease)
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
    from cli.compose import compose

    body = _read(result, "--result") if result else None
    usage = _usage(usage_file) if usage_file else None
    emit_data(*answer_report(compose(snapshot_every=STEP_SNAPSHOTS), run, lease,
                             outcome=outcome.value if outcome else "", result=body, usage=usage,
                             duration_ms=duration_ms, cause=cause, message=message))


def renew(run: RunArg, lease: LeaseOpt) -> None:
    """Extend a held lease by the lease time to live: {"data":{"renewed":{"lease"}}}."""
    from cli.compose import compose

    emit_data(*answer_renew(compose(snapshot_every=STEP_SNAPSHOTS), run, lease))


def cancel(run: RunArg) -> None:
    """Ask the run to stop: steps not yet leased settle not_run; the report still runs."""
    from cli.compose import compose

    emit_data(*answer_cancel(compose(), run))


def serve(run: RunArg) -> None:
    """Answer `next`, `launch`, `report`, `renew` and `cancel` requests for the run, one JSON
    line on stdin each ({"verb": "next", "can": {...}}, ...), each with the envelope the one-shot
    verb prints, one line on stdout; ends at end of input or after answering `done`."""
    import io
    import os
    import sys

    from cli.compose import compose

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
    from cli.envelope import emit_error
    from ledger.errors import ArmbenchError

    try:
        key, value = _answer(a, run, _request(line))
    except ArmbenchError as exc:
        emit_error(exc.code, exc.message)
        return "error"
    emit_data(key, value)
    return key


def _answer(a: App, run: str, request: Request) -> tuple[str, Any]:
    if isinstance(request, NextRequest):
        return answer_next(a, run, request.can, prepare=request.prepare)
    if isinstance(request, LaunchRequest):
        return answer_launch(a, run, request.lease)
    if isinstance(request, ReportRequest):
        if not request.outcome and request.result is None:
            raise Refusal('Give "outcome" (succeeded, failed or error) or "result" (the report '
                          '`launch` answered) in the report request.', code="invalid_inputs")
        result = msgspec.json.encode(request.result) if request.result is not None else None
        usage = _usage(Path(request.usage_file)) if request.usage_file else None
        return answer_report(a, run, request.lease, outcome=request.outcome or "", result=result,
                             usage=usage, duration_ms=request.duration_ms, cause=request.cause,
                             message=request.message)
    if isinstance(request, RenewRequest):
        return answer_renew(a, run, request.lease)
    return answer_cancel(a, run)


class _Request(msgspec.Struct, kw_only=True, forbid_unknown_fields=True,
               tag_field="verb", rename="camel"):
    pass


class NextRequest(_Request, tag="next"):
    """`next --prepare --can` (`"prepare": false` asks as `next` without `--prepare`)."""

    can: dict[str, Any] = {}
    prepare: bool = True


class LaunchRequest(_Request, tag="launch"):
    """`launch --lease`."""

    lease: str


class ReportRequest(_Request, tag="report"):
    """`report --lease`, its options as fields; `result` is the report `launch` answered."""

    lease: str
    outcome: Literal["succeeded", "failed", "error"] | None = None
    result: dict[str, Any] | None = None
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


def _request(line: str) -> Request:
    try:
        return msgspec.json.decode(line, type=Request)  # type: ignore[arg-type]
    except msgspec.DecodeError as exc:
        raise Refusal(f"The request {line.strip()[:200]!r} is not one `workflow serve` reads: "
                      f"{exc}. Expected one JSON object a line, such as "
                      '{"verb": "next", "can": {...}}, {"verb": "launch", "lease": "..."} or '
                      '{"verb": "report", "lease": "...", "outcome": "succeeded"} '
                      "(docs/guide/drivers.md).", code="invalid_inputs") from None


def answer_next(a: App, run: str, can: Can | dict[str, Any], *,
                prepare: bool) -> tuple[str, Any]:
    """What `next` answers: ("lease", ...), ("wait", ...) or ("done", ...)."""
    from benchmark.drivers import lease_next
    from engine.protocol import Lease, Wait

    declared = _can_of(can) if isinstance(can, dict) else can
    got = lease_next(a.engine, run, declared, prepare=prepare)
    if isinstance(got, Lease):
        return "lease", lease_envelope(got)
    if isinstance(got, Wait):
        return "wait", {"retryAfterS": got.retry_after_s}
    return "done", done_envelope(run, got)


def answer_launch(a: App, run: str, lease: str) -> tuple[str, Any]:
    """What `launch` answers: ("report", the report as JSON builtins)."""
    from benchmark.drivers import launch

    got = launch(engine=a.engine, host=a.host, checkout=a.checkout, run=run, lease=lease)
    return "report", msgspec.json.decode(msgspec.json.encode(got))


def answer_report(a: App, run: str, lease: str, *, outcome: str, result: bytes | None,
                  usage: Usage | None, duration_ms: int | None, cause: str | None,
                  message: str | None) -> tuple[str, Any]:
    """What `report` answers: ("reported", {"step", "lease"})."""
    from benchmark.drivers import driver_report, report_lease

    got = driver_report(outcome=outcome, result=result, usage=usage, duration_ms=duration_ms,
                        cause=cause, message=message)
    return "reported", {"step": report_lease(a.engine, run, lease, got), "lease": lease}


def answer_renew(a: App, run: str, lease: str) -> tuple[str, Any]:
    """What `renew` answers: ("renewed", {"lease", "expiresAt"})."""
    a.engine.renew(run, lease)
    return "renewed", {"lease": lease, "expiresAt": a.engine.state(run).steps[
        a.engine.lease_holder(run, lease)].expires_at}


def answer_cancel(a: App, run: str) -> tuple[str, Any]:
    """What `cancel` answers: ("cancelled", {"run"})."""
    a.engine.cancel(run)
    return "cancelled", {"run": run}


def check(
    baseline: Annotated[bool, typer.Option("--baseline", help="A task's baseline check.")] = False,
    trial: Annotated[bool, typer.Option("--trial", help="A trial's check, in its clone.")] = False,
    run: Annotated[str, typer.Option(envvar="ARMBENCH_RUN", help="The run.")] = "",
    lease: Annotated[str, typer.Option(envvar="ARMBENCH_LEASE", help="The lease.")] = "",
) -> None:
    """Run a leased check step (the plan's `armbench check --baseline|--trial`, with the
    lease's env) and report it: {"data":{"report":...}}."""
    if baseline == trial:
        raise Refusal("Give one of --baseline and --trial.", code="invalid_inputs")
    _host_step(run, lease)


def report_step(
    run: Annotated[str, typer.Option(envvar="ARMBENCH_RUN", help="The run.")] = "",
    lease: Annotated[str, typer.Option(envvar="ARMBENCH_LEASE", help="The lease.")] = "",
) -> None:
    """Run a leased report step (the workflow's `armbench report`, with the lease's env):
    writes the record and reports the step: {"data":{"report":...}}."""
    _host_step(run, lease)


def _host_step(run: str, lease: str) -> None:
    if not run or not lease:
        raise Refusal("This verb runs a step a driver leased: give --run and --lease (the "
                      "lease's env sets ARMBENCH_RUN and ARMBENCH_LEASE).", code="invalid_inputs")
    from cli.compose import compose

    a = compose(access="run", snapshot_every=STEP_SNAPSHOTS)
    got = a.engine.execute_leased(run, lease)
    emit_data("report", msgspec.to_builtins(got))


def lease_envelope(lease: Lease) -> dict[str, Any]:
    """A lease as a driver reads it (docs/guide/drivers.md lists every field)."""
    env = dict(lease.env)
    launch_argv: list[str] | None = None
    if lease.kind == "prompt":
        launch_argv = ["armbench", "workflow", "launch", lease.run, "--lease", lease.lease]
    else:
        env.update(ARMBENCH_RUN=lease.run, ARMBENCH_LEASE=lease.lease)
    return {"id": lease.lease, "run": lease.run, "step": lease.step, "kind": lease.kind,
            "expiresAt": lease.expires_at, "cwd": lease.cwd, "tool": lease.tool,
            "model": lease.model, "effort": lease.effort, "prompt": lease.prompt,
            "command": lease.command, "launch": launch_argv, "env": env,
            "withhold": lease.withhold, "timeoutS": lease.timeout_s, "limitS": lease.limit_s,
            "maxTurns": lease.max_turns, "network": lease.network, "tags": lease.tags,
            "arm": lease.context.get("arm")}


def done_envelope(run: str, done: Done) -> dict[str, Any]:
    """The run's end as `next` answers once it ended."""
    return {"run": run, "state": done.state, "outputs": done.outputs}


def _can(text: str) -> Can:
    from benchmark.drivers import Can

    raw = _read(Path(text[1:]), "--can") if text.startswith("@") else text.encode()
    try:
        return msgspec.json.decode(raw, type=Can)
    except msgspec.DecodeError as exc:
        raise Refusal(f"--can is not a declaration armbench reads: {exc}. Expected JSON such as "
                      '{"isolation": "sandbox", "env": true, "unattended": true, "workspace": '
                      '["clone"], "tools": ["claude"]}.', code="invalid_inputs") from None


def _can_of(value: dict[str, Any]) -> Can:
    from benchmark.drivers import Can

    try:
        return msgspec.convert(value, type=Can)
    except msgspec.ValidationError as exc:
        raise Refusal(f'"can" is not a declaration armbench reads: {exc}. Expected an object '
                      'such as {"isolation": "sandbox", "env": true, "unattended": true, '
                      '"workspace": ["clone"], "tools": ["claude"]}.', code="invalid_inputs") \
            from None


def _read(path: Path, option: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise Refusal(f"{option} {path} could not be read: {exc.strerror or exc}. Give a file "
                      "that exists.", code="invalid_inputs") from None


def _usage(path: Path) -> Any:
    """The usage file read as a command tool's is (its reader removes what it read: a copy)."""
    from benchmark.agents.command import read_usage_file

    copy = path.with_name(path.name + ".read")
    copy.write_bytes(_read(path, "--usage-file"))
    usage, _ = read_usage_file(copy)
    return usage

