"""`armbench publish`: deliver the pending records by hand and say what was delivered."""

from __future__ import annotations

import msgspec
import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.output import clock, progress

__all__ = ["publish", "register"]


def register(app: typer.Typer) -> None:
    """Add `publish` to the app."""
    app.command("publish")(guarded(publish))


def publish() -> None:
    """Publish the records still pending to the armbench-reports branch; exit 1 if some stay."""
    from armbench.benchmark.records.publish import publish_pending
    from armbench.cli.compose import compose
    from armbench.edge.reports import record_path

    a = compose()
    got = publish_pending(store=a.store, checkout=a.checkout, config=a.config, now=clock())
    where = f"{got.branch} of {got.destination}"
    if not got.delivered and not got.pending:
        progress(f"No record is pending: everything is on {where}.")
    commit = (got.commit or "")[:12]
    for run in got.delivered:
        progress(f"Published {run}: {record_path(run)} on {where} (commit {commit}).")
    if got.pending:
        progress(f"Still pending: {', '.join(got.pending)}. {got.error}.")
    emit_data("publish", msgspec.to_builtins(got))
    raise typer.Exit(code=1 if got.pending else 0)
