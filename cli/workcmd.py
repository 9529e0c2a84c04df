"""`armbench work` (one worker of a run shared by many drivers), `armbench ledger copy` and
`armbench ledger key --id`."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded

# Each verb imports what it uses when it runs (docs/architecture.md): `work` the engine and the
# host, `ledger copy` the stores it copies between.

__all__ = ["register_work"]


def register_work(app: typer.Typer) -> None:
    """Add `work` and the `ledger` group to the app."""
    app.command("work")(guarded(work))
    ledger = typer.Typer(name="ledger", no_args_is_help=True,
                         help="The ledger itself: move it between SQLite and PostgreSQL, name "
                              "its key, give armbench's PostgreSQL role only what it needs, and "
                              "set a tampered run aside.")
    ledger.command("copy")(guarded(copy))
    ledger.command("key")(guarded(key))
    ledger.command("grant")(guarded(grant))
    ledger.command("quarantine")(guarded(quarantine))
    app.add_typer(ledger)


def work(run: Annotated[str, typer.Argument(help="The run id (armbench runs lists them).")],
         sandbox: Annotated[bool, typer.Option(
             help="Declare this machine a sandbox, as for run.")] = False,
         lanes: Annotated[int, typer.Option(
             min=1, help="Steps this worker runs at once.")] = 1,
         quiet: Annotated[bool, typer.Option(
             help="No progress while the worker works (the envelope still prints).")]
         = False) -> None:
    """Join a running run from any machine that shares its ledger: lease its trials until none
    is left, then exit 0 (the run's record is written by whichever worker reports it).

    While it works, stderr shows the whole run's progress (every worker's trials) as `run`'s
    does: a live block on a terminal, a plain line every few seconds elsewhere."""
    from armbench.benchmark.run import work_run
    from armbench.cli.compose import compose
    from armbench.cli.live import mode_for

    a = compose(access="run", live=mode_for(sys.stderr, quiet))
    name = f"work-{os.uname().nodename}-{os.getpid()}"
    assert a.live is not None
    a.live.watch(run)
    try:
        done = work_run(engine=a.engine, config=a.config, run=run, sandbox=sandbox, lanes=lanes,
                        progress=a.progress, isolation=a.sandbox, tools=a.tools, name=name)
    finally:
        a.live.stop()
    print(f"Run {run} ended {done.state}; worker {name} has nothing left to do.",
          file=sys.stderr)
    emit_data("worked", {"run": done.run, "state": done.state, "driver": done.driver})


def copy(source: Annotated[str, typer.Argument(
             help="The ledger to copy: a SQLite file or a postgresql:// URL.")],
         target: Annotated[str, typer.Argument(
             help="Where to copy it: a SQLite file or a postgresql:// URL (empty).")]) -> None:
    """Copy every run of a ledger (events, chain, seal and snapshots) to another store; `armbench
    verify` passes on the copy with the same ledger key, and every machine that writes the copy
    needs that key (`armbench ledger key --id` names it)."""
    from armbench.ledger.copy import copy_ledger

    copied = copy_ledger(source, target)
    print(f"Copied {copied.runs} run(s), {copied.events} events, to {copied.target}. It is "
          "chained with the same ledger key: every machine that writes it needs that key "
          "(`armbench ledger key --id` prints its id).", file=sys.stderr)
    emit_data("copied", {"runs": copied.runs, "events": copied.events,
                         "from": copied.source, "to": copied.target})


def grant(url: Annotated[str, typer.Argument(
              help="The PostgreSQL ledger, as its owner: a postgresql:// URL whose user may "
                   "create its tables.")],
          role: Annotated[str, typer.Argument(
              help="The role armbench runs as (made beforehand: CREATE ROLE ... LOGIN "
                   "NOSUPERUSER).")]) -> None:
    """Make a PostgreSQL ledger's tables as their owner and let ROLE only select and insert
    rows: a trigger refuses every update and delete of the events and the seal, for every role.
    Run it once per database, then point armbench at the ledger as ROLE."""
    from armbench.ledger.pgaccess import grant_writer

    shown = grant_writer(url, role)
    print(f"The ledger {shown} is owned by its user; {role} may select and insert only.",
          file=sys.stderr)
    emit_data("granted", {"ledger": shown, "role": role})


def quarantine(run: Annotated[str, typer.Argument(
        help="The tampered run (`armbench runs` lists it as tampered).")]) -> None:
    """Set a tampered run aside: its chain is checked once more, and when it breaks, the run is
    marked set aside (an entry MAC'd with the ledger key), after which no command folds it and
    listings show it as quarantined. Nothing is deleted: its rows stay in the ledger, and
    `armbench verify RUN` still reads them. A run whose chain holds is refused."""
    from armbench.cli.compose import compose
    from armbench.cli.output import clock
    from armbench.ledger.errors import Refusal, RunQuarantined, RunTampered, UnknownRun

    store = compose().store
    if not store.read_raw(run):
        raise UnknownRun(run)
    try:
        store.recheck(run)
    except RunQuarantined as already:
        print(f"Run {run} is already set aside ({already.reason}).", file=sys.stderr)
        entry = store.quarantined()[run]
    except RunTampered as tampered:
        entry = store.quarantine(run, reason=tampered.reason, position=tampered.position,
                                 at=clock().isoformat())
        print(f"Run {run} is set aside: its event {entry.position}: {entry.reason}. Its rows stay "
              "in the ledger; no command folds it any more.", file=sys.stderr)
    else:
        raise Refusal(f"Run {run}'s chain holds (armbench verify {run} checks the rest), so there "
                      "is nothing to set aside: quarantine is for a run whose log was forged or "
                      "damaged.", code="run_intact")
    emit_data("quarantined", {"run": run, "event": entry.position, "reason": entry.reason,
                              "at": entry.at})


def key(show_id: Annotated[bool, typer.Option(
        "--id", help="Print the ledger key's id (a fingerprint); the key itself is never "
                     "printed.")] = False) -> None:
    """Name this machine's ledger key by its id, to compare with the id a ledger is chained
    with (a `ledger_key_mismatch` names both). Reads the key; never makes one."""
    from armbench.edge.ledgerkey import key_file, load_key
    from armbench.ledger.errors import Refusal

    if not show_id:
        raise Refusal("armbench never prints the ledger key; `armbench ledger key --id` prints "
                      "its id.", code="invalid_inputs")
    path = key_file()
    found = load_key(path, create=False)
    if found is None:
        raise Refusal(f"There is no ledger key at {path}. armbench makes one when a command "
                      "first writes a ledger that has none; to write a ledger that has one, "
                      "copy its key there (or set ARMBENCH_HOME to the folder that holds it).",
                      code="ledger_key_missing")
    print(f"The ledger key at {path} has id {found.id}.", file=sys.stderr)
    emit_data("key", {"id": found.id, "file": str(path)})
