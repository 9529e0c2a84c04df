"""The `armbench` command: one thin adapter per verb (parse, call the library, render)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer
import typer.main

from armbench.cli.auditcmd import register as register_audit
from armbench.cli.dashboardcmd import register as register_dashboard
from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.judgecmd import register_judge
from armbench.cli.output import clock, exit_now, progress
from armbench.cli.publishcmd import register as register_publish
from armbench.cli.reviewcmd import register as register_review
from armbench.cli.schemacmd import register_schema
from armbench.cli.subsetopts import ArmOpt, RepetitionsOpt, TaskOpt, selection
from armbench.cli.taskcmd import register_task
from armbench.cli.trycmd import register_try
from armbench.cli.workcmd import register_work
from armbench.cli.workflowcmd import register_workflow
from armbench.ledger.errors import Refusal

if TYPE_CHECKING:  # typer 0.28 builds on its own copy of click
    from typer._click import Command

# Each verb imports what it uses when it runs, so `armbench --help` and the ledger's read verbs
# start without the engine, the host and git (perf/bench_startup.py; docs/architecture.md).
__all__ = ["app", "main"]

_APP = {"name": "armbench", "no_args_is_help": True, "pretty_exceptions_enable": False,
        "add_completion": False,
        "help": "Benchmark coding agents on your own tasks: arms, isolated trials, hidden checks, "
                "and an event ledger that explains every number."}
"""The app's settings, which `command_for`'s narrowed app shares."""
app = typer.Typer(**_APP)  # type: ignore[arg-type]


def _version(shown: bool) -> None:
    if shown:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("armbench")
        except PackageNotFoundError:  # run from a source tree, not installed
            number = "unknown (not installed)"
        typer.echo(f"armbench {number}")
        raise typer.Exit()


@app.callback()
def _armbench(version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_version,
        help="Print armbench's version and exit.")] = False) -> None:
    """Benchmark coding agents on your own tasks: arms, isolated trials, hidden checks, and an
    event ledger that explains every number."""
@app.command()
@guarded
def init(team: Annotated[str, typer.Option(help="The team repo: a local path or a git URL.")]) -> None:
    """Tie this project checkout to a team repo (writes .armbench/config.yaml)."""
    from armbench.benchmark.team import pull as pulling
    from armbench.edge.config import find_checkout

    checkout = find_checkout(Path.cwd())
    config = pulling.init(checkout, team)
    progress(f"This checkout now uses the team repo {config.team}. Run `armbench pull` next.")
    emit_data("init", {"team": config.team})


@app.command()
@guarded
def pull() -> None:
    """Fetch the team repo, validate its benchmark files, and cache the valid suites."""
    from armbench.benchmark.team import pull as pulling
    from armbench.edge.config import find_checkout, load_config
    from armbench.suites.diagnostics import render

    checkout = find_checkout(Path.cwd())
    result = pulling.pull(checkout, load_config(checkout), now=clock)
    for d in result.diagnostics:
        progress(render(d))
    progress(f"Pulled team revision {result.revision}: cached {', '.join(result.cached) or 'no suite'}"
             + (f"; kept the last valid version of {', '.join(result.kept)}" if result.kept else "")
             + (f"; not cached: {', '.join(result.rejected)}" if result.rejected else "") + ".")
    emit_data("pull", msgspec.to_builtins(result))


@app.command()
@guarded
def plan(
    suite: Annotated[str, typer.Argument(help="The suite's name.")],
    aliases: Annotated[str, typer.Option(
        help="Whose model aliases resolve the arms: team or member.")] = "team",
    detect_points: Annotated[float | None, typer.Option(
        "--detect", metavar="POINTS",
        help="Also say, from earlier records of these tasks, how many repetitions (or tasks) "
             "detect a difference of this many percentage points between two arms with 80% "
             "power, and what that costs.")] = None,
    task: TaskOpt = None, arm: ArmOpt = None, repetitions: RepetitionsOpt = None,
) -> None:
    """Freeze the suite's plan, as a run would, and print {definition, plan}. Starts nothing."""
    from armbench.benchmark.records.sizing import detect
    from armbench.benchmark.team.planning import dry_plan
    from armbench.edge.config import find_checkout, load_config
    from armbench.suites.plan import worst_case

    checkout = find_checkout(Path.cwd())
    config = load_config(checkout)
    frozen, steps = dry_plan(checkout, config, suite, aliases=aliases,
                             selection=selection(task, arm, repetitions))
    data = {"definition": msgspec.to_builtins(steps), "plan": msgspec.to_builtins(frozen)}
    cap, worst = frozen.trial_budget_cost, worst_case(frozen)
    if cap is not None and worst is not None:
        progress(f"At most {worst.amount:g} {worst.unit} for {len(frozen.trials)} trials "
                 f"({cap.amount:g} {cap.unit} each, trial.budget.cost), where every tool holds "
                 "the cap; a tool that lists it unenforced can spend more.")
        data["worst_case"] = msgspec.to_builtins(worst)
    if detect_points is not None:
        found = detect(frozen, detect_points, checkout=checkout, config=config, progress=progress)
        for line in found.lines:
            progress(line)
        data["detect"] = msgspec.to_builtins(found)
    emit_data("plan", data)


@app.command()
@guarded
def run(
    suite: Annotated[str, typer.Argument(help="The suite's name.")],
    sandbox: Annotated[bool, typer.Option(
        help="Declare this machine a sandbox (a CI runner or a container without personal "
             "logins).")] = False,
    member_aliases: Annotated[bool, typer.Option(
        help="Resolve arm aliases with ~/.armbench/models/aliases.yaml over the team's.")] = False,
    fail_on_regression: Annotated[bool, typer.Option(
        help="Also exit 1 when an arm's pass rate dropped against the newest comparable record "
             "published on armbench-reports (for CI), or when only transient errors keep a drop "
             "from being decided.")] = False,
    allow_inconclusive: Annotated[bool, typer.Option(
        help="With --fail-on-regression, exit 0 when only transient errors (the provider's or "
             "the network's) keep a drop from being decided.")] = False,
    fail_on_flagged: Annotated[bool, typer.Option(
        help="Also exit 1 when a passed trial is flagged (an empty or cosmetic change, a protected "
             "path it changed, a module named like the standard library's, a skipped test, ...), "
             "for CI that wants a person to look.")] = False,
    driver: Annotated[str, typer.Option(
        help="local: drive the run here; none: only start it, for `armbench work` workers on "
             "any machines that share the ledger.")] = "local",
    quiet: Annotated[bool, typer.Option(
        help="No progress while the run works (the table and the envelope still print).")]
        = False,
    keep_evidence: Annotated[bool, typer.Option(
        hidden=True, help="Kept for old scripts: every run keeps its evidence now.")] = False,
    no_evidence: Annotated[bool, typer.Option(
        "--no-evidence",
        help="Keep no evidence of the trials (check output, diff, transcript, judges' prompts "
             "and answers); by default each is kept in .armbench/evidence/, never "
             "published.")] = False,
    task: TaskOpt = None, arm: ArmOpt = None, repetitions: RepetitionsOpt = None,
) -> None:
    """Run every task on every arm, repeated, in isolated clones; print the results.

    --task, --arm and --repetitions run a subset: the plan freezes it and the record and the
    table say so; the regression gate never compares a subset with a whole run.

    While it works, stderr shows its progress: a live block on a terminal, a plain line every
    few seconds elsewhere (CI)."""
    if driver not in ("local", "none"):
        raise Refusal(f"--driver is {driver!r}; expected local (drive the run here) or none "
                      "(start it for `armbench work` workers).", code="bad_option")
    if allow_inconclusive and not fail_on_regression:
        raise Refusal("--allow-inconclusive was given without --fail-on-regression, whose verdict "
                      "it changes; add --fail-on-regression, or leave it out.", code="bad_option")
    from armbench.benchmark.run import record_path, run_suite
    from armbench.cli.compose import compose
    from armbench.cli.envelope import finish
    from armbench.cli.live import mode_for
    from armbench.cli.output import new_id

    a = compose(access="run", live=mode_for(sys.stderr, quiet))
    drive = driver == "local"
    live = a.live
    assert live is not None

    def new_run_id() -> str:
        run = new_id("r")
        if drive:  # without a driver here there is nothing to watch: the workers show theirs
            live.watch(run)
        return run

    try:
        outcome = run_suite(engine=a.engine, checkout=a.checkout, config=a.config, suite=suite,
                            sandbox=sandbox, member_aliases=member_aliases, progress=a.progress,
                            new_run_id=new_run_id, isolation=a.sandbox, tools=a.tools,
                            fail_on_regression=fail_on_regression,
                            allow_inconclusive=allow_inconclusive, evidence=not no_evidence,
                            drive=drive, selection=selection(task, arm, repetitions),
                            fail_on_flagged=fail_on_flagged)
    finally:
        live.stop()
    if not drive:
        emit_data("started", {"run": outcome.run, "ledger": a.store.path})
        return
    finish(outcome, record_path(a.checkout, a.config, outcome.run))


register_audit(app)
register_publish(app)
register_try(app)
register_task(app)
register_schema(app)
register_review(app)
register_judge(app)
register_workflow(app)
register_dashboard(app)
register_work(app)


def command_for(argv: list[str]) -> Command:
    """The click command that runs `armbench <argv>`: a group of the one command or command
    group `argv` names, where it names one (typer reads every command's signature to build its
    options on each start, about 30 ms for all of them, and a command needs only its own), else
    the whole app (no command, an option first, a name it does not know: its help and its error
    list every command). Both parse and print alike for that command (tests/unit/test_command_for.py)."""
    name = argv[0] if argv else ""
    commands = [c for c in app.registered_commands if c.callback is not None
                and (c.name or typer.main.get_command_name(c.callback.__name__)) == name]
    groups = [g for g in app.registered_groups
              if (g.name or (g.typer_instance.info.name if g.typer_instance else None)) == name]
    if not commands and not groups:
        return typer.main.get_command(app)
    narrow = typer.Typer(**_APP)  # type: ignore[arg-type]
    narrow.registered_commands, narrow.registered_groups = commands, groups
    return typer.main.get_group(narrow)


def main() -> None:
    """Console entry point: the command, then a fast exit (`cli.output.exit_now`)."""
    try:
        command_for(sys.argv[1:])()
    except SystemExit as done:
        exit_now(done.code)
    exit_now(0)
