"""Where each built-in CLI reads a member's user-level assets, as files under the trial's home.

Checked against the pinned binaries (tests/agents/test_team_places.py, against the mock model),
relative to the home:

- claude: skills in `.claude/skills/<name>/`, rules and claudemd in `.claude/CLAUDE.md`,
  agents in `.claude/agents/`;
- codex: skills in `.codex/skills/<name>/`, rules and claudemd in `.codex/AGENTS.md`, no agents;
- opencode: skills in `.config/opencode/skills/<name>/`, rules and claudemd in
  `.config/opencode/AGENTS.md`, agents in `.config/opencode/agents/`;
- gemini: skills in `.gemini/skills/<name>/`, rules and claudemd in `.gemini/GEMINI.md`, no agents.

docs/ has no native place in any of them: every tool finds it under `$ARMBENCH_TEAM_DIR/docs`.
A command tool gets only `$ARMBENCH_TEAM_DIR`.
"""

from __future__ import annotations

from typing import NamedTuple

from suites.teamassets import TeamAssets, instructions

__all__ = ["PLACES", "Places", "home_files"]


class Places(NamedTuple):
    """One CLI's user-level folders and instruction file, relative to its home."""

    skills: str | None
    instructions: str
    agents: str | None


PLACES = {
    "claude": Places(skills=".claude/skills", instructions=".claude/CLAUDE.md", agents=".claude/agents"),
    "codex": Places(skills=".codex/skills", instructions=".codex/AGENTS.md", agents=None),
    "opencode": Places(skills=".config/opencode/skills", instructions=".config/opencode/AGENTS.md",
                       agents=".config/opencode/agents"),
    "gemini": Places(skills=".gemini/skills", instructions=".gemini/GEMINI.md", agents=None),
}


def home_files(tool: str, assets: TeamAssets) -> dict[str, bytes]:
    """The files to write under the trial's home for `tool` (none for a command tool)."""
    places = PLACES.get(tool)
    if places is None:
        return {}
    files: dict[str, bytes] = {}
    if places.skills:
        files |= {f"{places.skills}/{name}/{inner}": data for name, inner_files in assets.skills.items()
                  for inner, data in inner_files.items()}
    if places.agents:
        files |= {f"{places.agents}/{name}": data for name, data in assets.agents.items()}
    text = instructions(assets)
    if text:
        files[places.instructions] = text
    return files
