"""The evidence folder (content-addressed, never read through a link), redaction, gc's sharing
rule, and transcripts read as turns."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

from armbench.benchmark.records.evidence import collect_runs, evidence_problems
from armbench.benchmark.trials.evidence import Keeper, output_of
from armbench.edge.evidence import EvidenceStore, redact
from armbench.edge.proc import TAIL_BYTES, ProcResult
from armbench.ledger.events import EvidenceKept
from armbench.projections.transcripts import render_turns, turns_of

AT = datetime(2026, 1, 1, tzinfo=UTC)


def _kept(step: str, sha: str) -> EvidenceKept:
    return EvidenceKept(step=step, kind="check", sha256=sha, size=1, at=AT)


def test_put_is_content_addressed_and_written_once(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev")
    sha = store.put(b"hello")
    assert sha == hashlib.sha256(b"hello").hexdigest()
    assert store.put(b"hello") == sha and store.get(sha) == b"hello"
    assert store.state(sha) == "kept"
    store.path(sha).write_bytes(b"changed")
    assert store.state(sha) == "altered"
    assert store.state("0" * 64) == "missing"


def test_a_link_in_place_of_a_file_is_never_read(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev")
    secret = tmp_path / "secret"
    secret.write_bytes(b"not evidence")
    sha = hashlib.sha256(b"not evidence").hexdigest()
    store.path(sha).parent.mkdir(parents=True)
    store.path(sha).symlink_to(secret)
    assert store.get(sha) is None and store.state(sha) == "missing"


def test_redact_replaces_each_withheld_value_longest_first() -> None:
    env = {"GITHUB_TOKEN": "tok-abcdef", "GH_TOKEN": "tok-abc", "PGPASSWORD": "x"}
    data, found = redact(b"a tok-abcdef b tok-abc c x", env, ["GITHUB_TOKEN", "GH_TOKEN", "PGPASSWORD"])
    assert data == b"a [withheld GITHUB_TOKEN] b [withheld GH_TOKEN] c x"
    assert found == 2


def test_keeper_redacts_before_writing(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev")
    keeper = Keeper(store, lambda: AT, env={"GITHUB_TOKEN": "ghp-secret-1"})
    got = keeper.keep("s.check", "check", b"printed ghp-secret-1\n")
    assert got is not None and got.redacted == 1
    assert store.get(got.sha256) == b"printed [withheld GITHUB_TOKEN]\n"
    assert all(b"ghp-secret-1" not in p.read_bytes() for p in (tmp_path / "ev").rglob("*")
               if p.is_file())


def test_output_says_when_the_tail_was_cut() -> None:
    def proc(out: bytes, printed: int) -> ProcResult:
        return ProcResult(exit_code=1, signal=None, timed_out=False, cancelled=False, cause="exit",
                          duration_ms=1, stdout_tail=out, stderr_tail=b"", stdout_bytes=printed)
    assert output_of(proc(b"short", 5)) == (b"short", None)
    assert output_of(proc(b"x" * TAIL_BYTES, TAIL_BYTES))[1] is None
    data, cut = output_of(proc(b"x" * TAIL_BYTES, 3 * TAIL_BYTES))
    assert cut is not None and f"stdout ({3 * TAIL_BYTES} bytes)" in cut
    assert "only the last 64 KiB were kept" in cut


def test_gc_keeps_a_file_another_kept_run_names(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "ev")
    shared, own = store.put(b"same output"), store.put(b"old run only")
    runs = {"old": [_kept("a", shared), _kept("b", own)], "new": [_kept("a", shared)]}
    gone, freed = collect_runs(store, runs, keep=["new"], at="2026-01-02T00:00:00+00:00")
    assert gone == ["old"] and freed == len(b"old run only")
    assert store.get(shared) == b"same output" and store.get(own) is None
    assert store.collected() == {"old": "2026-01-02T00:00:00+00:00"}
    assert evidence_problems(runs["old"], store, "old") == []  # collected is not missing
    store.remove([shared])
    assert "is not in" in evidence_problems(runs["new"], store, "new")[0]


CLAUDE = [
    {"type": "user", "message": {"role": "user", "content": "Fix add()."}},
    {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "Running the fix."},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sed -i s/-/+/ calc.py"}}]}},
    {"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "done"}]}},
    {"type": "summary", "summary": "ignored"},
]
CODEX = [
    {"type": "session_meta", "payload": {"id": "x"}},
    {"type": "response_item", "payload": {"type": "message", "role": "user",
                                          "content": [{"type": "input_text", "text": "Fix add()."}]}},
    {"type": "response_item", "payload": {"type": "function_call", "name": "shell",
                                          "arguments": "{\"command\":[\"bash\",\"-lc\",\"ls\"]}"}},
    {"type": "response_item", "payload": {"type": "function_call_output",
                                          "output": "{\"output\":\"calc.py\\n\"}"}},
]


def _lines(entries: list[dict[str, object]]) -> bytes:
    return "\n".join(json.dumps(e) for e in entries).encode()


def test_claude_codes_session_reads_as_turns_with_the_tool_call() -> None:
    turns = turns_of(_lines(CLAUDE))
    assert [(t.who, t.name) for t in turns] == [("user", None), ("assistant", None),
                                                ("tool call", "Bash"), ("tool result", None)]
    text = render_turns(turns)
    assert "[tool call: Bash]\n  {\"command\":\"sed -i s/-/+/ calc.py\"}" in text


def test_codexs_rollout_reads_as_turns_with_the_call_and_its_output() -> None:
    turns = turns_of(_lines(CODEX))
    assert [(t.who, t.name) for t in turns] == [("user", None), ("tool call", "shell"),
                                                ("tool result", None)]
    assert turns[2].text == "calc.py"


def test_anything_else_is_one_output_turn_and_long_turns_are_cut() -> None:
    turns = turns_of(b"== agent: stdout ==\nI did it\n")
    assert [t.who for t in turns] == ["output"] and "I did it" in turns[0].text
    long = turns_of(_lines([{"type": "user", "message": {"content": "y" * 5000}}]))
    assert "more characters cut" in long[0].text
