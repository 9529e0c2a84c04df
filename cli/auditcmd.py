"""The ledger's commands: runs, log, explain, show, replay, verify, resume, export, gc."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.output import clock
from armbench.projections.text import printable

if TYPE_CHECKING:
    from armbench.cli.compose import App
    from armbench.ledger.events import RecordQueued

__all__ = ["register"]

RunArg = Annotated[str, typer.Argument(help="The run id (armbench runs lists them).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="One JSON object a line on stdout.")]


def register(app: typer.Typer) -> None:
    """Add the ledger's commands to the app."""
    app.command("runs")(guarded(runs))
    app.command("log")(guarded(log))
    app.command("explain")(guarded(explain))
    app.command("show")(guarded(show))
    app.command("replay")(guarded(replay))
    app.command("verify")(guarded(verify))
    app.command("resume")(guarded(resume))
    app.command("export")(guarded(export))
    app.command("gc")(guarded(gc))


def runs(json: JsonOpt = False) -> None:
    """List the runs in the ledger: id, suite, state, start, trials reported of planned."""
    from armbench.benchmark.records.runlist import list_runs
    from armbench.cli.compose import compose

    rows = list_runs(compose(access="read").store)
    if json:
        for row in rows:
            print(msgspec.json.encode(row).decode())
        return
    print("| Run | Suite | State | Started | Trials reported |\n| --- | --- | --- | --- | --- |")
    for r in rows:
        if r.problem is not None:  # tampered or quarantined: nothing of it is read
            print(f"| {r.run} | - | {r.state}: {printable(r.problem)} | - | - |")
            continue
        skipped = f" ({r.not_run} not run)" if r.not_run else ""
        print(f"| {r.run} | {r.suite or '-'} | {r.state} | {r.started_at} "
              f"| {r.reported}/{r.planned}{skipped} |")


def log(run: RunArg, json: JsonOpt = False) -> None:
    """Print a run's events in order."""
    from armbench.benchmark.records.runlist import run_events
    from armbench.cli.compose import compose
    from armbench.projections.runs import describe

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
    from armbench.benchmark.records import audit
    from armbench.cli.compose import compose
    from armbench.edge.evidence import EvidenceStore
    from armbench.projections.text import plain

    a = compose(access="read")
    got = audit.explain_trial(a.store, run, trial, EvidenceStore(a.checkout.evidence_dir))
    print(f"{got.subject}: {got.result}\nRule: {plain(got.rule)}", file=sys.stderr)
    if got.output:
        print(f"The {got.output_of}'s last lines (armbench show {run} {got.subject} "
              f"--{got.output_of} prints all of it):", file=sys.stderr)
        for line in got.output:
            print(f"  | {plain(line)}", file=sys.stderr)
    if got.evidence:
        print(got.evidence, file=sys.stderr)
    print("Events:", file=sys.stderr)
    for line in got.events:
        print(f"  {line}", file=sys.stderr)
    if got.labels:
        print("Labels:", file=sys.stderr)
        for line in got.labels:
            print(f"  {plain(line)}", file=sys.stderr)
    if got.flags:
        print("Flagged (a reason to look; the check decided the result):", file=sys.stderr)
        for line in got.flags:
            print(f"  {plain(line)}", file=sys.stderr)
    emit_data("explain", msgspec.to_builtins(got))


def show(run: RunArg, trial: Annotated[str, typer.Argument(
        help="r<repetition>.<task>.<arm>, a trial's step id, or baseline:<task>.")],
         check: Annotated[bool, typer.Option("--check", help="The check's output.")] = False,
         diff: Annotated[bool, typer.Option(
             "--diff", help="The trial's diff from its starting commit.")] = False,
         transcript: Annotated[bool, typer.Option(
             "--transcript", help="The tool's transcript, as turns.")] = False,
         setup: Annotated[bool, typer.Option(
             "--setup", help="Setup's output (kept when setup failed).")] = False,
         judge: Annotated[bool, typer.Option(
             "--judge", help="Each judge's prompt and answer.")] = False,
         json: Annotated[bool, typer.Option(
             "--json", help="The piece as kept (a transcript's raw lines), on stdout.")] = False,
         ) -> None:
    """Print one piece of a trial's kept evidence in full: its check's output, its diff, its
    transcript, setup's output or its judges' prompts and answers (kept on this machine only)."""
    from armbench.benchmark.records import audit
    from armbench.cli.compose import compose
    from armbench.edge.evidence import EvidenceStore
    from armbench.ledger.errors import Refusal

    asked = [k for k, on in (("check", check), ("diff", diff), ("transcript", transcript),
                             ("setup", setup), ("judge", judge)) if on]
    if len(asked) != 1:
        raise Refusal("armbench show prints one piece of a trial's evidence: name one of "
                      "--check, --diff, --transcript, --setup or --judge (found "
                      f"{', '.join('--' + k for k in asked) or 'none'}).", code="bad_option")
    a = compose(access="read")
    got = audit.show_evidence(a.store, run, trial, asked[0], EvidenceStore(a.checkout.evidence_dir))
    if got.note:
        print(got.note, file=sys.stderr)
    elif not json:
        sys.stdout.write(got.text)
        sys.stdout.flush()
        if got.cut:
            print(f"(cut: {got.cut})", file=sys.stderr)
    if json:
        emit_data("show", msgspec.to_builtins(got))


def replay(run: RunArg, write: Annotated[bool, typer.Option(
        help="Replace the stored record with the rebuilt one, after showing the difference.")]
           = False, rescore: Annotated[bool, typer.Option(
        help="Show the run's tables with the scorer files last pulled, never written: a scorer "
             "whose rubric or labels changed judges the run's trials again from their kept diff "
             "and transcript (no agent runs again); one whose scores changed maps the labels as "
             "judged to the new scores.")] = False,
           sandbox: Annotated[bool, typer.Option(
        help="Declare this machine a sandbox, as for run (needed when --rescore judges "
             "again).")] = False) -> None:
    """Rebuild a run's tables from its events with today's code; show what changed."""
    from armbench.benchmark.records import audit
    from armbench.benchmark.run import record_path
    from armbench.benchmark.team.planning import rescore_inputs
    from armbench.cli.compose import compose

    a = compose(access="write" if write else "read")
    scores, again = None, None
    if rescore:
        scores, again = rescore_inputs(a.checkout, audit.plan_of(a.store, run))
        if again and not write:
            from armbench.benchmark.rescore import rescore_run

            judging = compose(access="run")
            rescore_run(engine=judging.engine, run=run, scorers=again, sandbox=sandbox,
                        isolation=judging.sandbox, tools=judging.tools(run),
                        progress=judging.progress)

    def queue() -> RecordQueued | None:  # the reports repo is read only when a record is new
        from armbench.benchmark.records.publish import queued

        return queued(a.checkout, a.config, run, clock())

    got = audit.replay_run(a.store, run, a.checkout.runs_dir(a.config), write=write, now=clock,
                           scores=scores, rejudge=again, queue=queue)
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

    from armbench.benchmark.records import audit
    from armbench.cli.compose import compose

    a = compose(access="read")
    from armbench.edge.evidence import EvidenceStore

    problems = audit.verify_run(a.store, run, a.checkout.runs_dir(a.config), key_file=a.key_file,
                                published=lambda run: _published(a, run),
                                evidence=EvidenceStore(a.checkout.evidence_dir))
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
    from armbench.benchmark.records.published import published_record

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
    from armbench.benchmark.run import record_path, resume_run
    from armbench.cli.compose import compose
    from armbench.cli.envelope import finish
    from armbench.cli.live import mode_for

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
        help="The SQLite file to write (made if missing).")] = Path("armbench.db"),
           with_evidence: Annotated[bool, typer.Option(
               "--with-evidence",
               help="Also write the kept evidence (check output, diffs, transcripts, judges' "
                    "prompts and answers) as table evidence: it stays private, so share such a "
                    "file as you would the checkout.")] = False) -> None:
    """Write a run's arms, tasks and trials as SQLite tables, for ad-hoc SQL."""
    from armbench.benchmark.records.export import export_run
    from armbench.cli.compose import compose
    from armbench.edge.evidence import EvidenceStore

    a = compose(access="read")
    counts = export_run(a.store, run, db,
                        evidence=EvidenceStore(a.checkout.evidence_dir) if with_evidence else None)
    also = f", {counts['evidence']} pieces of evidence (table evidence)" if with_evidence else ""
    print(f"Wrote run {run} to {db}: {counts['trials']} trials, {counts['arms']} arms, "
          f"{counts['tasks']} tasks (tables runs, arms, tasks, trials){also}.", file=sys.stderr)
    emit_data("export", {"run": run, "db": str(db), **counts})


def gc(keep: Annotated[int | None, typer.Option(
        help="Keep the evidence of the newest N runs; remove the rest.")] = None,
       older_than: Annotated[str | None, typer.Option(
           help="Remove the evidence of runs started longer ago than this (30d, 12h, 90m).")]
       = None,
       prepared: Annotated[bool, typer.Option(
           "--prepared", help="Also remove the prepared trees `workflows.setup_cache` keeps "
           "between runs (~/.armbench/cache/prepared; those a run is using stay); alone, only "
           "those.")] = False) -> None:
    """Remove kept evidence (check output, diffs, transcripts) of finished runs; the ledger's
    events stay, and explain and show say the evidence was collected. With --prepared, the
    prepared trees kept between runs too.

    Also remove the unpacked image roots under ~/.armbench/cache/rootfs that no run it keeps
    (nor one under way) uses and that no armbench process has used for a day; such a root is
    unpacked again from its image at its next use."""
    data: dict[str, object] = {}
    if prepared:
        from armbench.edge.prepared import cache_dir, clear_cache

        trees, freed, busy = clear_cache(cache_dir())
        in_use = f"; {busy} in use stay" if busy else ""
        print(f"Removed {trees} prepared tree{'' if trees == 1 else 's'} kept between runs, "
              f"freeing {_size(freed)}{in_use}.", file=sys.stderr)
        data = {"preparedTrees": trees, "preparedFreedBytes": freed, "preparedInUse": busy}
        if keep is None and older_than is None:
            emit_data("gc", data)
            return
    from armbench.benchmark.records.evidence import collect
    from armbench.cli.compose import compose
    from armbench.edge.environment import cache_dir as roots_dir
    from armbench.edge.evidence import EvidenceStore

    a = compose(access="read")
    got = collect(a.store, EvidenceStore(a.checkout.evidence_dir), keep=keep,
                  older_than=older_than, now=clock())
    print(f"Collected the evidence of {_runs(len(got.runs))}, freeing {_size(got.freed)}; kept "
          f"that of {_runs(len(got.kept))}.", file=sys.stderr)
    roots = f"{len(got.roots)} unpacked image root{'' if len(got.roots) == 1 else 's'}"
    print(f"Removed {roots} no kept run uses (unused for a day) from {roots_dir()}, freeing "
          f"{_size(got.roots_freed)}.", file=sys.stderr)
    emit_data("gc", {"runs": got.runs, "freedBytes": got.freed, "kept": got.kept,
                     "roots": got.roots, "rootsFreedBytes": got.roots_freed, **data})


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    return f"{n / 1024:.1f} KiB" if n < 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"
