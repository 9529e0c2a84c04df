"""Codex CLI (`codex`): `codex exec --json`, JSON Lines ending in `turn.completed` or `turn.failed`."""

from __future__ import annotations

import json
import os
from typing import Any

from armbench.benchmark.agents.base import CliAdapter, Reading, budget_unenforced
from armbench.benchmark.agents.output_shape import Shape, json_lines
from armbench.benchmark.agents.skills_in_output import codex_skills
from armbench.benchmark.agents.transient import text_cause
from armbench.edge.homelayout import HomeLayout
from armbench.engine.protocol import Lease

__all__ = ["Codex", "read_codex"]

PROVIDER = "armbench"
"""The model provider armbench defines with `-c` when `OPENAI_BASE_URL` is set."""
ANSWER_ONLY = ["-s", "read-only", *[arg for feature in ("shell_tool", "multi_agent", "goals", "hooks",
                                                      "plugins", "apps", "image_generation")
                                    for arg in ("--disable", feature)]]
"""An answer-only call: no shell, its own read-only sandbox for patches, no hooks or plugins.
Codex still offers apply_patch (refused by read-only), view_image and its collaboration tools."""


class Codex(CliAdapter):
    """Codex's exec mode without approvals or its own sandbox (armbench runs only in a sandbox)."""

    name = "codex"
    endpoints = ("api.openai.com", "auth.openai.com", "chatgpt.com")
    """The Responses API, and a ChatGPT login's token refresh and backend."""
    layout = HomeLayout(instructions=".codex/AGENTS.md", skills=".codex/skills",
                        logins=(".codex/auth.json", ".codex/config.toml"),
                        transcripts=".codex/sessions", also_loads=(".agents/skills",))
    home_vars = {"CODEX_HOME": ".codex"}
    answer_gaps = ("tools",)

    def argv(self, lease: Lease) -> list[str]:
        args = ["exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check"]
        if self.answer_only:
            args = ["exec", "--json", *ANSWER_ONLY, "--skip-git-repo-check"]
        if lease.model:
            args += ["--model", lease.model]
        if lease.effort:
            args += ["-c", f"model_reasoning_effort={json.dumps(lease.effort)}"]
        base_url = os.environ.get("OPENAI_BASE_URL")
        if base_url:
            for key, value in (("name", PROVIDER), ("base_url", base_url), ("wire_api", "responses"),
                               ("env_key", "OPENAI_API_KEY")):
                args += ["-c", f"model_providers.{PROVIDER}.{key}={json.dumps(value)}"]
            args += ["-c", f"model_provider={json.dumps(PROVIDER)}"]
        return [*args, "-"]

    def unenforced(self, lease: Lease) -> list[str]:
        return (["max_turns"] if lease.max_turns is not None else []) + budget_unenforced(lease)

    def read(self, stdout: str, stderr: str) -> Reading:
        return read_codex(stdout)


def read_codex(stdout: str) -> Reading:
    """Read Codex's events: the thread id, `turn.completed` usage summed, `turn.failed` as an error."""
    shape = Shape("codex")
    events = json_lines(stdout, shape)
    session = next((e.get("thread_id") for e in events if e.get("type") == "thread.started"), None)
    if session is not None and not isinstance(session, str):
        shape.problem("`thread.started.thread_id` is not a string")
        session = None
    completed = [e for e in events if e.get("type") == "turn.completed"]
    failed = [e for e in events if e.get("type") == "turn.failed"]
    error = _message(failed[-1], shape) if failed else None
    if not completed:
        shape.problem("no `turn.completed` event, so no usage" if failed
                      else "neither `turn.completed` nor `turn.failed` was printed")
    tokens: dict[str, int] = {}
    for event in completed:
        for key, value in _tokens(shape.get(event, "usage", dict) or {}, shape).items():
            tokens[key] = tokens.get(key, 0) + value
    messages = [e["item"].get("text") for e in events if e.get("type") == "item.completed"
                and isinstance(e.get("item"), dict) and e["item"].get("type") == "agent_message"]
    final = messages[-1] if messages and isinstance(messages[-1], str) else None
    skills = codex_skills(events) if events else None
    transient = text_cause(error)
    if not completed and not failed and events and events[-1].get("type") == "error":
        # stopped while it waited to reconnect: "Reconnecting... waiting for network (...)"
        waiting = events[-1].get("message")
        transient = text_cause(waiting) if isinstance(waiting, str) else None
        error = waiting if transient is not None else error
    return Reading(usage=shape.usage(tokens), session_id=session, error=error, final=final,
                   skills=skills, transient=transient)


def _tokens(usage: dict[str, Any], shape: Shape) -> dict[str, int]:
    """OpenAI's counts in armbench's names: input_tokens includes the cached ones, output the reasoning."""
    cached = shape.count(usage, "cached_input_tokens")
    tokens = {"input": shape.count(usage, "input_tokens") - cached, "cache_read": cached,
              "output": shape.count(usage, "output_tokens")}
    optional = (("cache_write", "cache_write_input_tokens"), ("reasoning", "reasoning_output_tokens"))
    for ours, theirs in optional:
        value = shape.optional(usage, theirs)
        if value is not None:
            tokens[ours] = value
    return tokens


def _message(event: dict[str, Any], shape: Shape) -> str:
    message = shape.get(event, "error.message", str)
    return message or "turn.failed"
