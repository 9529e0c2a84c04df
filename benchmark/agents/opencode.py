"""OpenCode (`opencode`): `opencode run --format json`, JSON Lines with one `step_finish` per step."""

from __future__ import annotations

import json
import os
from typing import Any

from armbench.benchmark.agents.base import CliAdapter, Reading, budget_unenforced
from armbench.benchmark.agents.once import run_once
from armbench.benchmark.agents.output_shape import Shape, json_lines
from armbench.benchmark.agents.skills_in_output import opencode_skills
from armbench.benchmark.agents.transient import status_cause, text_cause
from armbench.edge.homelayout import HomeLayout
from armbench.engine.protocol import Lease
from armbench.ledger.events import Cost

__all__ = ["OpenCode", "config_content", "read_opencode"]


class OpenCode(CliAdapter):
    """OpenCode's run mode with every permission not explicitly denied approved (`--auto`)."""

    name = "opencode"
    endpoints = ("api.anthropic.com", "api.openai.com", "generativelanguage.googleapis.com", "models.dev")
    """The providers it drives, and the model list it reads at start."""
    answer_gaps = ()
    layout = HomeLayout(instructions=".config/opencode/AGENTS.md", skills=".config/opencode/skills",
                        agents=".config/opencode/agents", logins=(".local/share/opencode/auth.json",),
                        also_loads=(".config/opencode/agent", ".config/opencode/skill"))
    home_vars = {"XDG_CONFIG_HOME": ".config", "XDG_DATA_HOME": ".local/share",
                 "XDG_CACHE_HOME": ".cache", "XDG_STATE_HOME": ".local/state"}

    def argv(self, lease: Lease) -> list[str]:
        args = ["run", "--format", "json"] + ([] if self.answer_only else ["--auto"])
        if lease.model:
            args += ["--model", lease.model]
        if lease.effort:
            args += ["--variant", lease.effort]
        return args  # the prompt goes on stdin: a message argument with spaces gets quoted

    def env(self, lease: Lease) -> dict[str, str]:
        content = config_content(os.environ, answer_only=self.answer_only)
        return {"OPENCODE_CONFIG_CONTENT": content} if content else {}

    def unenforced(self, lease: Lease) -> list[str]:
        return (["max_turns"] if lease.max_turns is not None else []) + budget_unenforced(lease)

    def prepare(self) -> None:
        # Two first launches at once in a fresh home both migrate OpenCode's database, and one
        # fails with "database is locked"; a listing creates it before any trial starts. In the
        # sandbox every trial has a home of its own, so only a declared run shares one.
        if self.sandbox.isolation == "declared":
            run_once(self.executable, "session", "list")

    def read(self, stdout: str, stderr: str) -> Reading:
        return read_opencode(stdout)


def config_content(environ: dict[str, str] | os._Environ[str], *,
                   answer_only: bool = False) -> str | None:
    """`OPENCODE_CONFIG_CONTENT` pointing OpenCode's providers at the base URLs armbench runs
    with; for an answer-only call, every tool off and every permission denied too."""
    urls = {}
    anthropic = environ.get("ANTHROPIC_BASE_URL", "").rstrip("/")
    if anthropic:  # Claude Code's convention leaves out /v1; the AI SDK's includes it
        urls["anthropic"] = anthropic if anthropic.endswith("/v1") else f"{anthropic}/v1"
    if environ.get("OPENAI_BASE_URL"):
        urls["openai"] = environ["OPENAI_BASE_URL"].rstrip("/")
    if not urls and not answer_only:
        return None
    try:
        config = json.loads(environ.get("OPENCODE_CONFIG_CONTENT") or "{}")
    except ValueError:
        config = {}
    config = config if isinstance(config, dict) else {}
    if answer_only:
        config |= {"tools": {"*": False}, "permission": {"*": "deny"}}
    providers = config.setdefault("provider", {})
    for provider, url in urls.items():
        providers.setdefault(provider, {}).setdefault("options", {}).setdefault("baseURL", url)
    return json.dumps(config)


def read_opencode(stdout: str) -> Reading:
    """Read OpenCode's events: the session id, `step_finish` tokens and cost summed, `error` events."""
    shape = Shape("opencode")
    events = json_lines(stdout, shape)
    session = next((e["sessionID"] for e in events if isinstance(e.get("sessionID"), str)), None)
    steps = [e for e in events if e.get("type") == "step_finish"]
    errors = [e for e in events if e.get("type") == "error"]
    if not steps:
        shape.problem("no `step_finish` event, so no usage")
    tokens: dict[str, int] = {}
    costs: list[float | None] = []
    for step in steps:
        for key, value in _tokens(shape.get(step, "part.tokens", dict) or {}, shape).items():
            tokens[key] = tokens.get(key, 0) + value
        costs.append(shape.get(step, "part.cost", (int, float)))
    known = [c for c in costs if c is not None]
    # a total with an unknown part is no total
    cost = Cost(amount=float(sum(known)), unit="USD") if steps and len(known) == len(costs) else None
    error = _message(errors[-1]) if errors else None
    skills = opencode_skills(events) if events else None
    return Reading(usage=shape.usage(tokens, cost), session_id=session, error=error, skills=skills,
                   transient=_transient(errors[-1]) if errors else None)


def _transient(event: dict[str, Any]) -> str | None:
    """An `error` event's provider cause: its `error.data.statusCode`, else a connection that
    failed, as its message says."""
    error = event.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    status = data.get("statusCode") if isinstance(data, dict) else None
    if isinstance(status, int):
        return status_cause(status)
    return text_cause(_message(event))


def _tokens(counts: dict[str, Any], shape: Shape) -> dict[str, int]:
    """OpenCode's step tokens in armbench's names: its output leaves out the reasoning."""
    reasoning = shape.count(counts, "reasoning")
    return {"input": shape.count(counts, "input"), "cache_read": shape.count(counts, "cache.read"),
            "cache_write": shape.count(counts, "cache.write"),
            "output": shape.count(counts, "output") + reasoning, "reasoning": reasoning}


def _message(event: dict[str, Any]) -> str:
    error = event.get("error")
    data = error.get("data") if isinstance(error, dict) else None
    for text in (data.get("message") if isinstance(data, dict) else None,
                 error.get("name") if isinstance(error, dict) else None):
        if isinstance(text, str):
            return text
    return "error event"
