"""The team assets armbench delivers to a trial, read from a team revision's files.

Five folders of the team repo are assets: `skills/<name>/SKILL.md` (with any files beside it),
`rules/*.md`, `agents/*.md`, `claudemd/*.md` and `docs/`. Each may hold namespaces as
`benchmarks/` does: `skills/<ns>/<name>/SKILL.md` is a namespace's skill when a role or project
of `manifest/roles.yaml` lists `<ns>` under `resources.skills` (likewise `rules`, `agents`,
`claudemd`, `docs`). A member receives the shared assets and those of the namespaces their roles
and projects give them; a namespace's asset replaces a shared one of the same name, and a name
two received namespaces both define is delivered from neither. Nothing here reads a disk.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from typing import Literal

from msgspec import Struct

from suites.model import Roles

__all__ = ["ASSET_DIRS", "SkillChange", "TeamAssets", "asset_tree", "declared_by_type", "instructions",
           "received_by_type", "skill_changes", "skill_digests", "team_assets", "without_paths"]

ASSET_DIRS = ("skills", "rules", "agents", "claudemd", "docs")
"""The team repo's folders armbench delivers to a trial."""

SkillChange = Literal["added", "removed", "changed"]


class TeamAssets(Struct, frozen=True, kw_only=True):
    """What one member receives of a team revision, namespaces resolved, by asset type."""

    skills: dict[str, dict[str, bytes]] = {}
    """Skill name -> its folder's files by path inside the folder (`SKILL.md` among them)."""
    rules: dict[str, bytes] = {}
    """Rule file name (`commits.md`) -> its text."""
    agents: dict[str, bytes] = {}
    """Subagent file name (`reviewer.md`) -> its text."""
    claudemd: dict[str, bytes] = {}
    """Instruction file name (`team.md`) -> its text."""
    docs: dict[str, bytes] = {}
    """Document path under `docs/` -> its bytes."""


def declared_by_type(roles: Roles | None) -> dict[str, frozenset[str]]:
    """Asset type -> every namespace some role or project lists for it."""
    members = (*roles.roles, *roles.projects) if roles else ()
    return {kind: frozenset(ns for r in members for ns in getattr(r.resources, kind)) for kind in ASSET_DIRS}


def received_by_type(roles: Roles | None, active: Iterable[str]) -> dict[str, frozenset[str]]:
    """Asset type -> the namespaces a member with `active` roles and projects receives."""
    wanted = set(active)
    members = [r for r in ((*roles.roles, *roles.projects) if roles else ()) if r.id in wanted]
    return {kind: frozenset(ns for r in members for ns in getattr(r.resources, kind)) for kind in ASSET_DIRS}


def without_paths(files: Mapping[str, bytes], paths: Collection[str]) -> dict[str, bytes]:
    """The files with each of `paths` left out, as git lists them: a file, or a folder and all under it."""
    cut = [p.strip("/") for p in paths]
    return {path: data for path, data in files.items()
            if not any(path == p or path.startswith(p + "/") for p in cut)}


def team_assets(files: Mapping[str, bytes], declared: Mapping[str, Collection[str]],
                received: Mapping[str, Collection[str]]) -> TeamAssets:
    """The assets a member receives from a team revision's files (the one walk of the five folders)."""
    found: dict[str, dict[str, dict[str, bytes]]] = {kind: {} for kind in ASSET_DIRS}
    for kind in ASSET_DIRS:
        shared: dict[str, dict[str, bytes]] = defaultdict(dict)
        spaced: dict[str, dict[str, dict[str, bytes]]] = defaultdict(lambda: defaultdict(dict))
        for path, data in files.items():
            parts = path.split("/")
            if parts[0] != kind or len(parts) < 2:
                continue
            ns = parts[1] if len(parts) > 2 and parts[1] in declared.get(kind, ()) else None
            if ns is not None and ns not in received.get(kind, ()):
                continue
            placed = _place(kind, parts[2:] if ns else parts[1:])
            if placed is None:
                continue
            name, inner = placed
            (spaced[name][ns] if ns else shared[name])[inner] = data
        chosen = dict(shared)
        for name, by_ns in spaced.items():
            if len(by_ns) == 1:
                chosen[name] = next(iter(by_ns.values()))
            else:
                chosen.pop(name, None)  # two received namespaces define it: neither is delivered
        found[kind] = {name: chosen[name] for name in sorted(chosen)}
    skills = {name: dict(sorted(inner.items())) for name, inner in found["skills"].items()
              if "SKILL.md" in inner}
    flat = {kind: {name: inner[""] for name, inner in found[kind].items()} for kind in ASSET_DIRS[1:]}
    return TeamAssets(skills=skills, **flat)


def _place(kind: str, rest: list[str]) -> tuple[str, str] | None:
    """(asset name, path inside it) of a path's part after `<kind>/` (and its namespace)."""
    if not rest or not rest[-1]:
        return None
    if kind == "skills":
        return (rest[0], "/".join(rest[1:])) if len(rest) >= 2 else None
    if kind == "docs":
        return "/".join(rest), ""
    return (rest[0], "") if len(rest) == 1 and rest[0].endswith(".md") else None


def asset_tree(assets: TeamAssets) -> dict[str, bytes]:
    """The assets as a folder, by path: what a command tool finds at `$ARMBENCH_TEAM_DIR`."""
    tree = {f"skills/{name}/{inner}": data for name, files in assets.skills.items()
            for inner, data in files.items()}
    for kind in ASSET_DIRS[1:]:
        tree |= {f"{kind}/{name}": data for name, data in getattr(assets, kind).items()}
    return tree


def instructions(assets: TeamAssets) -> bytes:
    """The instruction files then the rules, as one user-level instruction file, each under a
    comment naming where it came from."""
    parts = [b"<!-- armbench: " + f"{kind}/{name}".encode() + b" -->\n" + data.rstrip(b"\n") + b"\n"
             for kind in ("claudemd", "rules") for name, data in getattr(assets, kind).items()]
    return b"\n".join(parts)


def skill_digests(assets: TeamAssets) -> dict[str, str]:
    """Skill name -> sha256 over its folder's paths and bytes (equal digests: the same skill)."""
    out = {}
    for name, files in assets.skills.items():
        h = hashlib.sha256()
        for inner, data in files.items():
            h.update(inner.encode() + b"\0" + hashlib.sha256(data).digest())
        out[name] = h.hexdigest()
    return out


def skill_changes(baseline: Mapping[str, str], arm: Mapping[str, str]) -> dict[str, SkillChange]:
    """The skills an arm's install adds, removes or changes against the baseline's, by name."""
    changes: dict[str, SkillChange] = {}
    for name in sorted({*baseline, *arm}):
        if name not in baseline:
            changes[name] = "added"
        elif name not in arm:
            changes[name] = "removed"
        elif baseline[name] != arm[name]:
            changes[name] = "changed"
    return changes
