"""Which skills an agent loaded, read from each CLI's own output.

- Claude Code (`--output-format stream-json --verbose`): an assistant `tool_use` named `Skill`,
  its input's `skill`.
- Codex (`exec --json`): a `command_execution` item whose command reads `skills/<name>/SKILL.md`
  (Codex has no skill tool; its model reads the file through the shell).
- OpenCode (`run --format json`): a `tool_use` whose `part.tool` is `skill`, its input's `name`.
- Gemini CLI (`--output-format json`): `stats.tools.byName.activate_skill` counts loads but names
  none, so a load it shows leaves every delivered skill `unknown`.

Each returns (names loaded, whether a load was seen that names none), or None for names when the
output says nothing readable about the run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = ["claude_skills", "codex_skills", "gemini_skills", "opencode_skills"]

_SKILL_FILE = re.compile(r"skills/([A-Za-z0-9._-]+)/SKILL\.md")


def claude_skills(events: Iterable[Any]) -> tuple[str, ...]:
    """Skill tool calls in Claude Code's stream-json events."""
    names = []
    for event in events:
        if not isinstance(event, dict) or event.get("type") != "assistant":
            continue
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("name") == "Skill":
                given = block.get("input")
                name = given.get("skill") if isinstance(given, dict) else None
                if isinstance(name, str):
                    names.append(name.split(":")[-1])
    return tuple(dict.fromkeys(names))


def codex_skills(events: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """SKILL.md files Codex's shell commands read."""
    names = []
    for event in events:
        item = event.get("item")
        if event.get("type") == "item.completed" and isinstance(item, dict) \
                and item.get("type") == "command_execution" and isinstance(item.get("command"), str):
            names += _SKILL_FILE.findall(item["command"])
    return tuple(dict.fromkeys(names))


def opencode_skills(events: Iterable[dict[str, Any]]) -> tuple[str, ...]:
    """OpenCode's `skill` tool calls."""
    names = []
    for event in events:
        part = event.get("part")
        if event.get("type") != "tool_use" or not isinstance(part, dict) or part.get("tool") != "skill":
            continue
        state = part.get("state")
        given = state.get("input") if isinstance(state, dict) else None
        name = given.get("name") if isinstance(given, dict) else None
        if isinstance(name, str):
            names.append(name)
    return tuple(dict.fromkeys(names))


def gemini_skills(result: dict[str, Any]) -> tuple[tuple[str, ...], bool]:
    """Gemini's stats: no names, only whether `activate_skill` ran."""
    stats = result.get("stats")
    tools = stats.get("tools") if isinstance(stats, dict) else None
    by_name = tools.get("byName") if isinstance(tools, dict) else None
    ran = isinstance(by_name, dict) and "activate_skill" in by_name
    return (), ran
