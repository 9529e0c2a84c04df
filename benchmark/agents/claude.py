"""Claude Code (`claude`): `claude -p --output-format stream-json --verbose`, one event a line,
the last a `result` object (the skills it loaded are `Skill` tool calls among them)."""

from __future__ import annotations

import json
import os
from typing import Any

from armbench.benchmark.agents.base import CliAdapter, Reading, budget_unenforced
from armbench.benchmark.agents.output_shape import Shape, json_lines
from armbench.benchmark.agents.skills_in_output import claude_skills
from armbench.benchmark.agents.transient import status_cause, text_cause
from armbench.edge.homelayout import HomeLayout
from armbench.engine.protocol import Lease
from armbench.ledger.events import Cost

__all__ = ["ClaudeCode", "read_claude"]

_LIMITS = {"error_max_turns": "max_turns", "error_max_budget_usd": "budget"}
_COST_UNITS = frozenset({"USD"})
"""The units of a cost cap Claude Code holds a session to (`--max-budget-usd`)."""
_MODEL_USAGE = {"input": "inputTokens", "cache_read": "cacheReadInputTokens",
                "cache_write": "cacheCreationInputTokens", "output": "outputTokens"}
_USAGE = {"input": "input_tokens", "cache_read": "cache_read_input_tokens",
          "cache_write": "cache_creation_input_tokens", "output": "output_tokens"}


class ClaudeCode(CliAdapter):
    """Claude Code in print mode with permission checks bypassed (armbench runs only in a sandbox)."""

    name = "claude"
    endpoints = ("api.anthropic.com", "console.anthropic.com")
    """The Messages API, and the token refresh of a Claude login."""
    layout = HomeLayout(instructions=".claude/CLAUDE.md", skills=".claude/skills",
                        agents=".claude/agents", logins=(".claude/.credentials.json",),
                        transcripts=".claude/projects", also_loads=(".claude/rules",))
    home_vars = {"CLAUDE_CONFIG_DIR": ".claude"}
    answer_gaps = ()

    def argv(self, lease: Lease) -> list[str]:
        args = ["-p", "--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"]
        if self.answer_only:  # no built-in tool, no MCP server, no settings (hooks) or CLAUDE.md
            args = ["-p", "--output-format", "stream-json", "--verbose", "--tools", "",
                    "--setting-sources", "", "--strict-mcp-config", "--disable-slash-commands"]
        if lease.model:
            args += ["--model", lease.model]
        if lease.effort:
            args += ["--effort", lease.effort]
        if lease.max_turns is not None:
            args += ["--max-turns", str(lease.max_turns)]
        if lease.max_cost is not None and lease.max_cost.unit in _COST_UNITS:
            args += ["--max-budget-usd", _amount(lease.max_cost.amount)]
        return args

    def unenforced(self, lease: Lease) -> list[str]:
        return budget_unenforced(lease, _COST_UNITS)

    def env(self, lease: Lease) -> dict[str, str]:
        # As root, Claude Code refuses --dangerously-skip-permissions unless told it is in a sandbox.
        return {"IS_SANDBOX": "1"} if os.geteuid() == 0 else {}

    def read(self, stdout: str, stderr: str) -> Reading:
        return read_claude(stdout)


def _amount(value: float) -> str:
    """A dollar amount as a plain decimal (never `1e-05`)."""
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def _events(stdout: str, shape: Shape) -> list[Any]:
    """The events: the whole output, the items of a `--verbose` array, or the JSONL lines."""
    try:
        whole = json.loads(stdout)
    except ValueError:
        whole = None
    return whole if isinstance(whole, list) else [whole] if whole is not None else json_lines(stdout, shape)


def _result(items: list[Any]) -> dict[str, Any] | None:
    """The last `result` object."""
    found = [i for i in items if isinstance(i, dict) and i.get("type") == "result"]
    return found[-1] if found else None


def read_claude(stdout: str) -> Reading:
    """Read Claude Code's `result`: tokens from modelUsage (else usage), total_cost_usd, is_error."""
    shape = Shape("claude")
    items = _events(stdout, shape)
    result = _result(items)
    if result is None:
        shape.problem("no `result` object on stdout")
        return Reading(usage=shape.usage({}))
    tokens, model = _tokens(result, shape)
    amount = shape.get(result, "total_cost_usd", (int, float))
    cost = Cost(amount=float(amount), unit="USD") if amount is not None else None
    is_error = shape.get(result, "is_error", bool)
    subtype = result.get("subtype")
    limit = _LIMITS.get(subtype) if isinstance(subtype, str) else None
    if result.get("terminal_reason") == "max_turns":
        limit = "max_turns"
    error = None
    if is_error and limit is None:
        errors = result.get("errors")
        text = result.get("result")
        error = text if isinstance(text, str) and text else (
            "; ".join(map(str, errors)) if isinstance(errors, list) and errors else str(subtype))
    session = shape.get(result, "session_id", str)
    final = result.get("result")
    return Reading(usage=shape.usage(tokens, cost), model=model, session_id=session, error=error,
                   limit=limit, final=final if isinstance(final, str) else None,
                   skills=claude_skills(items), transient=_transient(result, error))


def _transient(result: dict[str, Any], error: str | None) -> str | None:
    """A failed call's provider cause: its `api_error_status`, or a connection that failed
    (`API Error: Unable to connect to API (ConnectionRefused)`, status null)."""
    if error is None:
        return None
    status = result.get("api_error_status")
    cause = status_cause(status) if isinstance(status, int) else None
    if cause is None and status is None and error.startswith("API Error"):
        cause = text_cause(error)
    return cause


def _tokens(result: dict[str, Any], shape: Shape) -> tuple[dict[str, int], str | None]:
    """Tokens summed over modelUsage (else the top-level usage), and the model with the most output."""
    by_model = shape.get(result, "modelUsage", dict)
    tokens = {ours: 0 for ours in _MODEL_USAGE}
    if by_model:
        for model in by_model:
            for ours, theirs in _MODEL_USAGE.items():
                tokens[ours] += shape.count(by_model, (model, theirs))
        main = max(sorted(by_model), key=lambda m: _output(by_model[m]))
        return tokens, main
    usage = shape.get(result, "usage", dict)
    if usage is None:
        return {}, None
    return {ours: shape.count(usage, theirs) for ours, theirs in _USAGE.items()}, None


def _output(counts: Any) -> int:
    value = counts.get("outputTokens") if isinstance(counts, dict) else None
    return value if isinstance(value, int) else 0
