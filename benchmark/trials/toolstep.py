"""What every tool step shares: its room, its sandbox, the files armbench hands it, its logins.

A tool runs in the trial's room (`edge.sandbox.Room`): the clone, and the private home and /tmp
that setup used before it. armbench's files for the tool (the prompt, the usage file) live in the
room's io folder, mounted on its own at `/tmp/.armbench` (the tool's and the team's read-only
folders inside it), so the tool cannot replace it with a link; armbench writes and reads them
there without following a link (`edge.nofollow`). Login files a tool needs to reach its model
are written read-only into the private home once, before the trial's first tool step, with
O_EXCL and O_NOFOLLOW; a later turn never writes them again. Nothing else of the member's home
is there.
"""

from __future__ import annotations

import dataclasses
import json
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from armbench.benchmark.trials.teaminstall import TEAM_DIR_INSIDE, TeamInstall, installed, team_dir
from armbench.edge import nofollow
from armbench.edge.config import armbench_home_in_home
from armbench.edge.limits import Limits
from armbench.edge.proc import step_env
from armbench.edge.runtime import Missing, Shown, missing_runtime
from armbench.edge.sandbox import Launch, Room, Sandbox, member_home
from armbench.edge.usernet import endpoint_hosts, loopback_ports
from armbench.engine.protocol import Lease
from armbench.suites.credentials import credential_problem

__all__ = ["ENVIRONMENT_NAME", "ENVIRONMENT_ROOT", "READ_ONLY_CLONE", "ToolStep", "executable_paths",
           "read_capped"]

_IO = ".armbench"
READ_ONLY_CLONE = "armbench.read_only_clone"
"""A lease `context` key: the step runs in a room of its own (its `cwd`'s) and sees this clone,
read-only, where a trial sees its own (the judge)."""
ENVIRONMENT_ROOT = "armbench.environment_root"
"""A lease `context` key: the task's environment root (`edge.environment`), shown as the step's
`/` instead of the host's root."""
ENVIRONMENT_NAME = "armbench.environment"
"""A lease `context` key: the task's environment as the suite names it (`image: <reference>`),
for messages."""


@dataclass(frozen=True)
class ToolStep:
    """One leased tool step: where it runs and how it is started."""

    room: Room
    launch: Launch
    install: TeamInstall | None = None
    """The trial's team install, read before its tool starts (None: none was made)."""
    logins: tuple[str, ...] = ()
    """The login files the trial's home got (paths relative to the home; never their bytes)."""
    environment: str | None = None
    """The task's environment shown as the step's `/` (as the suite names it); None: the host's."""

    @classmethod
    def start(cls, sandbox: Sandbox, lease: Lease, *, expose: Iterable[Path] = (),
              tool_dir: Path | None = None, credentials: Sequence[str] = (),
              endpoints: Sequence[str] = ()) -> ToolStep:
        """The step's room and launch; the tool's login files written into the private home
        (the trial's first tool step only). A private network is filtered to the tool's
        `endpoints` (its provider's API hosts), the hosts its endpoint variables name and the
        lease's `egress`, unless that says `*`."""
        room = Room.of(Path(lease.cwd or "."))
        root, environment = lease.context.get(ENVIRONMENT_ROOT), None
        if isinstance(root, str) and sandbox.isolation != "declared":
            sandbox = dataclasses.replace(sandbox, root=Path(root))
            environment = str(lease.context.get(ENVIRONMENT_NAME) or f"rootfs: {root}")
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
        sandbox = dataclasses.replace(sandbox, limits=Limits.from_context(lease.context.get("limits")))
        seen = {**os.environ, **lease.env}
        ports = loopback_ports(seen, sandbox.ports)
        egress = None if "*" in lease.egress else (*endpoints, *endpoint_hosts(seen), *lease.egress)
        launch = sandbox.launch(room, network=lease.network, expose=expose, binds=binds,
                                writable=[(room.io, f"/tmp/{_IO}")], ports=ports, egress=egress)
        logins = _logins_once(credentials, room) if sandbox.isolation != "declared" else ()
        return cls(room=room, launch=launch, install=install, logins=logins, environment=environment)

    def lacking(self, program: str | None, search: str) -> Missing | None:
        """What `program` (as the step sees it, or a name on the PATH `search`) needs to start
        that the task's environment neither has nor gets bound in (`edge.runtime`); None when
        nothing is missing, there is no environment, or the program is not known."""
        if program is None or self.environment is None or not self.launch.argv:
            return None
        return missing_runtime(Shown(self.launch.argv), program, search)

    @property
    def team_dir(self) -> str:
        """Where the tool sees the arm's tree of team assets (`$ARMBENCH_TEAM_DIR`), read-only."""
        return TEAM_DIR_INSIDE if self.launch.argv else str(team_dir(self.room))

    def file(self, name: str) -> tuple[Path, str]:
        """A file armbench hands the tool: (its host path, its path as the tool sees it). Host
        side, touch it only through `hand_file`, `take_file` and `drop_file`."""
        seen = f"/tmp/{_IO}/{name}" if self.launch.argv else str(self.room.io / name)
        return self.room.io / name, seen

    def hand_file(self, name: str, data: bytes) -> str:
        """Write a file for the tool in the io folder (whatever the tool left at its name
        removed first, never followed); its path as the tool sees it."""
        nofollow.write_file(self.room.io, name, data, 0o644, replace=True)
        return self.file(name)[1]

    def take_file(self, name: str, limit: int) -> bytes | None:
        """A file the tool wrote in the io folder (read as `nofollow.read_file` reads), then
        removed; None when absent, ValueError when it is a link, not a file, or over `limit`."""
        try:
            return nofollow.read_file(self.room.io, name, limit)
        finally:
            self.drop_file(name)

    def drop_file(self, name: str) -> None:
        """Remove an entry of the io folder (a link itself, a folder with all in it)."""
        nofollow.remove(self.room.io, name)

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
    return nofollow.read_file(path.parent, path.name, limit)


_LOGINS = "logins.json"
"""Beside the room's home (out of every step's sight): the login files it got, once written."""


def _logins_once(credentials: Sequence[str], room: Room) -> tuple[str, ...]:
    """The member's login files (paths relative to the home) written read-only into the trial's
    home, the first time a tool step starts in the room; later steps (a workflow arm's next
    turns, which run after the tool did) only read which ones it got. Each is created with
    O_EXCL and O_NOFOLLOW through folders opened with O_NOFOLLOW, so nothing a step planted
    (a link, a hard link, a file) is ever written through; a path the credentials rule refuses
    (`suites.credentials`) is never copied."""
    done = room.base / _LOGINS
    try:
        return tuple(json.loads(done.read_bytes()))
    except (OSError, ValueError):
        pass
    source_home = member_home()
    guarded = armbench_home_in_home()
    written = []
    for rel in credentials:
        source = source_home / rel
        if credential_problem(rel, guarded) is not None or not source.is_file():
            continue
        try:
            if nofollow.write_file(room.home, rel, source.read_bytes(), stat.S_IRUSR, replace=False):
                written.append(rel)
        except OSError:
            continue  # something of the trial's is in the way: the login is not handed over
    done.write_text(json.dumps(written))
    return tuple(written)
