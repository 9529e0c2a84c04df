"""Where a trial's steps run: a bubblewrap sandbox that shows a step nothing but its clone.

Every process armbench starts for a trial (setup, the tool, the check) runs through a `Sandbox`:

- `bubblewrap` (the default): new mount, PID, IPC and UTS namespaces, `--die-with-parent`, no
  capabilities; a root built from an allowlist of the host's, read-only (`host_root`: the system
  folders and the toolchains on PATH, no `/home`, `/srv`, `/var`, `/run` or other part); the
  member's home replaced by the trial's private home and `/tmp` by the trial's private `/tmp`
  (host folders of the trial's `Room`, removed with it);
  the clone bound read-write at `/tmp/<name>` (read-only for a `Room` that says so: the
  judge's); a `/proc` of its own, so no armbench process is visible; a private network
  (`network="private"`, the trial tool's default: `edge.usernet`) that reaches out but not the
  host's loopback or abstract sockets, bar the forwarded ports; limits of its own on processes
  and memory (`edge.limits`); and none of armbench's state (the checkout, `.armbench/`,
  `~/.armbench/`, the work folder, armbench's installation) mounted at all: each is covered by an
  empty tmpfs. A check (`fresh=True`) gets an empty home and `/tmp` instead, no network, and the
  fixed environment of `CHECK_ENV` with a PATH of read-only system folders.
- `declared` (`workflows.isolation: declared`): no sandbox; steps run on the host as the member
  (the machine itself is declared to be the sandbox).

The second backend slot (a container, a remote VM) is this module's interface: `launch` returns
how a step is started and where it sees its paths; `edge.proc.run_step` does the rest.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from armbench.edge.config import Checkout, ProjectConfig, WorkflowsConfig, armbench_home
from armbench.edge.egress import proxy_env, proxy_for
from armbench.edge.errors import SandboxUnavailable
from armbench.edge.limits import Limits
from armbench.edge.overlay import entered
from armbench.edge.pycache import PREFIX
from armbench.edge.usernet import PrivateNet

__all__ = ["CHECK_ENV", "HOST_SHOWN", "Isolation", "Launch", "Network", "Room", "Sandbox",
           "host_root", "installation_paths",
           "for_checkout", "member_home", "probe", "local_repo", "repo_name", "root_binds"]

Isolation = Literal["bubblewrap", "declared"]
Network = Literal["host", "none", "private"]

CHECK_ENV: dict[str, str] = {
    "PYTHONNOUSERSITE": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}
"""Set for every sandboxed check: no user site-packages; no global or system git config. A check
of a tree an agent wrote (`Sandbox.agent_tree`) also gets `PYTHONPYCACHEPREFIX`: Python's
bytecode read from and written to the check's own empty /tmp, never a `__pycache__` of the tree
(where a tool could plant an unchecked-hash `.pyc` compiled from a fixed source, which the diff
never shows), the system Pythons' own shown there read-only (`edge.pycache`)."""
_SYSTEM_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
HOST_SHOWN = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt", "sys", "nix",
              "snap", "gnu")
"""The host's top-level folders every step sees, read-only: the system's and its toolchains'
(Node or a CI runner's tool cache under `/opt`, Nix's and Guix's stores, snaps). The rest of the
host's root is not there at all: no `/home`, `/root`, `/srv`, `/mnt`, `/media`, `/run` (so no
filesystem socket of the host: PostgreSQL's, D-Bus's, Docker's), no `/var` but `_VAR_SHOWN`."""
_VAR_SHOWN = ("var/lib/ca-certificates", "var/lib/pki")
"""What of `/var` a toolchain reads (some systems' certificate stores); `/var/tmp` is an empty,
read-only folder, as the host's was to a step before (`TMPDIR` is the step's own `/tmp`)."""
_TOOL_CACHES = ("RUNNER_TOOL_CACHE", "AGENT_TOOLSDIRECTORY")
"""Variables naming a CI runner's tool cache (GitHub's, Azure's), shown like a PATH folder."""
_OWN = ("dev", "proc", "tmp")
"""Top-level folders a step gets its own of, never the host's."""


@dataclass(frozen=True)
class Room:
    """One trial's host folders: its clone, the private home and /tmp its steps share, and the
    folder armbench hands a tool's files through (`io`, its own mount at `/tmp/.armbench`)."""

    clone: Path
    home: Path
    tmp: Path
    read_only: bool = False
    """The clone is mounted read-only (a judge reading a trial's clone from a room of its own)."""

    @classmethod
    def of(cls, clone: Path) -> Room:
        """The room of a clone made at `<work>/clones/<key>`: `<work>/rooms/<key>/{home,tmp}`."""
        base = clone.parent.parent / "rooms" / clone.name
        return cls(clone=clone, home=base / "home", tmp=base / "tmp")

    @property
    def base(self) -> Path:
        """The folder holding home and tmp."""
        return self.home.parent

    @property
    def io(self) -> Path:
        """The folder of the prompt and usage files: beside home and tmp, never inside them, so
        a step can write in it but cannot replace it with a link (it is a mount point)."""
        return self.base / "io"

    def make(self) -> Room:
        """Create the private home, /tmp and the io folder (owner only)."""
        for folder in (self.home, self.tmp, self.io):
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self


@dataclass(frozen=True)
class Launch:
    """How one step starts: the argv before `/bin/bash -c`, the variables it gets, where it is."""

    argv: list[str]
    """The sandbox's command line, ending in `--`; empty when declared."""
    cwd: Path
    """The host folder the process starts in."""
    env: dict[str, str]
    """Variables that replace the step's own (HOME, TMPDIR, PATH, ...)."""
    clone: str
    """The clone's path as the step sees it."""
    tmp: str
    """The room's /tmp as the step sees it (where armbench puts the prompt and usage files)."""
    limits: Limits | None = None
    """The step's limits (`edge.limits`); None when declared."""
    net: PrivateNet | None = None
    """The step's private network and the loopback ports forwarded into it; None: the host's
    network or none."""
    enter: tuple[str, ...] = ()
    """The command line prefix that starts the sandbox in the namespaces the clone is mounted
    in (`edge.overlay`: a clone that is an overlay), for `edge.proc.run_step`'s `enter`; empty
    for a clone on the host."""
    egress: tuple[str, ...] | None = None
    """The hosts a filtered private network's proxy lets the step reach (`edge.egress`); None:
    not filtered."""


def member_home() -> Path:
    """The member's home folder: `$HOME`, else the password database's."""
    return Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir)


@dataclass(frozen=True)
class Sandbox:
    """Starts a trial's steps isolated as configured (`workflows.isolation`)."""

    isolation: Isolation = "bubblewrap"
    hide: tuple[Path, ...] = ()
    """Host folders no step may see (armbench's state and installation): covered by a tmpfs."""
    read: tuple[Path, ...] = ()
    """Host folders shown read-only in every step (`workflows.sandbox_read`)."""
    write: tuple[Path, ...] = ()
    """Host folders shown read-write in every step, shared by all trials (`workflows.sandbox_write`)."""
    name: str = "project"
    """The clone's folder name inside the sandbox: `/tmp/<name>`."""
    home: Path = field(default_factory=member_home)
    bwrap: str = field(default_factory=lambda: os.environ.get("ARMBENCH_BWRAP", "bwrap"))
    root: Path | None = None
    """The task's environment (`edge.environment`): this folder is shown read-only as `/` instead
    of the host's root; None shows the host's."""
    limits: Limits = Limits()
    """Each sandboxed step's limits (the plan's `trial.limits`, else armbench's defaults)."""
    ports: tuple[int, ...] = ()
    """Host loopback ports forwarded into every private network (`workflows.sandbox_ports`)."""
    pycache: Path | None = None
    """The system Pythons' bytecode (`edge.pycache.seed`), shown read-only under every check's
    pycache prefix so a check does not compile the standard library again; None: checks compile
    what they import."""
    agent_tree: bool = True
    """Whether a check's tree may hold what an agent wrote (a trial's): then its Python reads no
    bytecode from the tree. False for `try`, `task new` and `task harvest`, whose checks run on
    commits of the history: their `__pycache__` is setup's or the check's own."""

    def launch(self, room: Room, *, fresh: bool = False, network: Network = "host",
               expose: Iterable[Path] = (), binds: Sequence[tuple[Path, str]] = (),
               writable: Sequence[tuple[Path, str]] = (), ports: Iterable[int] = (),
               egress: Sequence[str] | None = None) -> Launch:
        """How to start one step in `room`; `fresh` for a check (empty home and /tmp, no network).

        `expose` are host paths the step needs read-only (a tool's executable); `binds` map host
        paths read-only to paths under the room's /tmp (a tool's folder); `writable` map host
        folders read-write (mounted before `binds`, which may lie inside them). A mount point
        cannot be renamed or removed from inside, so a step cannot put a link in its place.
        `ports` are the host loopback ports forwarded into a private network. `egress` filters
        it: the hosts its HTTP and HTTPS may reach through armbench's proxy (`edge.egress`),
        and nothing else beyond `ports`; None: it reaches out as the host does.
        """
        if self.isolation == "declared":
            return Launch(argv=[], cwd=room.clone, env={}, clone=str(room.clone), tmp=str(room.tmp))
        cwd = room.clone
        enter: tuple[str, ...] = ()
        into = entered(room.clone)
        if into is not None:  # an overlay, seen only inside its holder's namespaces: start there
            enter, room = into.enter, Room(clone=into.inner(room.clone), home=into.inner(room.home),
                                           tmp=into.inner(room.tmp), read_only=room.read_only)
            expose = [into.inner(p) for p in expose]
            binds = [(into.inner(h), inside) for h, inside in binds]
            writable = [(into.inner(h), inside) for h, inside in writable]
        mount = f"/tmp/{self.name}"
        paths = _Paths()
        read, exposed = paths.existing(self.read), self._exposable(expose, paths)
        covers: list[str] = []
        if self.root is None:  # the host's allowlisted folders, and no other part of its root
            showing, shown_roots = host_root(self.toolchains())
            argv = [self.bwrap, *showing, "--dev", "/dev", "--tmpfs", "/dev/shm", "--proc", "/proc"]
            covers = _covers([h for h in [Path(tempfile.gettempdir()), *self.hide]
                              if any(paths.within(h, r) for r in [*shown_roots, *read])], paths)
        else:  # the host's own folders are not there at all: nothing of it to cover
            needed = [Path("/dev"), Path("/proc"), Path("/tmp"), self.home, *read, *exposed,
                      *paths.existing(self.write), *(Path(inside) for _, inside in writable)]
            argv = [self.bwrap, *root_binds(self.root, needed), "--dev", "/dev", "--tmpfs",
                    "/dev/shm", "--proc", "/proc"]
        if fresh:  # /tmp first: a home inside /tmp is then made inside the private /tmp
            argv += ["--tmpfs", "/tmp", "--tmpfs", str(self.home)]
            if self.agent_tree and self.pycache is not None and self.root is None:
                argv += ["--ro-bind", str(self.pycache), f"{PREFIX}/usr"]  # the host's bytecode
        else:
            argv += ["--bind", str(room.tmp), "/tmp", "--bind", str(room.home), str(self.home)]
        for path in read:  # then armbench's state covered where a shown folder holds it
            argv += ["--ro-bind", str(path), str(path)]
        argv += covers
        for path in exposed:  # a tool's own folders, even inside a covered one
            argv += ["--ro-bind", str(path), str(path)]
        for path in paths.existing(self.write):
            argv += ["--bind", str(path), str(path)]
        for host, inside in writable:
            argv += ["--bind", str(host), inside]
        for host, inside in binds:
            argv += ["--ro-bind", str(host), inside]
        argv += ["--ro-bind" if room.read_only else "--bind", str(room.clone), mount, "--chdir", mount,
                 "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--new-session",
                 "--die-with-parent", "--cap-drop", "ALL", "--hostname", "armbench"]
        if fresh or network == "none":  # a private one is made around the sandbox (edge.usernet)
            argv.append("--unshare-net")
        argv += ["--remount-ro", "/"]  # bubblewrap's own root, on which the rest is mounted
        env = {"HOME": str(self.home), "TMPDIR": "/tmp", "TMP": "/tmp", "TEMP": "/tmp"}
        if fresh:
            search = self.check_path() if self.root is None else os.pathsep.join(_SYSTEM_PATH)
            env |= CHECK_ENV | {"PATH": search} | ({"PYTHONPYCACHEPREFIX": PREFIX} if self.agent_tree else {})
        net: PrivateNet | None = None
        allow: tuple[str, ...] | None = None
        if network == "private" and not fresh:
            proxy = proxy_for(egress) if egress is not None else None
            if proxy is not None:
                allow = proxy.hosts
                env |= proxy_env(proxy.port)
            net = PrivateNet(tuple(sorted(set(ports))), proxy=proxy.port if proxy is not None else None)
        return Launch(argv=[*argv, "--"], cwd=cwd, env=env, clone=mount, tmp="/tmp",
                      limits=self.limits, net=net, enter=enter, egress=allow)

    def _exposable(self, expose: Iterable[Path], paths: _Paths) -> list[Path]:
        """What a tool needs shown (its executable's folders), never `/`, the member's home or a
        folder holding a hidden one: an executable in such a place is not shown, and its step
        fails not_found, which names the fix (`workflows.sandbox_read`)."""
        guarded = [self.home, *self.hide]
        return [p for p in paths.existing(expose)
                if p != Path("/") and not any(paths.within(g, p) for g in guarded)]

    def of_repo(self, repo: str, base: Path) -> Sandbox:
        """This sandbox for a suite's `repo`: its clone at `/tmp/<repo name>`, and the repo
        itself hidden when it is a local path (relative ones from `base`), since it holds the
        fix; outside the shown system folders no step sees it anyway."""
        local = local_repo(base, repo)
        return dataclasses.replace(self, name=repo_name(repo),
                                   hide=self.hide if local is None else (*self.hide, local))

    def toolchains(self) -> tuple[Path, ...]:
        """The host folders of the toolchains on the member's PATH (and a CI runner's tool
        cache) that lie outside the shown system folders, the home, temp and hidden folders:
        each PATH folder's installation (`/x/bin` or `/x/shims` gives `/x`, so a pyenv or
        Homebrew Python finds its library), else the folder alone."""
        caches = tuple(os.environ.get(v, "") for v in _TOOL_CACHES)
        return _toolchains(os.environ.get("PATH", ""), caches, (
            self.home, Path("/tmp"), Path(tempfile.gettempdir()), *self.write), self.hide)

    def check_path(self) -> str:
        """The check's PATH: the host's folders minus those under the home, temp or hidden folders."""
        return _check_path(os.environ.get("PATH", ""), (self.home, Path("/tmp"),
                           Path(tempfile.gettempdir()), *self.hide, *self.write))



def root_binds(root: Path, needed: Iterable[Path]) -> list[str]:
    """bubblewrap arguments that show `root` read-only as `/`, so that every `needed` path can
    be mounted on: each top-level entry of `root` is bound on bubblewrap's own (writable, then
    remounted read-only) root, and a folder on the way to a needed path that `root` lacks is
    made there, its siblings bound one by one. A needed path below a link of `root` is not made
    (the step then does not find it, as a host path a sandbox does not show)."""
    wanted = [p.relative_to("/").parts for p in needed if p.is_absolute() and p != Path("/")]
    return _bind_level(root, (), wanted)


def _bind_level(root: Path, at: tuple[str, ...], wanted: list[tuple[str, ...]]) -> list[str]:
    host = root.joinpath(*at)
    inside = "/" + "/".join(at)
    out: list[str] = []
    deeper: dict[str, list[tuple[str, ...]]] = {}
    for parts in wanted:
        if len(parts) > len(at) and parts[:len(at)] == at:
            deeper.setdefault(parts[len(at)], []).append(parts)
    try:
        names = sorted(os.listdir(host))
    except OSError:
        names = []
    for name in names:
        entry, path = host / name, f"{inside.rstrip('/')}/{name}"
        if entry.is_symlink():
            out += ["--symlink", os.readlink(entry), path]
        elif name in deeper and entry.is_dir() and _missing_below(entry, at + (name,), deeper[name]):
            out += ["--dir", path, *_bind_level(root, at + (name,), deeper[name])]
        else:
            out += ["--ro-bind", str(entry), path]
    for name in sorted(set(deeper) - set(names)):
        path = f"{inside.rstrip('/')}/{name}"
        out += ["--dir", path, *_bind_level(root, at + (name,), deeper[name])]
    return out


def _missing_below(entry: Path, at: tuple[str, ...], wanted: list[tuple[str, ...]]) -> bool:
    """Whether a wanted path strictly below `entry` has a folder on its way that `entry` lacks."""
    for parts in wanted:
        below = entry.joinpath(*parts[len(at):-1]) if len(parts) > len(at) + 1 else None
        if below is not None and not below.is_dir():
            return True
        if len(parts) > len(at) and not os.path.lexists(entry.joinpath(*parts[len(at):])):
            return True
    return False


@functools.lru_cache(maxsize=64)
def _check_path(path: str, away: tuple[Path, ...]) -> str:
    """The folders of `path` (and the system's) that exist and are outside every `away` folder."""
    kept: list[str] = []
    paths = _Paths()  # each folder resolved once, not once per comparison
    for entry in [*path.split(os.pathsep), *_SYSTEM_PATH]:
        folder = Path(entry)
        if entry in kept or not folder.is_absolute() or not folder.is_dir():
            continue
        if any(paths.within(folder, a) for a in away):
            continue
        kept.append(entry)
    return os.pathsep.join(kept)


def installation_paths() -> list[Path]:
    """armbench's own code: its one package's folder (in an editable install or a checkout, the
    source folder, which holds the install's link tree too), and in site-packages its metadata
    and command. The rest of its environment stays visible, so a project's test tools installed
    beside armbench still run, and so does any other distribution's package, whatever its name."""
    package = Path(__file__).resolve().parent.parent  # armbench's folder: edge/ is in it
    if package.parent.name not in ("site-packages", "dist-packages"):
        return [package]
    return [package, *package.parent.glob("armbench-*.dist-info"), Path(sys.prefix) / "bin" / "armbench"]


def probe(sandbox: Sandbox) -> None:
    """Start one sandboxed `true`; raise SandboxUnavailable naming the cause and the fix."""
    if sandbox.isolation == "declared":
        return
    _probe(sandbox.bwrap)


@functools.cache
def _probe(bwrap: str) -> None:
    exe = shutil.which(bwrap)
    if exe is None:
        raise SandboxUnavailable(f"bubblewrap ({bwrap}) is not installed",
                                 "Install it (Debian and Ubuntu: apt-get install bubblewrap)")
    argv = [exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--die-with-parent",
            "--cap-drop", "ALL", "--", "/bin/true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"{exe} could not be started: {exc}", _FIX) from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["(nothing)"]
        raise SandboxUnavailable(f"{exe} could not make its namespaces: {said[0]}", _FIX)


_FIX = ("Let bubblewrap create namespaces: on Ubuntu 24.04 allow it with an AppArmor profile "
        "(/etc/apparmor.d/bwrap: `profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, }`) or "
        "`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; elsewhere `sudo sysctl -w "
        "kernel.unprivileged_userns_clone=1` or `user.max_user_namespaces=15000`; in a container, "
        "run as root with --cap-add SYS_ADMIN --security-opt seccomp=unconfined (or --privileged); "
        "or make bwrap setuid root")


class _Paths:
    """Paths as one launch sees them: each resolved once (its links followed once, not again at
    every comparison), so a launch costs a few system calls per path, not hundreds."""

    def __init__(self) -> None:
        self._real: dict[Path, Path] = {}

    def real(self, path: Path) -> Path:
        """The path resolved (links followed), as first resolved in this launch."""
        found = self._real.get(path)
        if found is None:
            found = self._real[path] = path.resolve()
        return found

    def within(self, path: Path, folder: Path) -> bool:
        """Whether path is folder or inside it (both taken as given and as resolved)."""
        return any(_inside(p, f) for p in {str(path), str(self.real(path))}
                   for f in {str(folder), str(self.real(folder))})

    def existing(self, paths: Iterable[Path]) -> list[Path]:
        """Absolute existing paths, resolved, each once, in the given order."""
        out: list[Path] = []
        for path in paths:
            real = self.real(path)
            if real.exists() and real not in out:
                out.append(real)
        return out


def _inside(path: str, folder: str) -> bool:
    """`Path(path) == Path(folder) or Path(folder) in Path(path).parents`, for paths as `str()`
    of a Path gives them, compared as strings (a launch makes hundreds of these)."""
    if path == folder or path.startswith(folder if folder.endswith("/") else folder + "/"):
        return True
    return folder == "." and not path.startswith("/")


def _covers(hidden: Iterable[Path], paths: _Paths) -> list[str]:
    """`--tmpfs` over each existing folder, outermost first, skipping those inside another; an
    unreadable /dev/null over each file."""
    found = paths.existing(hidden)
    folders = sorted({p for p in found if p.is_dir()}, key=lambda p: len(p.parts))
    chosen: list[Path] = []
    for folder in folders:
        if folder != Path("/") and not any(paths.within(folder, c) for c in chosen):
            chosen.append(folder)
    files = [p for p in found if p.is_file() and not any(paths.within(p, c) for c in chosen)]
    return [*(arg for folder in chosen for arg in ("--tmpfs", str(folder))),
            *(arg for file in files for arg in ("--ro-bind", "/dev/null", str(file)))]


def host_root(toolchains: Iterable[Path] = ()) -> tuple[list[str], list[Path]]:
    """bubblewrap arguments that build a step's `/` from the host's allowlisted parts, and the
    host folders they show: each `HOST_SHOWN` folder read-only (a top-level link, as merged-usr
    systems have, made as the same link), `_VAR_SHOWN`, the file behind each link in `/etc`
    that leads elsewhere (`/etc/resolv.conf` into `/run`: the file alone), and `toolchains`.
    What else a step needs (its clone, home, `/tmp`, a tool's folder) is mounted on top; the
    root itself is bubblewrap's own, remounted read-only at the end."""
    argv, shown = list(_system_root()), [Path("/", n) for n in HOST_SHOWN]
    for folder in toolchains:
        if not any(_inside(str(folder), str(s)) for s in shown):
            argv += ["--ro-bind", str(folder), str(folder)]
            shown.append(folder)
    return argv, shown


@functools.cache
def _system_root() -> tuple[str, ...]:
    """The arguments of `host_root` that depend on the host alone (read once per process)."""
    argv: list[str] = []
    for name in sorted(os.listdir("/")):
        entry = Path("/", name)
        if name in _OWN:
            continue
        if entry.is_symlink():
            argv += ["--symlink", os.readlink(entry), str(entry)]
        elif name in HOST_SHOWN and entry.is_dir():
            argv += ["--ro-bind", str(entry), str(entry)]
    argv += ["--dir", "/var", "--dir", "/var/tmp"]
    for part in _VAR_SHOWN:
        if Path("/", part).is_dir() and not Path("/", part).is_symlink():
            argv += ["--ro-bind", f"/{part}", f"/{part}"]
    shown = [f"/{n}" for n in (*HOST_SHOWN, *_VAR_SHOWN)]
    for target in _etc_links():
        if not any(_inside(target, s) for s in shown):
            argv += ["--ro-bind", target, target]
    return tuple(argv)


def _etc_links() -> list[str]:
    """The regular files that links directly in `/etc` lead to (resolved), but in a folder a
    step has its own of (`/etc/mtab` is `/proc/self/mounts`)."""
    found: list[str] = []
    try:
        names = sorted(os.listdir("/etc"))
    except OSError:
        return found
    for name in names:
        entry = Path("/etc", name)
        if entry.is_symlink():
            real = os.path.realpath(entry)
            if (os.path.isfile(real) and real not in found
                    and not any(_inside(real, f"/{own}") for own in _OWN)):
                found.append(real)
    return found


@functools.lru_cache(maxsize=64)
def _toolchains(path: str, caches: tuple[str, ...], away: tuple[Path, ...],
                hidden: tuple[Path, ...]) -> tuple[Path, ...]:
    """`Sandbox.toolchains` for one PATH and tool-cache variables: never a folder inside or
    holding one of `away`, nor inside a `hidden` one (a hidden one inside is covered)."""
    paths, out = _Paths(), list[Path]()
    system = [Path("/", n) for n in HOST_SHOWN]
    for entry in [*path.split(os.pathsep), *caches]:
        folder = Path(entry)
        if not entry or not folder.is_absolute() or not folder.is_dir():
            continue
        real = paths.real(folder)
        install = real.parent if real.name in ("bin", "sbin", "shims") and len(real.parts) > 2 else real
        for chosen in dict.fromkeys((install, real)):
            if (any(paths.within(chosen, a) or paths.within(a, chosen) for a in away)
                    or any(paths.within(chosen, h) for h in hidden)):
                continue
            if not any(paths.within(chosen, s) for s in [*system, *out]):
                out.append(chosen)
            break
    return tuple(out)


def for_checkout(checkout: Checkout | None, config: ProjectConfig | None, *,
                 name: str = "project", more_hidden: Iterable[Path] = ()) -> Sandbox:
    """The sandbox of a checkout's trials: armbench's state and installation hidden, the config's
    read and write folders shown."""
    hidden = [armbench_home(), *installation_paths(), *more_hidden]
    if checkout is not None:
        hidden += [checkout.root, checkout.dir]
        if config is not None:
            hidden += [checkout.ledger_path(config).parent, checkout.runs_dir(config)]
            hidden += [p for v in (config.team, config.reports) if v and (p := local_repo(checkout.root, v))]
    workflows = config.workflows if config is not None else WorkflowsConfig()
    base = checkout.root if checkout is not None else Path.cwd()
    return Sandbox(isolation=workflows.isolation, hide=tuple(hidden), name=name,
                   read=tuple(_configured(base, workflows.sandbox_read, "ARMBENCH_SANDBOX_READ")),
                   write=tuple(_configured(base, workflows.sandbox_write, "ARMBENCH_SANDBOX_WRITE")),
                   ports=tuple(workflows.sandbox_ports))


def _configured(base: Path, paths: Iterable[str], variable: str) -> list[Path]:
    """The config's paths, then the variable's (separated by `:`): `~` expanded, relative ones
    from the checkout."""
    extra = [p for p in os.environ.get(variable, "").split(os.pathsep) if p]
    return [base / Path(p).expanduser() for p in [*paths, *extra]]


def local_repo(base: Path, repo: str) -> Path | None:
    """A repo given as a local path (or file:// URL), or None for a remote URL."""
    if repo.startswith("file://"):
        return Path(repo.removeprefix("file://"))
    if "://" in repo or re.match(r"^[\w.-]+@[\w.-]+:", repo):
        return None
    return base / Path(repo).expanduser()


def repo_name(repo: str) -> str:
    """The clone's folder name inside the sandbox: the repo's last path part, without `.git`."""
    tail = repo.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    safe = "".join(c for c in tail if c.isalnum() or c in "-_.").lstrip(".")
    return safe or "project"
