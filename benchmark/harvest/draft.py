"""A task drafted from one fix commit of the project's history (read through `edge.history`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from armbench.edge.history import CommitFacts, added_lines, changes_between, files_at, tree_paths
from armbench.suites.draftfile import TaskDraft
from armbench.suites.drafting import NotDraftable, ProjectFacts, draft_check, is_source_path, is_test_path
from armbench.suites.draftprompt import draft_prompt, issue_refs, slug
from armbench.suites.sessionfiles import SessionFacts

__all__ = ["Split", "draft_from_commit", "draft_from_session", "split_changes"]

_LOOKED_INTO = ("package.json",)


class Split:
    """A commit's changed paths: the tests it added or changed, and the source it changed."""

    def __init__(self, facts: CommitFacts) -> None:
        self.tests = [c.path for c in facts.changes if c.status != "D" and is_test_path(c.path)]
        self.source = [c.path for c in facts.changes if is_source_path(c.path)]
        self.beside = [c.path for c in facts.changes if not is_test_path(c.path)]

    @property
    def candidate(self) -> bool:
        """It changes both source and tests: a fix with the test that proves it."""
        return bool(self.tests and self.source)


def split_changes(facts: CommitFacts) -> Split:
    """The commit's tests and source."""
    return Split(facts)


def draft_from_commit(checkout: Path, facts: CommitFacts, *, pytest_importable: bool,
                      issues_dir: Path | None = None) -> TaskDraft:
    """The task a fix commit makes: start at its first parent, fix at it, its tests as the check.
    Raises NotDraftable naming why it cannot, and what to write by hand."""
    sha = facts.sha
    if not facts.parents:
        raise NotDraftable(f"Commit {sha[:7]} has no parent, so there is no state before the fix to "
                           "start a task from. Name a commit that fixed something on top of earlier work.")
    split = split_changes(facts)
    if not split.beside:
        raise NotDraftable(f"Commit {sha[:7]} changes nothing outside the tests, so there is "
                           "nothing for an agent to fix: its tests would pass before it too. Name the "
                           "commit that changed the code, or write the task by hand.")
    files = frozenset(tree_paths(checkout, sha))
    read = files_at(checkout, sha, [*_LOOKED_INTO, *split.tests])
    changed = {c.path for c in facts.changes}
    check = draft_check(split.tests, [p for p in files if p not in changed],
                        ProjectFacts(files=files, read=read, pytest_importable=pytest_importable))
    fallback = f"Fix what commit {sha[:7]} fixed in {_short(split.source or split.beside)}"
    title, prompt = draft_prompt(facts.subject, facts.body, added_lines(checkout, facts.parents[0], sha),
                                 issues=_issue_texts(facts, issues_dir), fallback=fallback)
    return TaskDraft(task_id=slug(title, f"commit-{sha[:7]}"), title=title, prompt=prompt,
                     starting_commit=facts.parents[0], run=check.run, protect=check.protect,
                     add=check.add, fix=sha, origin=f"commit {sha}")


def draft_from_session(checkout: Path, session: SessionFacts, start: str, fix: str, *,
                       pytest_importable: bool) -> TaskDraft:
    """The task a session makes: start where it started, fix at what it committed, the tests it
    added or changed as the check, its first request as the prompt."""
    changes = changes_between(checkout, start, fix)
    tests = [c.path for c in changes if c.status != "D" and is_test_path(c.path)]
    files = frozenset(tree_paths(checkout, fix))
    read = files_at(checkout, fix, [*_LOOKED_INTO, *tests])
    changed = {c.path for c in changes}
    check = draft_check(tests, [p for p in files if p not in changed],
                        ProjectFacts(files=files, read=read, pytest_importable=pytest_importable))
    first_line = session.request.strip().splitlines()[0] if session.request.strip() else ""
    title = first_line if len(first_line) <= 72 else first_line[:71].rstrip() + "…"
    title = title or f"The work of {session.platform} session {session.session_id}"
    return TaskDraft(task_id=slug(title, f"session-{session.session_id[:8]}"), title=title,
                     prompt=session.request.strip() + "\n", starting_commit=start, run=check.run,
                     protect=check.protect, add=check.add, fix=fix, platform=session.platform,
                     session_id=session.session_id,
                     origin=f"{session.platform} session {session.session_id}")


def _issue_texts(facts: CommitFacts, issues_dir: Path | None) -> list[str]:
    """The text of each issue the message names that the team keeps as `<dir>/<number>.md` (or
    `.txt`); armbench asks no issue tracker."""
    if issues_dir is None:
        return []
    texts = []
    for number in issue_refs(facts.subject, facts.body):
        for name in (f"{number}.md", f"{number}.txt"):
            path = issues_dir / name
            if path.is_file():
                texts.append(path.read_text(errors="replace").strip())
                break
    return texts


def _short(paths: Sequence[str]) -> str:
    return paths[0] if len(paths) == 1 else f"{paths[0]} and {len(paths) - 1} more files"
