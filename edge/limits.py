"""Limits of armbench's own on each sandboxed step: processes, memory, a CPU weight and disk.

Each step gets a control group of its own, made under armbench's own group in every hierarchy
it needs (`pids`, `memory`, `cpu`):

- `cgroup2`: the unified hierarchy with the `pids` and `memory` controllers enabled for
  armbench's group's children (a delegated systemd scope, or root): `pids.max`, `memory.max`
  (`memory.swap.max` 0), `cpu.weight`.
- `cgroup1`: the legacy hierarchies, writable by root (a machine or container that mounts
  them, as this project's CI machine does): `pids.max`, `memory.limit_in_bytes` (and
  `memory.memsw.limit_in_bytes` where swap is accounted), `cpu.shares`.
- `rlimit`: no group can be made: `RLIMIT_NPROC` and `RLIMIT_AS` (`prlimit`).
  These are weaker: RLIMIT_NPROC counts the user's processes machine-wide and the kernel never
  enforces it for root; RLIMIT_AS bounds address space, not memory (a runtime that reserves
  address space, such as Node's WebAssembly, may need more); a hit shows only as a failed
  allocation.

Disk has no control group: under every mechanism the step's `disk` is held by the free-space
guard (`edge.diskguard`: a measurement of the blocks the step wrote, when the disk's free space
drops), over the folders its sandbox may write.

The step joins its group before it starts: the sandbox's child waits (bwrap's `--block-fd`)
until it and the sandbox are written to the group's `cgroup.procs` (or given the rlimits), so
nothing the step starts is ever outside it. A step that hits its pids or memory limit is
stopped (`hit` names the limit); afterwards every process left in the group is killed and the
group removed.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import secrets
import signal
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from armbench.edge.diskguard import DiskGuard
from armbench.ledger.events import PlannedLimits
from armbench.suites.model import DEFAULT_DISK as SUITE_DEFAULT_DISK
from armbench.suites.model import DEFAULT_MEMORY as SUITE_DEFAULT_MEMORY
from armbench.suites.model import DEFAULT_PIDS
from armbench.suites.sizes import format_size, parse_size

__all__ = ["DEFAULT_DISK", "DEFAULT_MEMORY", "DEFAULT_PIDS", "CPU_WEIGHT", "Limits", "Mechanism",
           "StepGroup", "mechanism", "step_group"]

Mechanism = Literal["cgroup2", "cgroup1", "rlimit"]
DEFAULT_MEMORY = parse_size(SUITE_DEFAULT_MEMORY)
"""Each step's memory by default (`suites.model.DEFAULT_MEMORY`)."""
DEFAULT_DISK = parse_size(SUITE_DEFAULT_DISK)
"""Each step's disk by default (`suites.model.DEFAULT_DISK`)."""
CPU_WEIGHT = 100
"""Each step's CPU weight (cgroup v2's scale; v1's shares are 10.24 times it): the default, so a
step competes for the CPU as one group however many processes it runs, and a CPU-bound step
gets one group's share beside armbench and the rest of the machine. (Half the weight slowed
every step under contention, armbench's own work with it: `bench_sandbox`.)"""
_ROOT = Path("/sys/fs/cgroup")
_NAMES = {"pids": "pids", "memory": "memory", "cpu": "cpu"}


@dataclass(frozen=True)
class Limits:
    """One step's limits."""

    memory: int = DEFAULT_MEMORY
    """Bytes of memory (with swap) the step's processes may use together."""
    pids: int = DEFAULT_PIDS
    """Processes and threads the step may have at once."""
    disk: int = DEFAULT_DISK
    """Bytes the step may write to the host's disk (`edge.diskguard`)."""

    @classmethod
    def of(cls, planned: PlannedLimits | None) -> Limits:
        """A plan's limits (armbench's defaults for a plan frozen before limits existed)."""
        if planned is None:
            return cls()
        return cls(memory=planned.memory, pids=planned.pids, disk=planned.disk or DEFAULT_DISK)

    @classmethod
    def from_context(cls, context: object) -> Limits:
        """The limits a lease's context carries (`{"memory": ..., "pids": ..., "disk": ...}`), else
        the defaults."""
        if isinstance(context, dict) and isinstance(context.get("memory"), int) \
                and isinstance(context.get("pids"), int):
            disk = context.get("disk")
            return cls(memory=context["memory"], pids=context["pids"],
                       disk=disk if isinstance(disk, int) else DEFAULT_DISK)
        return cls()

    def describe(self, limit: str) -> str:
        """`memory (4G)`, `pids (1024)`, `disk (8G)`: a limit as a report names it."""
        if limit == "memory":
            return f"memory ({format_size(self.memory)})"
        if limit == "pids":
            return f"pids ({self.pids})"
        return f"disk ({format_size(self.disk)})" if limit == "disk" else limit


@functools.cache
def mechanism() -> Mechanism:
    """How this machine limits a step: a probe group is made (and removed) once per process."""
    for kind in ("cgroup2", "cgroup1"):
        try:
            group = StepGroup.make(kind, Limits())
        except OSError:
            continue
        group.remove()
        _sweep(group.folders.values())
        return kind
    return "rlimit"


def _sweep(made: Iterable[Path]) -> None:
    """Remove the groups an armbench killed mid-step left beside `made`'s (named
    `armbench-<pid>-<token>` after a process that has ended), killing what is still in them."""
    for parent in {folder.parent for folder in made}:
        for folder in parent.glob("armbench-*-*"):
            pid = folder.name.split("-")[1]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                stale = StepGroup("cgroup1", Limits(), {"pids": folder})
                stale.kill(wait_s=1.0)
                stale.remove()


class StepGroup:
    """One step's control group (a folder per hierarchy), or its rlimits."""

    def __init__(self, kind: Mechanism, limits: Limits, folders: dict[str, Path]) -> None:
        self.kind, self.limits, self.folders = kind, limits, folders
        self.disk: DiskGuard | None = None
        """The guard of the step's disk, once it has started (`guard`)."""

    def guard(self, writes: Iterable[Path]) -> DiskGuard:
        """Start guarding the step's disk: the folders it may write (its sandbox's binds)."""
        self.disk = DiskGuard(list(writes), self.limits.disk, self._pids).watch()
        return self.disk

    @classmethod
    def make(cls, kind: Mechanism, limits: Limits) -> StepGroup:
        """Create the group with its limits set; OSError where it cannot be made."""
        if kind == "rlimit":
            return cls(kind, limits, {})
        name = f"armbench-{os.getpid()}-{secrets.token_hex(4)}"
        parents = _parents_v2() if kind == "cgroup2" else _parents_v1()
        folders: dict[str, Path] = {}
        group = cls(kind, limits, folders)
        try:
            for controller, parent in parents.items():
                folder = parent / name
                folder.mkdir()
                folders[controller] = folder
            group._write_limits()
        except OSError:
            group.remove()
            raise
        return group

    def _write_limits(self) -> None:
        memory, pids = str(self.limits.memory), str(self.limits.pids)
        if self.kind == "cgroup2":
            folder = self.folders["pids"]
            _write(folder / "pids.max", pids)
            _write(folder / "memory.max", memory)
            with contextlib.suppress(OSError):
                _write(folder / "memory.swap.max", "0")
            with contextlib.suppress(OSError):  # the cpu controller is a bonus, not a need
                _write(folder / "cpu.weight", str(CPU_WEIGHT))
            return
        _write(self.folders["pids"] / "pids.max", pids)
        _write(self.folders["memory"] / "memory.limit_in_bytes", memory)
        memsw = self.folders["memory"] / "memory.memsw.limit_in_bytes"
        if memsw.exists():
            _write(memsw, memory)
        if "cpu" in self.folders:
            _write(self.folders["cpu"] / "cpu.shares", str(CPU_WEIGHT * 1024 // 100))

    def enter(self, pids: Iterable[int]) -> None:
        """Put these processes in the group (or under the rlimits): the sandbox's monitor and its
        child, before the child starts the step (`--block-fd`), so all the step starts is in it.
        OSError where one cannot be put there."""
        if self.kind == "rlimit":
            for pid in pids:
                for limit, value in ((resource.RLIMIT_NPROC, self.limits.pids),
                                     (resource.RLIMIT_AS, self.limits.memory)):
                    resource.prlimit(pid, limit, (value, value))
            return
        procs = sorted({f / "cgroup.procs" for f in self.folders.values()})
        for pid in pids:
            for path in procs:
                _write(path, str(pid))

    def hit(self) -> str | None:
        """The limit the step hit (`pids`, `memory`, `disk`), or None: read from the group's
        counters and its disk's guard."""
        if self.disk is not None and self.disk.hit():
            return "disk"
        if self.kind == "rlimit":
            return None
        if _counter(self.folders["pids"] / "pids.events", "max") > 0:
            return "pids"
        if self.kind == "cgroup2":
            events = self.folders["pids"] / "memory.events"
            return "memory" if _counter(events, "oom_kill") > 0 or _counter(events, "oom") > 0 else None
        control = self.folders["memory"] / "memory.oom_control"
        return "memory" if _counter(control, "oom_kill") > 0 else None

    def kill(self, wait_s: float = 5.0) -> None:
        """SIGKILL every process left in the group, until it is empty or `wait_s` passed."""
        if self.kind == "rlimit":
            return
        if self.kind == "cgroup2":
            with contextlib.suppress(OSError):
                _write(self.folders["pids"] / "cgroup.kill", "1")
        deadline = time.monotonic() + wait_s
        while (pids := self._pids()) and time.monotonic() < deadline:
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def _pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders.values():
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
        return sorted(found)

    def remove(self) -> None:
        """Remove the group's folders (a folder still holding a process is left); its disk is no
        longer guarded."""
        if self.disk is not None:
            self.disk.release()
        for folder in self.folders.values():
            for _ in range(50):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


@contextlib.contextmanager
def step_group(limits: Limits | None) -> Iterator[StepGroup | None]:
    """A group for one step under this machine's mechanism (None: no limits); killed and removed
    when the step is done."""
    if limits is None:
        yield None
        return
    kind = mechanism()
    try:
        group = StepGroup.make(kind, limits)
    except OSError:  # made at the probe, not now (the hierarchy went away): the rlimits instead
        group = StepGroup.make("rlimit", limits)
    try:
        yield group
    finally:
        group.kill()
        group.remove()


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _counter(path: Path, key: str) -> int:
    """The number after `key` on its line of a flat-keyed cgroup file (0 when absent)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def _own_groups() -> dict[str, str]:
    """This process's group in each hierarchy of /proc/self/cgroup: controller (or "" for the
    unified hierarchy) -> path."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def _mounts() -> dict[str, Path]:
    """Where each hierarchy is mounted: controller (or "" for cgroup2) -> mount point."""
    found: dict[str, Path] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fstype, _, options = (right.split(" ") + ["", "", ""])[:3]
        point = Path(left.split(" ")[4].replace("\\040", " "))
        if fstype == "cgroup2":
            found.setdefault("", point)
        elif fstype == "cgroup":
            for option in options.split(","):
                if option in _NAMES:
                    found.setdefault(option, point)
    return found


def _parents_v2() -> dict[str, Path]:
    """armbench's own group in the unified hierarchy, with `pids` and `memory` enabled for its
    children; OSError where that is not so and cannot be made so."""
    mount = _mounts().get("")
    own = _own_groups().get("")
    if mount is None or own is None:
        raise OSError("no cgroup2 hierarchy")
    parent = mount / own.lstrip("/")
    enabled = (parent / "cgroup.subtree_control").read_text().split()
    for controller in ("pids", "memory", "cpu"):
        if controller not in enabled:
            with contextlib.suppress(OSError):
                _write(parent / "cgroup.subtree_control", f"+{controller}")
    enabled = (parent / "cgroup.subtree_control").read_text().split()
    if "pids" not in enabled or "memory" not in enabled:
        raise OSError(f"the pids and memory controllers are not enabled in {parent}")
    return {"pids": parent}


def _parents_v1() -> dict[str, Path]:
    """armbench's own group in the pids, memory and cpu hierarchies (cpu where mounted);
    OSError where pids or memory has none."""
    mounts, own = _mounts(), _own_groups()
    parents: dict[str, Path] = {}
    for controller in ("pids", "memory", "cpu"):
        if controller in mounts and controller in own:
            parents[controller] = mounts[controller] / own[controller].lstrip("/")
    if "pids" not in parents or "memory" not in parents:
        raise OSError("no pids or memory cgroup v1 hierarchy")
    return parents
