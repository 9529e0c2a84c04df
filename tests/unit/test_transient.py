"""Whose failure it was, read from what each pinned CLI really printed.

`cli_failures/` holds the outputs of Claude Code 2.1.197, Codex 0.171.0, OpenCode 1.18.33 and
Gemini CLI 0.61.0 run against `tests/agents/mock_model.py` answering 429, 529 and 500 (and, as
`refused`, pointed at a port that refused the connection; and 400, the agent's own error), their
own retries off or bounded as `tests/agents/clis.py` sets them. The init line of Claude Code's
stream is left out.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from armbench.benchmark.agents.base import Reading
from armbench.benchmark.agents.claude import read_claude
from armbench.benchmark.agents.codex import read_codex
from armbench.benchmark.agents.command import CommandTool, UsageFile, tempfail, usage_reading
from armbench.benchmark.agents.gemini import read_gemini
from armbench.benchmark.agents.opencode import read_opencode
from armbench.benchmark.agents.transient import TRANSIENT_CAUSES, status_cause, text_cause
from armbench.edge.proc import ProcResult
from armbench.edge.sandbox import Sandbox
from armbench.engine.protocol import Lease, Report

FAILURES = Path(__file__).with_name("cli_failures")
EXPECTED = {"429": "rate_limited", "529": "overloaded", "500": "server_error", "refused": "network",
            "400": None}
"""Each case's cause; a 400 (the request's own fault) is the agent's error, not transient."""


def _text(name: str) -> str:
    path = FAILURES / name
    return path.read_text() if path.exists() else ""


def _read(cli: str, case: str) -> Reading:
    out, err = _text(f"{cli}-{case}.stdout"), _text(f"{cli}-{case}.stderr")
    return {"claude": lambda: read_claude(out), "codex": lambda: read_codex(out),
            "opencode": lambda: read_opencode(out), "gemini": lambda: read_gemini(out, err)}[cli]()


CASES = sorted({tuple(p.name.split(".")[0].split("-", 1)) for p in FAILURES.iterdir()})


@pytest.mark.parametrize(("cli", "case"), CASES)
def test_each_cli_s_failure_is_transient_with_its_cause_or_the_agent_s_own(cli: str, case: str) -> None:
    got = _read(cli, case)
    assert got.error, f"{cli} {case}: the output shows no error"
    expected = EXPECTED[case]
    if cli == "codex" and case == "500":  # Codex prints a 500 as "high demand", not its status
        expected = "overloaded"
    assert got.transient == expected


def test_the_cases_cover_every_cli_and_every_status() -> None:
    for cli in ("claude", "codex", "opencode", "gemini"):
        assert {c for n, c in CASES if n == cli} >= {"429", "529", "500"}, cli


def test_an_error_of_the_agent_s_own_is_not_transient() -> None:
    own = '{"type":"result","subtype":"error_during_execution","is_error":true,' \
          '"api_error_status":400,"result":"API Error: 400 prompt is too long","session_id":"s"}\n'
    assert read_claude(own).error and read_claude(own).transient is None
    failed = '{"type":"turn.failed","error":{"message":"model not found: gpt-nine"}}\n'
    assert read_codex(failed).error and read_codex(failed).transient is None
    event = '{"type":"error","error":{"name":"APIError","data":{"message":"bad key","statusCode":401}}}\n'
    assert read_opencode(event).transient is None
    auth = '{"error":{"message":"Invalid auth method selected.","code":41}}'
    assert read_gemini("", auth).transient is None


@pytest.mark.parametrize(("status", "cause"), [(429, "rate_limited"), (529, "overloaded"),
                                                (503, "overloaded"), (500, "server_error"),
                                                (502, "server_error"), (501, None), (400, None),
                                                (401, None), (404, None), (None, None)])
def test_an_http_status_names_its_cause(status: int | None, cause: str | None) -> None:
    assert status_cause(status) == cause


def test_a_message_names_a_status_a_busy_provider_or_a_dropped_connection() -> None:
    assert text_cause("stream disconnected before completion: error sending request") == "network"
    assert text_cause("read ECONNRESET") == "network"
    assert text_cause("exceeded retry limit, last status: 429 Too Many Requests") == "rate_limited"
    assert text_cause("The model refused: the diff is 200 lines") is None
    assert text_cause(None) is None
    assert set(TRANSIENT_CAUSES) >= {"rate_limited", "overloaded", "server_error", "network", "tempfail"}


LEASE = Lease(run="r", step="s", lease="l", kind="prompt", expires_at=datetime(2026, 1, 1, tzinfo=UTC))


def _proc(code: int) -> ProcResult:
    return ProcResult(exit_code=code, signal=None, timed_out=False, cancelled=False,
                      cause="exit" if code else "ok", duration_ms=5, stdout_tail=b"",
                      stderr_tail=b"busy, try later\n")


def _report(code: int, reported: UsageFile | None = None) -> Report:
    tool = CommandTool("cmd", "", Path(), Sandbox(isolation="declared"))
    return tool.report(LEASE, _proc(code), tempfail(usage_reading(None, reported), _proc(code)))


def test_a_command_tool_exiting_75_is_a_transient_error() -> None:
    got = _report(75)
    assert (got.outcome, got.cause, got.transient) == ("error", "tempfail", True)
    assert "transient" in (got.message or "")


def test_a_command_tool_saying_transient_in_its_usage_file_is_a_transient_error() -> None:
    got = _report(1, UsageFile(transient=True))
    assert (got.outcome, got.cause, got.transient) == ("error", "tempfail", True)


def test_a_command_tool_exiting_1_is_its_own_error() -> None:
    got = _report(1)
    assert (got.outcome, got.cause, got.transient) == ("error", "exit", False)


def test_a_cli_stopped_at_its_time_limit_while_it_waited_for_its_provider_is_transient() -> None:
    tool = CommandTool("codex", "", Path(), Sandbox(isolation="declared"))
    stopped = ProcResult(exit_code=None, signal=9, timed_out=True, cancelled=False, cause="timeout",
                         duration_ms=60_000, stdout_tail=b"", stderr_tail=b"")
    waiting = _read("codex", "refused")  # its last line: Reconnecting... waiting for network
    limited = msgspec.structs.replace(LEASE, timeout_s=60.0, limit_s=60.0)
    got = tool.report(limited, stopped, waiting)
    assert (got.outcome, got.cause, got.limit, got.transient) == ("error", "network", None, True)
    assert "waited for its provider" in (got.message or "")
    own = tool.report(limited, stopped, Reading())
    assert (own.outcome, own.limit, own.transient) == ("succeeded", "timeout", False)
