"""`armbench task new --from-commit`: draft a task from one fix commit, try it, keep it if valid."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from benchmark.harvest.draft import draft_from_commit
from benchmark.harvest.probe import sandbox_imports
from benchmark.harvest.trydraft import DraftSuite, try_draft
from benchmark.tryout.task import TryResult
from edge.history import commit_facts, resolve_commit
from edge.sandbox import Sandbox
from suites.draftfile import TaskDraft, render_task

__all__ = ["Drafted", "keep_if_valid", "task_from_commit"]


class Drafted(msgspec.Struct, frozen=True, kw_only=True):
    """A drafted task and what `try` said of it."""

    task: str
    """The task id (the file name without `.yaml`)."""
    commit: str
    """The fix commit, in full."""
    text: str
    """The task file's text."""
    ok: bool
    """The try's exit 0: the task is valid."""
    row: str
    """The try's row (`startup`, `old_bug`, `bad_fix`, `could_not_run`, `flaky`, `stopped`)."""
    message: str
    """The try's sentence."""
    file: str | None = None
    """Where the task was written; None when it was not valid."""


def task_from_commit(checkout: Path, rev: str, *, suite: DraftSuite, sandbox: Sandbox, out: Path | None,
                     repeat: int, issues_dir: Path | None, progress: Callable[[str], None]) -> Drafted:
    """Draft the task of commit `rev`, try it, and write it to `out` (default `<id>.yaml` here) only
    when valid. Raises NotDraftable when the commit cannot be drafted."""
    facts = commit_facts(checkout, resolve_commit(checkout, rev))
    draft = draft_from_commit(checkout, facts, pytest_importable=sandbox_imports(sandbox, "pytest"),
                              issues_dir=issues_dir)
    progress(f"Drafted task {draft.task_id} from {facts.sha[:7]}: {draft.run}")
    result = try_draft(draft, suite, checkout=checkout, sandbox=sandbox, repeat=repeat, progress=progress)
    return keep_if_valid(draft, result, out)


def keep_if_valid(draft: TaskDraft, result: TryResult, out: Path | None) -> Drafted:
    """Write the draft to `out` (default `<id>.yaml` here) when its try said valid; what happened."""
    text = render_task(draft)
    written = None
    if result.ok:
        target = out if out is not None else Path.cwd() / f"{draft.task_id}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written = str(target)
    return Drafted(task=draft.task_id, commit=draft.fix, text=text, ok=result.ok, row=result.row,
                   message=result.message, file=written)
