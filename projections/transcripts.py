"""A kept transcript as readable turns: who spoke, the tool calls with their arguments and
results, each cut where long.

Claude Code's session files and Codex's rollout files are JSON Lines, read by their shapes; any
other transcript (a command tool's stdout and stderr, a CLI's printed stream) is one turn of
text. Pure: it reads the bytes it is given.
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["Turn", "render_turns", "turns_of"]

_CUT = 2000
"""The most characters of one turn's text shown; the rest is said cut."""


class Turn(msgspec.Struct, frozen=True, kw_only=True):
    """One turn of a transcript."""

    who: str
    """user, assistant, tool call, tool result, or output."""
    text: str
    name: str | None = None
    """The tool's name, for a tool call."""


def _cut(text: str, limit: int = _CUT) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters cut]"


def _json(value: Any) -> str:
    try:
        return msgspec.json.encode(value).decode()
    except (TypeError, msgspec.EncodeError):
        return str(value)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c.get("text", c.get("content", ""))) if isinstance(c, dict)
                         else str(c) for c in content)
    return "" if content is None else _json(content)


def _claude(entry: dict[str, Any]) -> list[Turn]:
    kind = entry.get("type")
    message = entry.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [Turn(who=str(kind), text=_cut(content))]
    out: list[Turn] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and str(block.get("text", "")).strip():
            out.append(Turn(who=str(kind), text=_cut(str(block["text"]))))
        elif btype == "tool_use":
            out.append(Turn(who="tool call", name=str(block.get("name")),
                            text=_cut(_json(block.get("input")))))
        elif btype == "tool_result":
            out.append(Turn(who="tool result", text=_cut(_text_of(block.get("content")))))
    return out


def _codex(entry: dict[str, Any]) -> list[Turn]:
    payload = entry.get("payload") if entry.get("type") == "response_item" else entry
    if not isinstance(payload, dict):
        return []
    kind = payload.get("type")
    if kind == "message" and payload.get("role") in ("user", "assistant"):
        text = _text_of(payload.get("content"))
        if text.strip() and not text.lstrip().startswith("<environment_context>"):
            return [Turn(who=str(payload["role"]), text=_cut(text))]
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        args = payload.get("arguments", payload.get("input", payload.get("action")))
        return [Turn(who="tool call", name=str(payload.get("name", kind)),
                     text=_cut(args if isinstance(args, str) else _json(args)))]
    elif kind in ("function_call_output", "custom_tool_call_output"):
        out = payload.get("output")
        if isinstance(out, str):
            try:
                decoded = msgspec.json.decode(out)
                out = decoded.get("output", out) if isinstance(decoded, dict) else out
            except msgspec.DecodeError:
                pass
        return [Turn(who="tool result", text=_cut(_text_of(out)))]
    return []


def turns_of(data: bytes) -> list[Turn]:
    """The transcript's turns: JSON Lines of Claude Code or Codex read by shape; anything else
    one `output` turn."""
    entries: list[dict[str, Any]] = []
    for line in data.splitlines():
        if not line.strip():
            continue
        try:
            entry = msgspec.json.decode(line)
        except msgspec.DecodeError:
            entries = []
            break
        if isinstance(entry, dict):
            entries.append(entry)
    turns: list[Turn] = []
    for entry in entries:
        turns += _claude(entry) if "message" in entry else _codex(entry)
    if turns:
        return turns
    text = data.decode(errors="replace")
    return [Turn(who="output", text=_cut(text, 64 * 1024))] if text.strip() else []


def render_turns(turns: list[Turn]) -> str:
    """The turns as text: `[who] text`, a tool call with its name, each indented."""
    lines: list[str] = []
    for t in turns:
        head = f"[{t.who}{': ' + t.name if t.name else ''}]"
        lines.append(head)
        lines += [f"  {line}" for line in t.text.splitlines()]
    return "\n".join(lines) + ("\n" if lines else "")
