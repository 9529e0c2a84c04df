"""The ledger's commands: runs, log, explain, replay, verify, resume."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from cli.envelope import emit_data
from cli.guard import guarded
from cli.output import clock

if TYPE_CHECKING:
    from cli.compose import App
    from ledger.events import RecordQueued

__all__ = ["register"]

RunArg = Annotated[str, typer.Argument(help="The run id (armbench runs lists them).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON object a line on stdout.")]


def register(app: typer.Typer) -> None:
    """Add the ledger's commands to the app."""
    app.command("runs")(guarded(runs))
    app.command("log")(guarded(log))
    app.command("explain")(guarded(explain))
    app.command("replay")(guarded(replay))
    app.command("verify")(guarded(verify))
    app.command("resume")(guarded(resume))
    app.command("export")(guarded(export))


def runs(json: JsonOpt = False) -> None:
    """List the runs in the ledger: id, suite, state, start, trials reported of planned."""
    from benchmark.records.runlist import list_runs
    from cli.compose import compose

    rows = list_runs(compose(access="read").store)
    if json:
        for row in rows:
            print(msgspec.json.encode(row).decode())
        return
    print("| Run | Suite | State | Started | Trials reported |\n| --- | --- | --- | --- | --- |")
    for r in rows:
        skipped = f" ({r.not_run} not run)" if r.not_run else ""
        print(f"| {r.run} | {r.suite or '-'} | {r.state} | {r.started_at} "
              f"| {r.reported}/{r.planned}{skipped} |")


def log(run: RunArg, json: JsonOpt = False) -> None:
    """Print a run's events in order."""
    from benchmark.records.runlist import run_events
    from cli.compose import compose
    from projections.runs import describe

    store = compose(access="read").store
    run_events(store, run)
    for rec in store.read(run):
        if json:
            print(msgspec.json.encode({"version": rec.version,
                                       "event": rec.event}).decode())
        else:
            print(f"{rec.version:>5}  {describe(rec.event)}")


def explain(run: RunArg, trial: Annotated[str, typer.Argument(
        help="r<repetition>.<task>.<arm>, a trial's step id, or baseline:<task>.")]) -> None:
    """Why a trial (or a task's baseline) got its result: the events and the rule."""
    from benchmark.records import audit
    from cli.compose import compose
    from projections.text import plain

    got = audit.explain_trial(compose(access="read").store, run, trial)
    print(f"{got.subject}: {got.result}\nRule: {plain(got.rule)}\nEvents:", file=sys.stderr)
    for line in got.events:
        print(f"  {line}", file=sys.stderr)
    if got.labels:
        print("Labels:", file=sys.stderr)
        for line in got.labels:
            print(f"  {plain(line)}", file=sys.stderr)
    emit_data("explain", msgspec.to_builtins(got))


def replay(run: RunArg, write: Annotated[bool, typer.Option(
        help="Replace the stored record with the rebuilt one, after showing the difference.")]
           = False, rescore: Annotated[bool, typer.Option(
        help="Score the run's labels with the scorer files last pulled (labels and passed stay as "
             "judged); shows what moved, never writes.")] = False) -> None:
    """Rebuild a run's tables from its events with today's code; show what changed."""
    from benchmark.records import audit
    from benchmark.run import record_path
    from benchmark.team.planning import pulled_scores
    from cli.compose import compose

    a = compose(access="write" if write else "read")
    scores = pulled_scores(a.checkout, audit.plan_of(a.store, run)) if rescore else None
    def queue() -> RecordQueued | None:  # the reports repo is read only when a record is new
        from benchmark.records.publish import queued

        return queued(a.checkout, a.config, run, clock())

    got = audit.replay_run(a.store, run, a.checkout.runs_dir(a.config), write=write, now=clock,
                           scores=scores, queue=queue)
    print(got.text, file=sys.stderr, end="")
    if got.changes:
        print("Changed against the stored record:", file=sys.stderr)
        for line in got.changes:
            print(f"  {line}", file=sys.stderr)
    else:
        print("Nothing changed against the stored record.", file=sys.stderr)
    if got.written:
        print(f"Wrote {record_path(a.checkout, a.config, run)}"
              + (" and queued it for publication (`armbench publish` pushes it)."
                 if a.config.publish else "."), file=sys.stderr)
    emit_data("replay", msgspec.to_builtins(got))


def verify(run: RunArg) -> None:
    """Check a run's keyed hash chain, the lease rule, its record against its log and, once
    published, the published chain head against the ledger's; exit 1 on any problem."""

    from benchmark.records import audit
    from cli.compose import compose

    a = compose(access="read")
    problems = audit.verify_run(a.store, run, a.checkout.runs_dir(a.config), key_file=a.key_file,
                                published=lambda run: _published(a, run))
    for p in problems:
        print(f"verify: {p}", file=sys.stderr)
    head = a.store.head(run)
    chain = head.kind if head is not None else None
    if not problems:
        print(f"Run {run}: the log is intact and the record matches it. {_CHAIN_NOTE[chain]}",
              file=sys.stderr)
    emit_data("verify", {"run": run, "ok": not problems, "problems": problems, "chain": chain})
    raise typer.Exit(code=1 if problems else 0)


def _published(a: App, run: str) -> bytes | None:
    """The run's published record (reading it needs the reports repo: imported only then)."""
    from benchmark.records.published import published_record

    return published_record(a.checkout, a.config, run)


_CHAIN_NOTE = {
    "hmac-sha256": "Its chain is keyed with the ledger key (hmac-sha256).",
    "sha256": ("Its chain is unkeyed (sha256, written before ledger keys): it shows damage, "
               "not a rewrite by someone who can write the ledger."),
    None: "",
}


def resume(run: RunArg, sandbox: Annotated[bool, typer.Option(
        help="Declare this machine a sandbox, as for run.")] = False,
           quiet: Annotated[bool, typer.Option(
               help="No progress while the run works (the table and the envelope still "
                    "print).")] = False) -> None:
    """Finish a run whose driver stopped: nothing already reported runs again. Its progress
    shows as `run`'s does."""
    from benchmark.run import record_path, resume_run
    from cli.compose import compose
    from cli.envelope import finish
    from cli.live import mode_for

    a = compose(access="run", live=mode_for(sys.stderr, quiet))
    assert a.live is not None
    a.live.watch(run)
    try:
        outcome = resume_run(engine=a.engine, config=a.config, run=run, sandbox=sandbox,
                             progress=a.progress, isolation=a.sandbox, tools=a.tools)
    finally:
        a.live.stop()
    finish(outcome, record_path(a.checkout, a.config, run))


def export(run: RunArg, db: Annotated[Path, typer.Option(
        help="The SQLite file to write (made if missing).")] = Path("armbench.db")) -> None:
    """Write a run's arms, tasks and trials as SQLite tables, for ad-hoc SQL."""
    from benchmark.records.export import export_run
    from cli.compose import compose

    counts = export_run(compose(access="read").store, run, db)
    print(f"Wrote run {run} to {db}: {counts['trials']} trials, {counts['arms']} arms, "
          f"{counts['tasks']} tasks (tables runs, arms, tasks, trials).", file=sys.stderr)
    emit_data("export", {"run": run, "db": str(db), **counts})
