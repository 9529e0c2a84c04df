"""What every tool step shares: its room, its sandbox, the files armbench hands it, its logins.

A tool runs in the trial's room (`edge.sandbox.Room`): the clone, and the private home and /tmp
that setup used before it. armbench's files for the tool (the prompt, the usage file, the tool's
folder) live under the room's /tmp in `.armbench/`, so the tool sees them at `/tmp/.armbench/...`
and armbench reads them back on the host. Login files a tool needs to reach its model are copied
read-only into the private home; nothing else of the member's home is there.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmark.trials.teaminstall import TEAM_DIR_INSIDE, TeamInstall, installed, team_dir
from edge.proc import step_env
from edge.sandbox import Launch, Room, Sandbox, member_home
from engine.protocol import Lease

__all__ = ["ENVIRONMENT_ROOT", "READ_ONLY_CLONE", "ToolStep", "executable_paths", "read_capped"]

_IO = ".armbench"
READ_ONLY_CLONE = "armbench.read_only_clone"
"""A lease `context` key: the step runs in a room of its own (its `cwd`'s) and sees this clone,
read-only, where a trial sees its own (the judge)."""
ENVIRONMENT_ROOT = "armbench.environment_root"
"""A lease `context` key: the task's environment root (`edge.environment`), shown as the step's
`/` instead of the host's root."""


@dataclass(frozen=True)
class ToolStep:
    """One leased tool step: where it runs and how it is started."""

    room: Room
    launch: Launch
    install: TeamInstall | None = None
    """The trial's team install, read before its tool starts (None: none was made)."""

    @classmethod
    def start(cls, sandbox: Sandbox, lease: Lease, *, expose: Iterable[Path] = (),
              tool_dir: Path | None = None, credentials: Sequence[str] = ()) -> ToolStep:
        """The step's room and launch; copies the tool's login files into the private home."""
        room = Room.of(Path(lease.cwd or "."))
        root = lease.context.get(ENVIRONMENT_ROOT)
        if isinstance(root, str) and sandbox.isolation != "declared":
            sandbox = dataclasses.replace(sandbox, root=Path(root))
        shown = lease.context.get(READ_ONLY_CLONE)
        if shown is not None and sandbox.isolation != "declared":
            room = dataclasses.replace(room, clone=Path(shown), read_only=True)
        room = room.make()
        install = installed(room)
        team = team_dir(room)
        if install is None and not team.exists():
            team.mkdir(mode=0o500)  # no install: an empty team folder
        binds = [(tool_dir, f"/tmp/{_IO}/tool")] if tool_dir and sandbox.isolation != "declared" else []
        if sandbox.isolation != "declared":
            binds.append((team, TEAM_DIR_INSIDE))
        launch = sandbox.launch(room, network=lease.network, expose=expose, binds=binds)
        if sandbox.isolation != "declared":
            _copy_logins(credentials, room.home)
        (room.tmp / _IO).mkdir(parents=True, exist_ok=True)
        return cls(room=room, launch=launch, install=install)

    @property
    def team_dir(self) -> str:
        """Where the tool sees the arm's tree of team assets (`$ARMBENCH_TEAM_DIR`), read-only."""
        return TEAM_DIR_INSIDE if self.launch.argv else str(team_dir(self.room))

    def file(self, name: str) -> tuple[Path, str]:
        """A file armbench hands the tool: (its host path, its path as the tool sees it)."""
        return self.room.tmp / _IO / name, f"{self.launch.tmp}/{_IO}/{name}"

    def tool_dir(self, host: Path) -> str:
        """Where the tool sees its read-only folder."""
        return str(host) if not self.launch.argv else f"/tmp/{_IO}/tool"

    def env(self, lease: Lease, extra: dict[str, str]) -> dict[str, str]:
        """The member's environment without the withheld variables, plus the lease's, the
        sandbox's (home, temp folder) and the tool's own."""
        return step_env(os.environ, withhold=lease.withhold,
                        extra={**lease.env, **extra, **self.launch.env})


def executable_paths(executable: str) -> list[Path]:
    """What a sandboxed step needs to see to run an executable: its folder, and the folder of the
    file it resolves to (for a Node.js CLI, the whole `node_modules` it lives in)."""
    exe = Path(executable)
    real = exe.resolve()
    found = [exe.parent, real.parent]
    for parent in real.parents:
        if parent.name == "node_modules":
            found.append(parent)
            break
    return found


def read_capped(path: Path, limit: int) -> bytes | None:
    """A file the tool wrote, read without following a link it may have planted; None if absent,
    or a ValueError when it is not a regular file or is over `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValueError(f"it could not be opened as a regular file ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError("it is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"it is over {limit} bytes")
    return data


def _copy_logins(credentials: Sequence[str], home: Path) -> None:
    """Copy the member's login files (paths relative to the home) read-only into the trial's home."""
    source_home = member_home()
    for rel in credentials:
        source = source_home / rel
        if not source.is_file() or Path(rel).is_absolute() or ".." in Path(rel).parts:
            continue
        target = home / rel
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.copyfile(source, target)
        target.chmod(stat.S_IRUSR)
