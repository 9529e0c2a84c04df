"""`armbench task new --from-session <platform>:<id>`: a Claude Code or Codex session on this
machine turned into a task: its first request, the commit it started at, what it committed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from armbench.benchmark.harvest.draft import draft_from_session
from armbench.benchmark.harvest.fromcommit import Drafted, keep_if_valid
from armbench.benchmark.harvest.probe import sandbox_imports
from armbench.benchmark.harvest.trydraft import DraftSuite, try_draft
from armbench.edge.errors import GitError
from armbench.edge.history import head_reflog, is_ancestor, resolve_commit
from armbench.edge.sandbox import Sandbox
from armbench.edge.sessions import find_session_file
from armbench.ledger.errors import Refusal
from armbench.suites.drafting import NotDraftable
from armbench.suites.sessionfiles import PLATFORMS, Moved, read_session, start_and_fix

__all__ = ["parse_session_ref", "task_from_session"]

_ALIASES = {"claude": "claude-code", "claude-code": "claude-code", "codex": "codex"}


def parse_session_ref(ref: str) -> tuple[str, str]:
    """(`claude-code` or `codex`, the session id) from `<platform>:<id>`."""
    platform, _, session_id = ref.partition(":")
    if platform not in _ALIASES or not session_id:
        raise Refusal(f"Expected --from-session <platform>:<id> with a platform of "
                      f"{' or '.join(PLATFORMS)}, found {ref!r}.", code="invalid_inputs")
    return _ALIASES[platform], session_id


def task_from_session(checkout: Path, ref: str, *, suite: DraftSuite, sandbox: Sandbox, out: Path | None,
                      repeat: int, progress: Callable[[str], None]) -> Drafted:
    """Draft the session's task, try it, and write it to `out` only when valid. Raises
    NotDraftable when the session's start or fix cannot be rebuilt in this checkout."""
    platform, session_id = parse_session_ref(ref)
    path = find_session_file(platform, session_id)
    session = read_session(platform, path.read_bytes(), where=str(path))
    ran_in = Path(session.cwd)
    if not ran_in.is_absolute() or not (ran_in == checkout or checkout in ran_in.parents):
        raise NotDraftable(f"The session ran in {session.cwd}, not in this checkout ({checkout}): run "
                           "armbench there, where its commits and reflog are.")
    if session.start_commit is not None:
        try:
            resolve_commit(checkout, session.start_commit)
        except GitError:
            raise NotDraftable(f"The session started at {session.start_commit}, which this checkout does "
                               "not have, so its start cannot be rebuilt.") from None
    reflog = [Moved(sha=e.sha, at=e.at, action=e.action) for e in head_reflog(checkout)]
    start, fix = start_and_fix(session, reflog, descends=lambda a, b: is_ancestor(checkout, a, b))
    draft = draft_from_session(checkout, session, start, fix,
                               pytest_importable=sandbox_imports(sandbox, "pytest"))
    progress(f"Drafted task {draft.task_id} from {platform} session {session_id}: {start[:7]} to "
             f"{fix[:7]}, {draft.run}")
    result = try_draft(draft, suite, checkout=checkout, sandbox=sandbox, repeat=repeat, progress=progress)
    return keep_if_valid(draft, result, out)
