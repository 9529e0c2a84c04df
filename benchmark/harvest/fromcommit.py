"""`armbench task new --from-commit`: draft a task from one fix commit, try it, keep it if valid."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import msgspec

from armbench.benchmark.harvest.draft import draft_from_commit
from armbench.benchmark.harvest.probe import sandbox_imports
from armbench.benchmark.harvest.prompttool import ask_prompt_tool
from armbench.benchmark.harvest.trydraft import DraftSuite, try_draft
from armbench.benchmark.tryout.strength import Strength
from armbench.benchmark.tryout.task import TryResult
from armbench.edge.history import added_lines, commit_facts, resolve_commit
from armbench.edge.sandbox import Sandbox
from armbench.ledger.errors import Refusal
from armbench.suites.draftfile import TaskDraft, render_task
from armbench.suites.drafting import is_test_path
from armbench.suites.draftprompt import prompt_tool_request

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
    strength: Strength | None = None
    """With `--strength`, what the draft's check made of its fix's mutants."""


def task_from_commit(checkout: Path, rev: str, *, suite: DraftSuite, sandbox: Sandbox, out: Path | None,
                     repeat: int, issues_dir: Path | None, progress: Callable[[str], None],
                     prompt_tool: str | None = None, mutants: int | None = None) -> Drafted:
    """Draft the task of commit `rev`, try it, and write it to `out` (default `<id>.yaml` here) only
    when valid; with `prompt_tool`, that agent CLI writes the prompt of a valid draft. Raises
    NotDraftable when the commit cannot be drafted."""
    facts = commit_facts(checkout, resolve_commit(checkout, rev))
    draft = draft_from_commit(checkout, facts, pytest_importable=sandbox_imports(sandbox, "pytest"),
                              issues_dir=issues_dir)
    progress(f"Drafted task {draft.task_id} from {facts.sha[:7]}: {draft.run}")
    result = try_draft(draft, suite, checkout=checkout, sandbox=sandbox, repeat=repeat, progress=progress,
                       mutants=mutants)
    if result.ok and prompt_tool is not None:
        added = added_lines(checkout, facts.parents[0], facts.sha)
        request = prompt_tool_request(facts.subject, facts.body, added, failing_output=result.failing_output,
                                      changed=[c.path for c in facts.changes if not is_test_path(c.path)])
        progress(f"Asking {prompt_tool} to write the prompt (it sees the commit message, the names of the "
                 "files the fix changed and the failing test's output; not the code).")
        draft = msgspec.structs.replace(draft, prompt=ask_prompt_tool(prompt_tool, request, added,
                                                                      sandbox=sandbox))
    return keep_if_valid(draft, result, out)


def keep_if_valid(draft: TaskDraft, result: TryResult, out: Path | None) -> Drafted:
    """Write the draft to `out` (default `<id>.yaml` here) when its try said valid; what happened."""
    text = render_task(draft)
    written = None
    if result.ok:
        target = out if out is not None else Path.cwd() / f"{draft.task_id}.yaml"
        if target.exists() and target.read_text(errors="replace") != text:
            raise Refusal(f"The task is valid, but {target} already exists with other content, and "
                          "armbench does not overwrite it. Pass --out with a new file, or move that "
                          "one away.", code="out_exists")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        written = str(target)
    return Drafted(task=draft.task_id, commit=draft.fix, text=text, ok=result.ok, row=result.row,
                   message=result.message, file=written, strength=result.strength)
