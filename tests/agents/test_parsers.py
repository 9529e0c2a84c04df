"""The four readers on the CLIs' documented outputs, and on mutated ones: a changed shape is never silent."""

from __future__ import annotations

import json

import pytest

from armbench.benchmark.agents.base import OUTPUT_LIMIT, read_output
from armbench.benchmark.agents.claude import read_claude
from armbench.benchmark.agents.codex import read_codex
from armbench.benchmark.agents.gemini import read_gemini
from armbench.benchmark.agents.opencode import read_opencode
from armbench.ledger.events import Cost

pytestmark = pytest.mark.agents

CLAUDE = {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2, "result": "Done.",
          "session_id": "2d8f7139", "total_cost_usd": 0.01774,
          "usage": {"input_tokens": 2468, "cache_creation_input_tokens": 400, "cache_read_input_tokens": 200,
                    "output_tokens": 112},
          "modelUsage": {"claude-opus-4-8[1m]": {"inputTokens": 2468, "outputTokens": 112,
                                                 "cacheReadInputTokens": 200, "cacheCreationInputTokens": 400,
                                                 "costUSD": 0.01774}}}
CODEX = [{"type": "thread.started", "thread_id": "01a22b58"}, {"type": "turn.started"},
         {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "Done."}},
         {"type": "turn.completed", "usage": {"input_tokens": 2000, "cached_input_tokens": 600,
                                              "cache_write_input_tokens": 0, "output_tokens": 100,
                                              "reasoning_output_tokens": 20}}]
STEP = {"type": "step_finish", "sessionID": "ses_1", "part": {
    "type": "step-finish", "cost": 0.00459,
    "tokens": {"total": 1570, "input": 1000, "output": 50, "reasoning": 20,
               "cache": {"write": 200, "read": 300}}}}
GEMINI = {"session_id": "4092f8e9", "response": "Done.", "stats": {"models": {"gemini-2.5-pro": {
    "tokens": {"input": 1400, "prompt": 2000, "candidates": 100, "total": 2140, "cached": 600, "thoughts": 40,
               "tool": 0}, "roles": {"main": {}}}}}}


def lines(events: list[dict]) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_claude_tokens_cost_model_and_session_as_it_printed_them() -> None:
    got = read_claude(json.dumps(CLAUDE))
    assert got.usage is not None and got.usage.verified
    assert got.usage.tokens == {"input": 2468, "cache_read": 200, "cache_write": 400, "output": 112}
    assert got.usage.cost == Cost(amount=0.01774, unit="USD")
    assert (got.model, got.session_id) == ("claude-opus-4-8[1m]", "2d8f7139")
    assert (got.error, got.limit) == (None, None)


def test_claude_reads_the_verbose_array_and_stream_json_the_same_way() -> None:
    events = [{"type": "system", "subtype": "init", "model": "x"}, CLAUDE]
    assert read_claude(json.dumps(events)) == read_claude(json.dumps(CLAUDE)) == read_claude(lines(events))


def test_claude_is_error_is_an_error_even_when_subtype_says_success() -> None:
    failed = {**CLAUDE, "is_error": True, "api_error_status": 500, "modelUsage": {}, "total_cost_usd": 0,
              "usage": {**CLAUDE["usage"], "input_tokens": 0, "output_tokens": 0,
                        "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
              "result": "API Error: 500 mock injected error"}
    got = read_claude(json.dumps(failed))
    assert got.error == "API Error: 500 mock injected error" and got.limit is None and got.model is None
    assert got.usage is not None and got.usage.verified and got.usage.tokens["input"] == 0


def test_claude_max_turns_is_a_limit_not_an_error() -> None:
    limited = {k: v for k, v in CLAUDE.items() if k != "result"}
    limited.update(subtype="error_max_turns", is_error=True, terminal_reason="max_turns",
                   errors=["Reached maximum number of turns (1)"])
    got = read_claude(json.dumps(limited))
    assert (got.limit, got.error) == ("max_turns", None)


def test_codex_input_leaves_out_the_cached_tokens_it_includes() -> None:
    got = read_codex(lines(CODEX))
    assert got.usage is not None and got.usage.verified and got.usage.cost is None
    assert got.usage.tokens == {"input": 1400, "cache_read": 600, "cache_write": 0, "output": 100,
                                "reasoning": 20}
    assert (got.session_id, got.model, got.error) == ("01a22b58", None, None)


def test_codex_turn_failed_is_an_error_and_its_warnings_are_not() -> None:
    events = [CODEX[0], {"type": "error", "message": "Model metadata for `mock` not found."},
              {"type": "turn.failed", "error": {"message": "We're currently experiencing high demand"}}]
    got = read_codex(lines(events))
    assert got.error == "We're currently experiencing high demand"
    assert got.usage is not None and not got.usage.verified


def test_opencode_sums_its_steps_and_adds_reasoning_to_output() -> None:
    got = read_opencode(lines([{"type": "step_start", "sessionID": "ses_1"}, STEP, STEP]))
    assert got.usage is not None and got.usage.verified
    assert got.usage.tokens == {"input": 2000, "cache_read": 600, "cache_write": 400, "output": 140,
                                "reasoning": 40}
    assert got.usage.cost == Cost(amount=pytest.approx(0.00918), unit="USD")
    assert (got.session_id, got.model) == ("ses_1", None)


def test_opencode_error_event_is_an_error() -> None:
    error = {"type": "error", "sessionID": "ses_1",
             "error": {"name": "APIError", "data": {"message": "boom"}}}
    assert read_opencode(lines([error])).error == "boom"


def test_gemini_prompt_includes_the_cached_and_thoughts_are_output() -> None:
    got = read_gemini(json.dumps(GEMINI), "")
    assert got.usage is not None and got.usage.verified and got.usage.cost is None
    assert got.usage.tokens == {"input": 1400, "cache_read": 600, "output": 140, "reasoning": 40}
    assert (got.model, got.session_id, got.error) == ("gemini-2.5-pro", "4092f8e9", None)


def test_gemini_reads_its_error_object_from_the_end_of_stderr() -> None:
    stderr = ("Error when talking to Gemini API\n    at x (bundle.js:1:2) {\n  status: 500\n}\n"
              + json.dumps({"session_id": "s1", "error": {"type": "Error", "message": "boom", "code": 500}},
                           indent=2))
    got = read_gemini("", stderr)
    assert (got.error, got.session_id) == ("boom", "s1")
    assert got.usage is not None and not got.usage.verified and "no `stats`" in (got.usage.note or "")


MUTATIONS = [
    ("claude: a renamed count", read_claude, json.dumps({**CLAUDE, "modelUsage": {"m": {
        "input": 1, "outputTokens": 1, "cacheReadInputTokens": 0, "cacheCreationInputTokens": 0}}}),
     "`m.inputTokens` is missing"),
    ("claude: no cost", read_claude, json.dumps({k: v for k, v in CLAUDE.items() if k != "total_cost_usd"}),
     "`total_cost_usd` is missing"),
    ("claude: text, not JSON", read_claude, "Done: the file has been written.\n",
     "no `result` object on stdout"),
    ("codex: a count as a string", read_codex,
     lines([*CODEX[:-1], {"type": "turn.completed",
                          "usage": {**CODEX[-1]["usage"], "output_tokens": "100"}}]),
     "`output_tokens` is str, not int"),
    ("codex: no turn end", read_codex, lines(CODEX[:-1]), "neither `turn.completed` nor `turn.failed`"),
    ("opencode: tokens moved", read_opencode,
     lines([{**STEP, "part": {"cost": 0.1, "usage": STEP["part"]["tokens"]}}]), "`part.tokens` is missing"),
    ("opencode: no steps", read_opencode, lines([{"type": "text", "sessionID": "s"}]), "no `step_finish`"),
    ("gemini: stats renamed", read_gemini,
     json.dumps({"session_id": "s", "response": "x", "statistics": GEMINI["stats"]}),
     "`stats.models` is missing"),
    ("gemini: a count gone", read_gemini, json.dumps({**GEMINI, "stats": {"models": {"m": {"tokens": {
        "prompt": 1, "candidates": 1, "thoughts": 0}}}}}), "`cached` is missing"),
]


@pytest.mark.parametrize(("name", "reader", "output", "why"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_a_changed_output_shape_makes_usage_not_verified_and_says_why(name, reader, output, why) -> None:
    got = reader(output) if reader is not read_gemini else reader(output, "")
    assert got.usage is not None and got.usage.verified is False
    assert why in (got.usage.note or ""), got.usage.note
    assert got.usage.note.startswith(f"{name.split(':')[0]}'s output did not have the expected shape: ")


UNREAD = [m for m in MUTATIONS if m[0].endswith(("JSON", "turn end", "no steps", "renamed"))]


@pytest.mark.parametrize(("name", "reader", "output", "why"), UNREAD, ids=[m[0] for m in UNREAD])
def test_usage_that_could_not_be_read_has_no_tokens_to_count_as_zero(name, reader, output, why) -> None:
    got = reader(output) if reader is not read_gemini else reader(output, "")
    assert got.usage is not None and got.usage.tokens == {}


OUT_OF_RANGE = [
    ("claude", read_claude, json.dumps({**CLAUDE, "modelUsage": {"m": {
        **CLAUDE["modelUsage"]["claude-opus-4-8[1m]"], "inputTokens": -9223372036854775808}}}),
     "the token count `input` is below 0"),
    ("claude", read_claude, json.dumps({**CLAUDE, "total_cost_usd": float("nan")}),
     "the cost is not a finite number"),
    ("codex", read_codex, lines([*CODEX[:-1], {"type": "turn.completed", "usage": {
        **CODEX[-1]["usage"], "output_tokens": 10 ** 13}}]), "the token count `output` is over 1e12"),
    ("codex", read_codex, lines([*CODEX[:-1], {"type": "turn.completed", "usage": {
        **CODEX[-1]["usage"], "input_tokens": 10, "cached_input_tokens": 600}}]),
     "the token count `input` is below 0"),
    ("opencode", read_opencode, lines([{**STEP, "part": {**STEP["part"], "cost": float("-inf")}}]),
     "the cost is not a finite number"),
    ("opencode", read_opencode, lines([{**STEP, "part": {**STEP["part"], "cost": 1e300}}]),
     "the cost is over 1e6"),
    ("gemini", read_gemini, json.dumps({**GEMINI, "stats": {"models": {"m": {"tokens": {
        **GEMINI["stats"]["models"]["gemini-2.5-pro"]["tokens"], "prompt": -5}}}}}),
     "the token count `input` is below 0"),
]


@pytest.mark.parametrize(("name", "reader", "output", "why"), OUT_OF_RANGE,
                         ids=[f"{m[0]}: {m[3]}" for m in OUT_OF_RANGE])
def test_a_count_or_cost_out_of_range_is_not_verified_and_not_kept(name, reader, output, why) -> None:
    got = reader(output) if reader is not read_gemini else reader(output, "")
    assert got.usage is not None and got.usage.verified is False
    assert (got.usage.tokens, got.usage.cost) == ({}, None)
    assert got.usage.note.startswith(f"{name}'s usage was not used: {why} ("), got.usage.note


def test_an_output_over_the_limit_is_not_read(tmp_path) -> None:
    out = tmp_path / "claude.out"
    with out.open("wb") as f:
        f.truncate(OUTPUT_LIMIT + 1)
    why = f"claude's output was not read: it is over {OUTPUT_LIMIT} bytes."
    assert read_output("claude", out) == ("", why)
    out.write_text(json.dumps(CLAUDE))
    assert read_output("claude", out) == (json.dumps(CLAUDE), None)


def test_claude_max_budget_is_a_budget_limit_not_an_error() -> None:
    """As Claude Code 2.1.197 prints it when `--max-budget-usd` is reached (probed against the
    mock model)."""
    limited = {k: v for k, v in CLAUDE.items() if k != "result"}
    limited.update(subtype="error_max_budget_usd", is_error=True, stop_reason="tool_use",
                   errors=["Reached maximum budget ($0.001)"])
    got = read_claude(json.dumps(limited))
    assert (got.limit, got.error) == ("budget", None)
