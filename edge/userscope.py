"""The member's own user-level assets: what each agent CLI reads from the home on every run.

Under `workflows.isolation: declared` a trial runs in the member's home, so these reach every
arm; armbench's sandbox gives each trial a private home instead, where none of them is.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["USER_PLACES", "user_assets"]

USER_PLACES: dict[str, tuple[str, ...]] = {
    "claude": (".claude/CLAUDE.md", ".claude/skills", ".claude/agents", ".claude/rules"),
    "codex": (".codex/AGENTS.md", ".codex/skills", ".agents/skills"),
    "opencode": (".config/opencode/AGENTS.md", ".config/opencode/agent", ".config/opencode/agents",
                 ".config/opencode/skill", ".config/opencode/skills"),
    "gemini": (".gemini/GEMINI.md", ".gemini/skills", ".agents/skills"),
}
"""Per built-in CLI, the home-relative files and folders of user-level instructions, skills and
agents it loads (docs/guide/team-assets.md); a command tool has none armbench knows of."""


def user_assets(home: Path, tool: str) -> list[str]:
    """The user-level assets `tool` would load from `home`, home-relative: each instruction file,
    and each entry of a skills or agents folder (hidden ones, such as Codex's bundled
    `skills/.system`, left out)."""
    found = []
    for place in USER_PLACES.get(tool, ()):
        path = home / place
        if path.is_file():
            found.append(place)
        elif path.is_dir():
            found += [f"{place}/{entry.name}" for entry in sorted(path.iterdir())
                      if not entry.name.startswith(".")]
    return found
