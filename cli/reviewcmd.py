"""`armbench review`: validate every team file of every namespace, for pre-commit and CI (a thin adapter)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.output import progress

if TYPE_CHECKING:
    from armbench.benchmark.team.review import Finding

__all__ = ["register", "render_finding"]


def register(app: typer.Typer) -> None:
    """Add `armbench review` to the app."""
    app.command("review")(guarded(review_))


def render_finding(finding: Finding) -> str:
    """`fail file:line: message`, or `warn file: message` without a line."""
    where = finding.file if finding.line is None else f"{finding.file}:{finding.line}"
    return f"{finding.severity} {where}: {finding.message}"


def review_(
    branch: Annotated[str | None, typer.Option(
        help="Review this branch, tag or commit of the team repo instead of its working tree.")] = None,
) -> None:
    """Validate the team repo's files as pull does, for every namespace: suites, tasks, aliases, tools.

    Runs in a checkout of the team repo and needs no `armbench init`. Without --branch it reads the
    working tree, uncommitted edits included. Each problem is printed on stderr as
    `fail <file>:<line>: ...` (or `warn ...`); stdout carries
    {"data":{"review":{"findings":[{severity, code, file, line, message}], "ok", "revision"}}}.
    Exits 1 when any finding is a fail, 0 otherwise, and 2 outside a git repo or when the ref
    does not resolve.
    """
    from armbench.benchmark.team.review import review

    result = review(Path.cwd(), branch=branch)
    for finding in result.findings:
        progress(render_finding(finding))
    fails = sum(f.severity == "fail" for f in result.findings)
    what = f"{branch} ({result.revision[:7]})" if result.revision else "the working tree"
    progress(f"Reviewed {what}: {fails} fail and {len(result.findings) - fails} warn findings.")
    emit_data("review", msgspec.to_builtins(result))
    if not result.ok:
        raise typer.Exit(code=1)
