"""Read each task's environment before a plan is frozen: its root checked, its digest taken."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from armbench.edge.config import Checkout, ProjectConfig, armbench_home
from armbench.edge.environment import EnvironmentRefused, resolve
from armbench.edge.sandbox import local_repo
from armbench.edge.team import files_at
from armbench.ledger.events import PlannedEnvironment
from armbench.suites.model import Environment, Suite
from armbench.suites.validate import TaskEntry

__all__ = ["resolve_environments"]


def resolve_environments(suite: Suite, tasks: Sequence[TaskEntry], checkout: Checkout,
                         config: ProjectConfig) -> dict[str, PlannedEnvironment]:
    """Task id -> its environment (its own, else the suite's), each distinct one read once; an
    image is unpacked into the cache here, so a run never starts on one that cannot be used."""
    team = local_repo(checkout.root, config.team) if config.team else None
    pulled = checkout.read_pull()
    revision = pulled.revision if pulled is not None else None
    seen: dict[tuple[str, str], PlannedEnvironment] = {}
    out: dict[str, PlannedEnvironment] = {}
    for entry in tasks:
        declared = entry.task.environment or suite.environment
        if declared is None:
            continue
        key = (declared.kind, declared.source)
        if key not in seen:
            seen[key] = _resolve(declared, team, checkout.mirror, revision)
        out[entry.id] = seen[key]
    return out


def _resolve(declared: Environment, team: Path | None, mirror: Path,
             revision: str | None) -> PlannedEnvironment:
    path = declared.source.split(":", 1)[-1] if declared.kind == "image" else declared.source
    relative = not Path(path).expanduser().is_absolute()
    if relative and declared.kind == "image" and revision is not None:
        team = _team_files(declared, path, mirror, revision)
    if relative and team is None:
        raise EnvironmentRefused(
            "environment_unreadable", f"{declared.kind} {declared.source}",
            "a relative path, and the team repo is not a folder on this machine",
            "Give an absolute path, or use a team repo cloned on this machine.")
    got = resolve(declared.kind, declared.source, base=team or Path("/"))
    absolute = (declared.source.split(":", 1)[0] + ":" + str((team or Path("/")) / path)
                if declared.kind == "image" else str(got.root))
    return PlannedEnvironment(kind=declared.kind, source=declared.source, digest=got.digest,
                              path=absolute)


def _team_files(declared: Environment, path: str, mirror: Path, revision: str) -> Path:
    """A folder holding the image file (or layout) at `path` as the pulled team revision has
    it, written once under `~/.armbench/cache/team-files/<hash of its contents>`."""
    where = path.split("@", 1)[0]
    files = files_at(mirror, revision, where)
    if not files:
        raise EnvironmentRefused(
            "environment_unreadable", f"image {declared.source}",
            f"no file {where} in the team repo at {revision[:7]}",
            "Commit the image file to the team repo (git LFS pointers are not read: commit the "
            "archive itself, or give an absolute path on the machine), push, and pull.")
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    base = armbench_home() / "cache" / "team-files" / digest.hexdigest()[:32]
    if not base.is_dir():
        work = base.with_name(base.name + f".partial-{os.getpid()}")
        for name, data in files.items():
            target = work / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        try:
            os.rename(work, base)
        except OSError:  # another process wrote it first
            shutil.rmtree(work, ignore_errors=True)
    return base
