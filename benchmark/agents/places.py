"""The team's assets as files under a trial's home, where each built-in CLI reads them: its
adapter's `HomeLayout` (skills in its skills folder, one folder a skill; the team's agents in its
agents folder, when it reads agents; rules and claudemd joined into its instruction file).

Checked against the pinned binaries (tests/agents/test_team_places.py, against the mock model).
docs/ has no native place in any of them: every tool finds it under `$ARMBENCH_TEAM_DIR/docs`.
A command tool gets only `$ARMBENCH_TEAM_DIR`.
"""

from __future__ import annotations

from armbench.benchmark.agents import LAYOUTS
from armbench.suites.teamassets import TeamAssets, instructions

__all__ = ["home_files"]


def home_files(tool: str, assets: TeamAssets) -> dict[str, bytes]:
    """The files to write under the trial's home for `tool` (none for a command tool)."""
    places = LAYOUTS.get(tool)
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
