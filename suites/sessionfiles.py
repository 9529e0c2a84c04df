"""An agent session's local file, read for `armbench task new --from-session` (pure: bytes in).

Claude Code keeps `~/.claude/projects/<cwd-slug>/<session>.jsonl`: one JSON object a line, each
with `sessionId`, `timestamp`, `cwd`; the member's requests are `type: user` lines whose
`message.content` is text (tool results are lists of `tool_result` blocks). Codex keeps
`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`: a `session_meta` line with the id,
`cwd` and `git.commit_hash` (the commit it started at), then `response_item` and `event_msg`
lines; the member's requests are `response_item` messages of role `user` (the ones that are not
Codex's own `<environment_context>`-style context). The formats are the pinned CLIs' own, read
from real files the tests make (tests/e2e/test_task_from_session.py).

Which commits the session started at and ended with is decided here too, from HEAD's reflog (as
`edge.history.head_reflog` reads it), so every refusal is a pure rule with its words.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from datetime import datetime

import msgspec

from armbench.suites.drafting import NotDraftable

__all__ = ["PLATFORMS", "Moved", "SessionFacts", "read_session", "start_and_fix"]

PLATFORMS = ("claude-code", "codex")


class SessionFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What a task needs of a session."""

    platform: str
    session_id: str
    cwd: str
    request: str
    """The member's first request, as they wrote it."""
    started: float
    """Unix seconds of the session's first line."""
    ended: float
    """Unix seconds of its last line."""
    start_commit: str | None = None
    """The commit the session started at, when the file records it (Codex)."""


class Moved(msgspec.Struct, frozen=True, kw_only=True):
    """One move of HEAD, as the reflog keeps it (whole seconds)."""

    sha: str
    at: int
    action: str


def read_session(platform: str, data: bytes, *, where: str) -> SessionFacts:
    """The facts of a Claude Code or Codex session file; NotDraftable naming what is missing."""
    lines = []
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            raise NotDraftable(f"{where}:{number} is not JSON, so it is not a {platform} session "
                               "file armbench can read.") from None
        if isinstance(value, dict):
            lines.append(value)
    reader = _claude if platform == "claude-code" else _codex
    return reader(lines, where)


def _claude(lines: list[dict[str, object]], where: str) -> SessionFacts:
    stamps = [t for line in lines if (t := _time(line.get("timestamp"))) is not None]
    requests = [line for line in lines if line.get("type") == "user" and not line.get("isMeta")
                and _text(line.get("message"))]
    ids = {line.get("sessionId") for line in lines if line.get("sessionId")}
    if not stamps or not requests or len(ids) != 1:
        raise NotDraftable(f"{where} holds no request of the member with its session id and times, "
                           "so it is not a Claude Code session armbench can read.")
    first = requests[0]
    return SessionFacts(platform="claude-code", session_id=str(ids.pop()), cwd=str(first.get("cwd", "")),
                        request=_text(first.get("message")), started=min(stamps), ended=max(stamps))


def _codex(lines: list[dict[str, object]], where: str) -> SessionFacts:
    meta = next((line.get("payload") for line in lines if line.get("type") == "session_meta"), None)
    stamps = [t for line in lines if (t := _time(line.get("timestamp"))) is not None]
    requests = [text for line in lines if line.get("type") == "response_item"
                and isinstance(p := line.get("payload"), dict) and p.get("type") == "message"
                and p.get("role") == "user" and (text := _text(p)) and not text.lstrip().startswith("<")]
    if not isinstance(meta, dict) or not stamps or not requests:
        raise NotDraftable(f"{where} has no session_meta line, no times or no request of the member, "
                           "so it is not a Codex session armbench can read.")
    git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
    commit = git.get("commit_hash") if isinstance(git, dict) else None
    return SessionFacts(platform="codex", session_id=str(meta.get("id") or meta.get("session_id")),
                        cwd=str(meta.get("cwd", "")), request=requests[0], started=min(stamps),
                        ended=max(stamps), start_commit=commit if isinstance(commit, str) else None)


def start_and_fix(session: SessionFacts, reflog: Sequence[Moved], *,
                  descends: Callable[[str, str], bool]) -> tuple[str, str]:
    """(startingCommit, fix): where the session started, and the last commit it made.

    `descends(start, sha)` says whether a commit descends from the start (the caller asks git). A
    Claude Code session's start is HEAD just before the session began, from the reflog: refused
    when HEAD moved in the second the session began (the reflog keeps whole seconds, so before
    or after cannot be told) or when the reflog does not reach back that far. The fix is the
    last commit HEAD moved to while the session ran: refused when HEAD moved other than by a
    commit then (a checkout, a reset, a rebase), or when the session committed nothing."""
    name = f"{session.platform} session {session.session_id}"
    first, last = math.floor(session.started), math.ceil(session.ended)
    start = session.start_commit
    if start is None:
        if any(m.at == first for m in reflog):
            raise NotDraftable(f"HEAD moved in the second {name} began, so armbench cannot tell which "
                               "commit it started at. Write the task by hand with that startingCommit.")
        before = [m for m in reflog if m.at < first]
        if not before:
            raise NotDraftable(f"HEAD's reflog does not reach back to when {name} began, so the commit "
                               "it started at cannot be rebuilt. Write the task by hand.")
        start = before[-1].sha
    during = [m for m in reflog if first <= m.at <= last]
    moved = [m for m in during if not m.action.startswith("commit")]
    if moved:
        raise NotDraftable(f"HEAD moved by `{moved[0].action}` while {name} ran, so what it committed "
                           "is not one line of commits from where it started. Write the task by hand.")
    made = [m for m in during if m.sha != start and descends(start, m.sha)]
    if not made:
        raise NotDraftable(f"{name} committed nothing on top of {start[:7]} in this checkout, so there "
                           "is no fix to check. Commit the session's work, or write the task by hand.")
    return start, made[-1].sha


def _text(message: object) -> str:
    """A message's text: a string, or its text blocks joined (empty for tool results)."""
    if isinstance(message, dict):
        message = message.get("content")
    if isinstance(message, str):
        return message.strip()
    if isinstance(message, list):
        parts = [b.get("text", "") for b in message if isinstance(b, dict)
                 and b.get("type") in ("text", "input_text")]
        return "\n".join(p for p in parts if isinstance(p, str)).strip()
    return ""


def _time(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
