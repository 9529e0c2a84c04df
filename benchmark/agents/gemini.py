"""Gemini CLI (`gemini`): `gemini -p ... --output-format json`, one object (its errors on stderr)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from armbench.benchmark.agents.base import CliAdapter, Reading, budget_unenforced
from armbench.benchmark.agents.output_shape import Shape, last_json_object
from armbench.benchmark.agents.skills_in_output import gemini_skills
from armbench.benchmark.agents.transient import status_cause, text_cause
from armbench.benchmark.trials.toolstep import ToolStep
from armbench.edge.homelayout import HomeLayout
from armbench.edge.sandbox import Room
from armbench.engine.protocol import Lease

__all__ = ["DENY_ALL", "Gemini", "read_gemini"]

DENY_ALL = '[[rule]]\ntoolName = "*"\ndecision = "deny"\npriority = 999\n'
"""The policy of an answer-only call: every tool denied (Gemini then offers the model none)."""
_POLICY = "answer-only.toml"


class Gemini(CliAdapter):
    """Gemini CLI headless, approving every tool call (`--yolo`) in a folder it trusts for this run."""

    name = "gemini"
    endpoints = ("generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com")
    """The Gemini API, Code Assist (a Google login's), and its token refresh."""
    layout = HomeLayout(instructions=".gemini/GEMINI.md", skills=".gemini/skills",
                        logins=(".gemini/oauth_creds.json", ".gemini/google_accounts.json",
                                ".gemini/settings.json"), also_loads=(".agents/skills",))
    home_vars = {"GEMINI_CLI_HOME": ""}
    prompt_on_stdin = False
    answer_gaps = ()

    def argv(self, lease: Lease) -> list[str]:
        args = ["--output-format", "json", "--yolo", "--skip-trust"]
        if self.answer_only:  # read-only mode, and a policy (handed in the step) denying every tool
            args = ["--output-format", "json", "--approval-mode", "plan", "--skip-trust",
                    "--policy", self._policy(lease)]
        if lease.model:
            args += ["--model", lease.model]
        return [*args, f"--prompt={lease.prompt or ''}"]

    def hand(self, step: ToolStep, lease: Lease) -> dict[str, str]:
        if self.answer_only:
            step.hand_file(_POLICY, DENY_ALL.encode())
        return super().hand(step, lease)

    def _policy(self, lease: Lease) -> str:
        """Where the step sees the policy `hand` writes (`ToolStep.file`'s place)."""
        host = Room.of(Path(lease.cwd or ".")).io / _POLICY
        return str(host) if self.sandbox.isolation == "declared" else f"/tmp/.armbench/{_POLICY}"

    def unenforced(self, lease: Lease) -> list[str]:
        limits = ["max_turns"] if lease.max_turns is not None else []
        return limits + (["effort"] if lease.effort else []) + budget_unenforced(lease)

    def read(self, stdout: str, stderr: str) -> Reading:
        return read_gemini(stdout, stderr)


def read_gemini(stdout: str, stderr: str) -> Reading:
    """Read Gemini's object: session_id, stats.models token counts summed, an `error` object."""
    shape = Shape("gemini")
    try:
        result = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        result = None
    if not isinstance(result, dict):
        result = last_json_object(stderr)  # a failed run prints its error object on stderr
    if result is None:
        shape.problem("no JSON object on stdout or at the end of stderr")
        return Reading(usage=shape.usage({}))
    session = shape.get(result, "session_id", str)
    error = _message(result.get("error")) if "error" in result else None
    transient = _transient(result.get("error")) if error is not None else None
    if "stats" not in result and error is not None:
        shape.problem("no `stats`, so no usage: the run ended with an error")
        return Reading(usage=shape.usage({}), session_id=session, error=error, transient=transient)
    models = shape.get(result, "stats.models", dict) or {}
    tokens: dict[str, int] = {}
    for model in models:
        for key, value in _tokens(shape.get(models, (model, "tokens"), dict) or {}, shape).items():
            tokens[key] = tokens.get(key, 0) + value
    main = max(sorted(models), key=lambda m: _rank(models[m])) if models else None
    final = result.get("response")
    skills, unclear = gemini_skills(result)
    return Reading(usage=shape.usage(tokens), model=main, session_id=session, error=error,
                   final=final if isinstance(final, str) else None, skills=skills,
                   skills_unclear=unclear, transient=transient)


def _tokens(counts: dict[str, Any], shape: Shape) -> dict[str, int]:
    """Gemini's counts in armbench's names: prompt includes the cached, thoughts are output too."""
    cached, thoughts = shape.count(counts, "cached"), shape.count(counts, "thoughts")
    tool = shape.optional(counts, "tool") or 0
    return {"input": shape.count(counts, "prompt") - cached + tool, "cache_read": cached,
            "output": shape.count(counts, "candidates") + thoughts, "reasoning": thoughts}


def _rank(stats: Any) -> tuple[bool, int]:
    """The main model: the one serving the `main` role, then the one with the most output."""
    if not isinstance(stats, dict):
        return (False, 0)
    roles = stats.get("roles")
    out = stats.get("tokens", {}).get("candidates") if isinstance(stats.get("tokens"), dict) else 0
    return (isinstance(roles, dict) and "main" in roles, out if isinstance(out, int) else 0)


def _transient(error: Any) -> str | None:
    """The error object's provider cause: its `code` is the HTTP status (429, 529, 500), or 1
    with `fetch failed sending request` when the connection failed."""
    code = error.get("code") if isinstance(error, dict) else None
    cause = status_cause(code) if isinstance(code, int) else None
    return cause or text_cause(_message(error))


def _message(error: Any) -> str:
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else str(error)
