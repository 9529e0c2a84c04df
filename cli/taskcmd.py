"""`armbench task new` and `armbench task harvest`: tasks from the team's own history (thin adapters)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from armbench.cli.envelope import emit_data
from armbench.cli.guard import guarded
from armbench.cli.output import progress
from armbench.cli.trycmd import REPEAT_MAX
from armbench.ledger.errors import ArmbenchError, Refusal

if TYPE_CHECKING:
    from armbench.benchmark.harvest.trydraft import DraftSuite
    from armbench.edge.sandbox import Sandbox

__all__ = ["register_task"]


class HarvestStopped(ArmbenchError):
    """The harvest was interrupted; what it tried is kept (exit 130)."""

    code = "harvest_stopped"
    exit_code = 130


class TaskDraftInvalid(ArmbenchError):
    """The drafted task did not pass its try (exit 1); the draft and the try were printed."""

    code = "task_draft_invalid"


def register_task(app: typer.Typer) -> None:
    """Add `armbench task new` and `armbench task harvest` to the app."""
    task = typer.Typer(name="task", no_args_is_help=True, add_completion=False,
                       help="Draft tasks from the team's own history: fix commits and their tests.")
    task.command("new")(guarded(new))
    task.command("harvest")(guarded(harvest))
    app.add_typer(task)


Suite = Annotated[str | None, typer.Option(
    help="Try the draft in this pulled suite (its repo and setup); without it, in a one-arm suite "
         "for this checkout, without setup.")]
Repeat = Annotated[int, typer.Option(
    help=f"Run the check this many times at each commit (1 to {REPEAT_MAX}), to catch a flaky test.")]
Issues = Annotated[Path | None, typer.Option(
    help="A folder of the team's issue texts, <number>.md or .txt: an issue the commit message "
         "names (#12) joins the prompt. armbench asks no issue tracker.")]


def new(
    from_commit: Annotated[str | None, typer.Option(
        "--from-commit", metavar="SHA", help="The commit that fixed something and added or changed "
        "the test that proves it.")] = None,
    from_session: Annotated[str | None, typer.Option(
        "--from-session", metavar="PLATFORM:ID", help="A Claude Code (claude-code:<id>) or Codex "
        "(codex:<id>) session on this machine that started on a clean tree of this checkout and "
        "committed its work.")] = None,
    suite: Suite = None,
    out: Annotated[Path | None, typer.Option(
        help="Where to write the task file; default <id>.yaml in the current folder.")] = None,
    repeat: Repeat = 1,
    issues: Issues = None,
    prompt_tool: Annotated[str | None, typer.Option(
        metavar="TOOL", help="With --from-commit: ask this agent CLI (claude, codex, opencode or "
        "gemini, with your logins) to write the prompt of a valid draft, in armbench's sandbox, from "
        "the commit message, the names of the files the fix changed and the failing test's output. "
        "That text goes to the tool's model provider; nothing else leaves the machine.")] = None,
    strength: Annotated[bool, typer.Option(
        "--strength", help="With --from-commit: also measure the draft's check strength from "
        "mutants of its fix, as armbench try --strength does (at most 20).")] = False,
) -> None:
    """Draft a task from a fix commit or an agent session, try it, and write it only when valid.

    From a commit: startingCommit is its first parent and source.fix the commit; the test files it
    added or changed are check.add under protect, and check.run runs exactly those tests the way
    the project does (pytest or unittest, vitest or jest, go test, cargo test). The prompt is
    drafted from the commit message as a request, never with a line the fix added. From a session:
    the prompt is the member's first request, startingCommit the commit the session started at,
    source.fix the last commit it made, and source names the platform and session. Nothing leaves
    the machine. Exit 0 with {"data":{"task":{...,"file"}}}; exit 1 (task_draft_invalid) with the
    try and the draft on stderr when the task is not valid; exit 2 (not_draftable) when the
    commit or session cannot be drafted, with the cause and what to write by hand.
    """
    from armbench.benchmark.harvest.fromcommit import task_from_commit
    from armbench.benchmark.harvest.fromsession import task_from_session
    from armbench.suites.drafting import NotDraftable

    if (from_commit is None) == (from_session is None):
        raise Refusal("Give exactly one of --from-commit SHA and --from-session PLATFORM:ID.",
                      code="invalid_inputs")
    if prompt_tool is not None and from_commit is None:
        raise Refusal("--prompt-tool writes a commit's prompt; a session's prompt is its own first "
                      "request. Leave --prompt-tool out with --from-session.", code="invalid_inputs")
    root, sandbox, draft_suite = _setting(suite, repeat)
    try:
        if from_commit is not None:
            what = f"Commit {from_commit}"
            drafted = task_from_commit(root, from_commit, suite=draft_suite, sandbox=sandbox, out=out,
                                       repeat=repeat, issues_dir=issues, progress=progress,
                                       prompt_tool=prompt_tool, mutants=20 if strength else None)
        else:
            what = f"Session {from_session}"
            drafted = task_from_session(root, str(from_session), suite=draft_suite, sandbox=sandbox,
                                        out=out, repeat=repeat, progress=progress)
    except NotDraftable as why:
        raise Refusal(f"{what} cannot be drafted as a task: {why.message}", code="not_draftable") from None
    if not drafted.ok:
        print(f"Try: {drafted.message}\nThe draft, not written:\n{drafted.text}", file=sys.stderr,
              end="")
        raise TaskDraftInvalid(drafted.message)
    progress(drafted.message)
    progress(f"Wrote {drafted.file}. Read its prompt, then move it to benchmarks/<suite>/tasks/ "
             "in the team repo.")
    emit_data("task", msgspec.to_builtins(drafted))


def harvest(
    out: Annotated[Path, typer.Option(help="The folder valid tasks are written to, one file each, "
                                      "with the state that makes a harvest resumable.")],
    since: Annotated[str | None, typer.Option(help="Walk the commits after REV up to HEAD.",
                                              metavar="REV")] = None,
    range_: Annotated[str | None, typer.Option("--range", metavar="A..B",
                                               help="Walk the commits of A..B.")] = None,
    paths: Annotated[list[str] | None, typer.Option(
        "--paths", metavar="GLOB", help="Only commits changing a path these git globs match "
        "(repeatable).")] = None,
    limit: Annotated[int | None, typer.Option(
        help="Try at most this many new candidates (a later harvest goes on from there).")] = None,
    lanes: Annotated[int, typer.Option(help="How many candidates are tried at once (1 to 32).")] = 2,
    suite: Suite = None,
    repeat: Repeat = 1,
    issues: Issues = None,
    strength: Annotated[bool, typer.Option(
        "--strength", help="Also measure each valid draft's check strength from mutants of its fix "
        "(as armbench try --strength does), shown in the table.")] = False,
    mutants: Annotated[int, typer.Option(help="With --strength, at most this many mutants a draft "
                                         "(1 to 200).")] = 20,
    min_strength: Annotated[float | None, typer.Option(
        help="Keep only valid drafts whose check's strength is at least this (0 to 1; implies "
        "--strength); the rest are reported as `weak check` with their surviving mutants.")] = None,
) -> None:
    """Walk the first-parent history, try a task from every commit that changes both source and
    tests, and write the valid ones into --out.

    Prints a table of every candidate on stderr: commit, subject, verdict (valid, or why not:
    passes before, fails after, could not run, flaky, not drafted) and time. Candidates already
    tried (kept in <out>/.armbench-harvest.json) are not tried again. Exit 0 with
    {"data":{"harvest":{"candidates":[...]}}}.
    """
    from armbench.benchmark.harvest.walk import HarvestOptions, harvest_history, render_table

    if since is not None and range_ is not None:
        raise Refusal("Give --since REV or --range A..B, not both.", code="invalid_inputs")
    if range_ is not None and ".." not in range_:
        raise Refusal(f"--range expects A..B, found {range_!r}.", code="invalid_inputs")
    if limit is not None and limit < 1:
        raise Refusal(f"--limit must be a whole number of 1 or more, not {limit}.", code="invalid_inputs")
    if not 1 <= lanes <= 32:
        raise Refusal(f"--lanes must be a whole number from 1 to 32, not {lanes}.", code="invalid_inputs")
    if not 1 <= mutants <= 200:
        raise Refusal(f"--mutants must be a whole number from 1 to 200, not {mutants}.",
                      code="invalid_inputs")
    if min_strength is not None and not 0 <= min_strength <= 1:
        raise Refusal(f"--min-strength must be a number from 0 to 1 (a share of mutants killed), not "
                      f"{min_strength}.", code="invalid_inputs")
    root, sandbox, draft_suite = _setting(suite, repeat)
    options = HarvestOptions(since=since, range_=range_, paths=tuple(paths or ()), limit=limit,
                             lanes=lanes, repeat=repeat, issues_dir=issues,
                             mutants=mutants if strength or min_strength is not None else None,
                             min_strength=min_strength)
    try:
        rows = harvest_history(root, out, options, suite=draft_suite, sandbox=sandbox, progress=progress)
    except KeyboardInterrupt:
        raise HarvestStopped(f"Stopped: every candidate tried so far is kept in {out}/"
                             ".armbench-harvest.json. Run the same command again to go on.") from None
    print(render_table(rows), file=sys.stderr, end="")
    emit_data("harvest", {"out": str(out), "candidates": msgspec.to_builtins(rows)})


def _setting(suite: str | None, repeat: int) -> tuple[Path, Sandbox, DraftSuite]:
    """The checkout's root, the sandbox checks run in (probed), and the suite drafts are tried in."""
    from armbench.benchmark.harvest.suite import checkout_suite, pulled_suite
    from armbench.cli.compose import try_sandbox
    from armbench.edge.config import find_checkout
    from armbench.edge.history import resolve_commit
    from armbench.edge.sandbox import probe

    if not 1 <= repeat <= REPEAT_MAX:
        raise Refusal(f"--repeat must be a whole number from 1 to {REPEAT_MAX}, not {repeat}.",
                      code="invalid_inputs")
    checkout = find_checkout(Path.cwd())
    resolve_commit(checkout.root, "HEAD")
    sandbox = try_sandbox(Path.cwd())
    probe(sandbox)
    draft_suite = pulled_suite(checkout, suite) if suite is not None else checkout_suite(checkout.root)
    return checkout.root, sandbox, draft_suite
