"""Read each task's environment before a plan is frozen: its root checked, its digest taken."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from edge.config import Checkout, ProjectConfig
from edge.environment import EnvironmentRefused, resolve
from edge.sandbox import local_repo
from ledger.events import PlannedEnvironment
from suites.model import Environment, Suite
from suites.validate import TaskEntry

__all__ = ["resolve_environments"]


def resolve_environments(suite: Suite, tasks: Sequence[TaskEntry], checkout: Checkout,
                         config: ProjectConfig) -> dict[str, PlannedEnvironment]:
    """Task id -> its environment (its own, else the suite's), each distinct one read once; an
    image is unpacked into the cache here, so a run never starts on one that cannot be used."""
    team = local_repo(checkout.root, config.team) if config.team else None
    seen: dict[tuple[str, str], PlannedEnvironment] = {}
    out: dict[str, PlannedEnvironment] = {}
    for entry in tasks:
        declared = entry.task.environment or suite.environment
        if declared is None:
            continue
        key = (declared.kind, declared.source)
        if key not in seen:
            seen[key] = _resolve(declared, team)
        out[entry.id] = seen[key]
    return out


def _resolve(declared: Environment, team: Path | None) -> PlannedEnvironment:
    path = declared.source.split(":", 1)[-1] if declared.kind == "image" else declared.source
    if not Path(path).expanduser().is_absolute() and team is None:
        raise EnvironmentRefused(
            "environment_unreadable", f"{declared.kind} {declared.source}",
            "a relative path, and the team repo is not a folder on this machine",
            "Give an absolute path, or use a team repo cloned on this machine.")
    got = resolve(declared.kind, declared.source, base=team or Path("/"))
    absolute = (declared.source.split(":", 1)[0] + ":" + str((team or Path("/")) / path)
                if declared.kind == "image" else str(got.root))
    return PlannedEnvironment(kind=declared.kind, source=declared.source, digest=got.digest,
                              path=absolute)
