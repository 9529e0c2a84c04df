"""`armbench dashboard`: the runs, their tables and pairs, and each suite's history, in a browser."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.output import progress

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add `dashboard` to the app."""
    app.command("dashboard")(guarded(dashboard))


def dashboard(
    port: Annotated[int, typer.Option(help="The port on 127.0.0.1 (0: any free port).")] = 8700,
    open_browser: Annotated[bool, typer.Option(
        "--open", help="Also open the dashboard in this machine's web browser.")] = False,
    export: Annotated[Path | None, typer.Option(
        help="Write the pages as static files into this folder instead of serving them.")] = None,
    published: Annotated[bool, typer.Option(
        help="Also show the records published on the reports branch (fetched).")] = True,
) -> None:
    """Serve a read-only dashboard of this checkout's runs and the team's published records on
    127.0.0.1, or write it as static files (--export) for a CI artifact."""
    from armbench.benchmark.dashboard.pages import CSP, Site
    from armbench.benchmark.dashboard.site import Board
    from armbench.benchmark.records.published import branch_reader
    from armbench.cli.compose import compose

    a = compose(access="read")
    from armbench.edge.evidence import EvidenceStore

    board = Board(a.store, branch_reader(a.checkout, a.config) if published else None,
                  EvidenceStore(a.checkout.evidence_dir) if export is None else None)
    board.refresh_published()
    if board.published_problem:
        progress(f"The reports branch could not be read ({board.published_problem}): showing "
                 "this checkout's runs only.")
    site = Site(board)
    if export is not None:
        counts = site.export(export, progress)
        progress(f"Wrote the dashboard to {export}: open {export / 'index.html'} in a browser.")
        emit_data("dashboard", {"export": str(export), **counts})
        return
    from armbench.edge.webserver import serve

    def ready(url: str) -> None:
        progress(f"Serving the dashboard at {url} (read-only; Ctrl-C stops it).")
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    serve(site.respond, port=port, csp=CSP, ready=ready)
    print("Stopped.", file=sys.stderr)
