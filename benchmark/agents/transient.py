"""Whose failure a failed prompt was: the provider's or the network's (transient: trying again
later may well succeed) or the agent's own.

Each CLI says it its own way; what follows is what each pinned CLI printed against a model
answering 429, 529 and 500 and against a port that refused the connection
(`tests/agents/test_parsers.py` holds the adapters to those outputs):

- Claude Code: the `result` object's `api_error_status` (429, 529, 500), `null` with
  `API Error: Unable to connect to API (ConnectionRefused)` when it could not connect.
- Codex: `turn.failed` with `exceeded retry limit, last status: 429 Too Many Requests`,
  `unexpected status 529 ...`, `We're currently experiencing high demand, ...` for a 500; when
  the connection fails it prints `Reconnecting... waiting for network (Connection failed: error
  sending request)` and waits, until the trial's time limit stops it.
- OpenCode: an `error` event whose `error.data.statusCode` is the HTTP status (with
  `isRetryable`).
- Gemini CLI: the error object's `code` is the HTTP status (and the exit code that status
  modulo 256); `fetch failed sending request` when it could not connect.
- A command tool: exit 75 (`EX_TEMPFAIL`, sysexits.h) or `"transient": true` in its usage file.
"""

from __future__ import annotations

import re

__all__ = ["EX_TEMPFAIL", "TRANSIENT_CAUSES", "status_cause", "text_cause"]

EX_TEMPFAIL = 75
"""The exit code (sysexits.h) by which a command tool says its failure was transient."""

TRANSIENT_CAUSES = {
    "rate_limited": "the provider's rate limit (HTTP 429)",
    "overloaded": "the provider was overloaded (HTTP 529 or 503)",
    "server_error": "the provider's server failed (HTTP 5xx)",
    "network": "the connection to the provider failed",
    "tempfail": "the tool said its failure was transient (exit 75 or `transient: true`)",
}
"""Every transient cause a report can carry, and what it means."""

_NETWORK = re.compile(
    r"unable to connect|connection (?:error|refused|reset|closed)|econnreset|econnrefused"
    r"|etimedout|socket hang up|fetch failed|stream disconnected|error sending request"
    r"|network error", re.IGNORECASE)
_STATUS = re.compile(r"(?:status|API Error:|\()\s*:?\s*(\d{3})\b")
_BUSY = re.compile(r"high demand|overloaded|too many requests|rate limit", re.IGNORECASE)


def status_cause(status: int | None) -> str | None:
    """The transient cause an HTTP status names, or None (a 4xx other than 429 is the request's
    own fault: a bad key, a bad model, a prompt too long)."""
    if status is None:
        return None
    if status == 429:
        return "rate_limited"
    if status in (503, 529):
        return "overloaded"
    if 500 <= status < 600 and status != 501:
        return "server_error"
    return None


def text_cause(text: str | None) -> str | None:
    """The transient cause a CLI's error message names (a status in it, a busy provider, a
    failed connection), or None."""
    if not text:
        return None
    for match in _STATUS.finditer(text):
        cause = status_cause(int(match.group(1)))
        if cause is not None:
            return cause
    if _NETWORK.search(text):
        return "network"
    if _BUSY.search(text):
        return "rate_limited" if re.search(r"rate limit|too many", text, re.IGNORECASE) \
            else "overloaded"
    return None
