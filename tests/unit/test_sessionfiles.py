"""Session files read (the shapes of the pinned CLIs' real files) and the start and fix rules."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from armbench.suites.drafting import NotDraftable
from armbench.suites.sessionfiles import Moved, SessionFacts, read_session, start_and_fix

T0 = 1_796_201_597  # 2026-12-02T08:53:17Z


def lines(*values: dict[str, object]) -> bytes:
    return "\n".join(json.dumps(v) for v in values).encode() + b"\n"


def iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


CLAUDE = lines(
    {"type": "queue-operation", "operation": "enqueue", "timestamp": iso(T0 + 0.7), "sessionId": "s-1"},
    {"type": "user", "message": {"role": "user", "content": "Fix add.\nWith a test."},
     "timestamp": iso(T0 + 1.2), "cwd": "/w/calc", "sessionId": "s-1"},
    {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]},
     "timestamp": iso(T0 + 3.5), "cwd": "/w/calc", "sessionId": "s-1"})
CODEX = lines(
    {"timestamp": iso(T0 + 1.7), "type": "session_meta",
     "payload": {"id": "c-1", "cwd": "/w/calc", "git": {"commit_hash": "a" * 40, "branch": "main"}}},
    {"timestamp": iso(T0 + 1.8), "type": "response_item", "payload": {
        "type": "message", "role": "user",
        "content": [{"type": "input_text", "text": "<environment_context>x"}]}},
    {"timestamp": iso(T0 + 1.9), "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix add."}]}},
    {"timestamp": iso(T0 + 4.1), "type": "event_msg", "payload": {"type": "task_complete"}})


def test_a_claude_code_file_gives_the_first_request_its_id_and_times() -> None:
    facts = read_session("claude-code", CLAUDE, where="s-1.jsonl")
    assert facts == SessionFacts(platform="claude-code", session_id="s-1", cwd="/w/calc",
                                 request="Fix add.\nWith a test.", started=T0 + 0.7, ended=T0 + 3.5)


def test_a_codex_file_gives_its_start_commit_and_the_members_request() -> None:
    facts = read_session("codex", CODEX, where="rollout.jsonl")
    assert (facts.session_id, facts.request, facts.start_commit) == ("c-1", "Fix add.", "a" * 40)


@pytest.mark.parametrize("data", [b"not json\n", lines({"type": "summary"})])
def test_other_files_are_refused(data: bytes) -> None:
    with pytest.raises(NotDraftable, match="armbench can read"):
        read_session("claude-code", data, where="x.jsonl")


def claude(started: float = T0 + 2.5, ended: float = T0 + 9) -> SessionFacts:
    return SessionFacts(platform="claude-code", session_id="s-1", cwd="/w", request="r", started=started,
                        ended=ended)


def descends(start: str, sha: str) -> bool:
    return sha != "x" * 40


def test_the_start_is_head_before_the_session_and_the_fix_its_last_commit() -> None:
    reflog = [Moved(sha="a" * 40, at=T0, action="commit (initial): start"),
              Moved(sha="b" * 40, at=T0 + 5, action="commit: fix"),
              Moved(sha="c" * 40, at=T0 + 8, action="commit: and its test"),
              Moved(sha="d" * 40, at=T0 + 30, action="commit: later work")]
    assert start_and_fix(claude(), reflog, descends=descends) == ("a" * 40, "c" * 40)


@pytest.mark.parametrize(("reflog", "words"), [
    ([Moved(sha="a" * 40, at=T0 + 2, action="commit: in the second it began")], "HEAD moved in the second"),
    ([Moved(sha="a" * 40, at=T0 + 5, action="commit (initial): x")], "does not reach back"),
    ([Moved(sha="a" * 40, at=T0, action="commit: s"),
      Moved(sha="b" * 40, at=T0 + 4, action="reset: moving to HEAD~1")],
     "HEAD moved by `reset: moving to HEAD~1`"),
    ([Moved(sha="a" * 40, at=T0, action="commit: s")], "committed nothing on top of aaaaaaa"),
    ([Moved(sha="a" * 40, at=T0, action="commit: s"),
      Moved(sha="x" * 40, at=T0 + 4, action="commit: elsewhere")],
     "committed nothing"),
])
def test_a_start_or_fix_that_cannot_be_rebuilt_is_refused(reflog: list[Moved], words: str) -> None:
    with pytest.raises(NotDraftable, match=words.replace("(", r"\(").replace(")", r"\)")):
        start_and_fix(claude(), reflog, descends=descends)


def test_codex_starts_where_its_file_says_even_when_head_moved_in_that_second() -> None:
    codex = SessionFacts(platform="codex", session_id="c-1", cwd="/w", request="r", started=T0 + 1.7,
                         ended=T0 + 4.1, start_commit="a" * 40)
    reflog = [Moved(sha="a" * 40, at=T0 + 1, action="commit: start"),
              Moved(sha="b" * 40, at=T0 + 1, action="commit: fix")]
    assert start_and_fix(codex, reflog, descends=descends) == ("a" * 40, "b" * 40)
