"""A trial's team install: the arm's team assets in the trial's own home, and its tree for tools.

At lease the host writes the arm's assets into the room's private home, in the places the arm's
tool reads a member's user-level assets (`benchmark.agents.places`), and the tree of delivered
assets beside the room (`<room>/team`, shown read-only at `$ARMBENCH_TEAM_DIR`; empty for a
`none` arm). `<room>/team.json` says what was installed; the tool step reads it back before its
tool starts, so the revision a trial records is the one its install holds. The member's checkout,
pull record and home are never written.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

import msgspec

from armbench.edge import nofollow
from armbench.edge.sandbox import Room

__all__ = ["TEAM_DIR_INSIDE", "TeamInstall", "install_team", "installed", "team_dir"]

TEAM_DIR_INSIDE = "/tmp/.armbench/team"
"""Where a sandboxed step sees the team tree."""


class TeamInstall(msgspec.Struct, frozen=True, kw_only=True):
    """What a trial's install holds."""

    kind: Literal["pulled", "ref", "without", "none"]
    """The arm's team choice."""
    revision: str | None = None
    """The team commit the assets were read from (None for `none`)."""
    skills: dict[str, str] = {}
    """Skill name -> digest of its folder, as installed."""
    changes: dict[str, Literal["added", "removed", "changed"]] = {}
    """The skills this install adds, removes or changes against the baseline team revision."""
    assets_hash: str | None = None
    """sha256 of the delivered tree (`suites.teamassets.assets_hash`; None for `none`)."""
    roles: list[str] | None = None
    """The member's roles and projects the assets were delivered for (None for `none`)."""


def team_dir(room: Room) -> Path:
    """The host folder holding the arm's tree of delivered assets."""
    return room.base / "team"


def _manifest(room: Room) -> Path:
    return room.base / "team.json"


def install_team(room: Room, install: TeamInstall, tree: dict[str, bytes],
                 home: dict[str, bytes]) -> None:
    """Write the tree beside the room (read-only), the tool's files into the private home, and the
    manifest last (a trial with no manifest has no install)."""
    root = team_dir(room)
    _write(root, tree)
    for rel, data in home.items():  # the trial's home: setup ran there, so no link is followed
        if not (Path(rel).is_absolute() or ".." in Path(rel).parts):
            nofollow.write_file(room.home, rel, data, 0o644, replace=True)
    for folder, dirs, names in os.walk(root):
        for name in names:
            Path(folder, name).chmod(stat.S_IRUSR)
        for name in dirs:
            Path(folder, name).chmod(stat.S_IRUSR | stat.S_IXUSR)
    root.chmod(stat.S_IRUSR | stat.S_IXUSR)
    _manifest(room).write_bytes(msgspec.json.encode(install))


def installed(room: Room) -> TeamInstall | None:
    """The install's manifest (None: no team was installed in this room)."""
    try:
        return msgspec.json.decode(_manifest(room).read_bytes(), type=TeamInstall)
    except (OSError, msgspec.DecodeError):
        return None


def _write(base: Path, files: dict[str, bytes]) -> None:
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    for rel, data in files.items():
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            continue
        target = base / rel
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        target.write_bytes(data)
