"""Where an agent CLI keeps its user-level files in a home (`HomeLayout`, which each CLI adapter
declares), and the member's own user-level assets: what each agent CLI reads from the home on
every run.

Under `workflows.isolation: declared` a trial runs in the member's home, so these reach every
arm; armbench's sandbox gives each trial a private home instead, where none of them is.
"""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct

__all__ = ["HomeLayout", "user_assets"]


class HomeLayout(Struct, frozen=True, kw_only=True):
    """One agent CLI's places in a home, relative to it: where armbench delivers the team's
    assets (skills, agents, the instruction file rules and claudemd go to), which login files it
    copies into a trial's private home, where the CLI keeps its session transcripts, and every
    other user-level place the CLI loads (docs/guide/team-assets.md, checked against the pinned
    binaries in tests/agents/test_team_places.py)."""

    instructions: str
    """The instruction file the team's rules and claudemd are written to."""
    skills: str | None = None
    """The folder a skill `<name>/` is written under."""
    agents: str | None = None
    """The folder the team's agents are written to; None: the CLI reads no agents."""
    logins: tuple[str, ...] = ()
    """What the CLI needs to reach its model (its login and provider settings): copied read-only
    into a trial's private home; nothing else of the member's home is."""
    transcripts: str | None = None
    """The folder of its session transcripts (JSON Lines); None: it keeps none armbench reads."""
    also_loads: tuple[str, ...] = ()
    """Other user-level files and folders it loads (armbench delivers nothing there)."""

    def user_places(self) -> tuple[str, ...]:
        """Every user-level place it loads: the instruction file, the skills and agents folders,
        then the others."""
        return (self.instructions, *(p for p in (self.skills, self.agents) if p), *self.also_loads)


def user_assets(home: Path, layout: HomeLayout | None) -> list[str]:
    """The user-level assets a CLI of `layout` (None: a command tool, which has none armbench
    knows of) would load from `home`, home-relative: each instruction file, and each entry of a
    skills or agents folder (hidden ones, such as Codex's bundled `skills/.system`, left out)."""
    found = []
    for place in layout.user_places() if layout is not None else ():
        path = home / place
        if path.is_file():
            found.append(place)
        elif path.is_dir():
            found += [f"{place}/{entry.name}" for entry in sorted(path.iterdir())
                      if not entry.name.startswith(".")]
    return found
