"""The team assets armbench delivers to a trial, read from a team revision's files.

Which files are assets, and which a member receives with their namespaces, is
`suites.teamtree` (the one walk of the team repo: see its docstring); this module groups the
received files' bytes by asset type, leaves `without` paths out, and compares two installs'
skills. Nothing here reads a disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
from typing import Literal

from msgspec import Struct

from armbench.ledger.events import NoTeam, PlannedTeam, WithoutTeam
from armbench.suites.namespaces import read_roles
from armbench.suites.teamtree import ASSET_DIRS, AssetNamespaces, asset_namespaces, delivered

__all__ = ["SkillChange", "TeamAssets", "asset_tree", "assets_hash", "delivered_from", "instructions",
           "member_assets", "skill_changes", "skill_digests", "team_assets", "without_paths"]

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


def without_paths(files: Mapping[str, bytes], paths: Collection[str]) -> dict[str, bytes]:
    """The files with each of `paths` left out, as git lists them: a file, or a folder and all under it."""
    cut = [p.strip("/") for p in paths]
    return {path: data for path, data in files.items()
            if not any(path == p or path.startswith(p + "/") for p in cut)}


def team_assets(files: Mapping[str, bytes], spaces: AssetNamespaces) -> TeamAssets:
    """The assets a member receives from a team revision's files: which files make which asset
    is `suites.teamtree.delivered`, the one walk pull, review, plan and run share; this only
    groups their bytes by asset type."""
    found: dict[str, dict[str, dict[str, bytes]]] = {kind: {} for kind in ASSET_DIRS}
    for asset, paths in delivered(files, spaces).items():
        kind, name = asset.split("/", 1)
        inner = found[kind].setdefault(name, {})
        for path in paths:
            parts = path.split("/")
            spaced = len(parts) > 2 and parts[1] in spaces.declared[kind]
            inside = parts[(3 if spaced else 2):] if kind == "skills" else []
            inner["/".join(inside)] = files[path]
    skills = {name: dict(sorted(inner.items())) for name, inner in found["skills"].items()
              if "SKILL.md" in inner}
    flat = {kind: {name: inner[""] for name, inner in sorted(found[kind].items())}
            for kind in ASSET_DIRS[1:]}
    return TeamAssets(skills=dict(sorted(skills.items())), **flat)


def delivered_from(team: PlannedTeam, baseline: str) -> tuple[str, tuple[str, ...]] | None:
    """(the team commit an arm's assets are read at, the paths left out), or None for `none`:
    a ref's commit, a `without` arm's commit of the pulled tree without its paths (which are
    left out again, so an older plan's commit cannot bring them back), else the pulled one."""
    if isinstance(team, NoTeam):
        return None
    if isinstance(team, WithoutTeam):
        return team.commit, tuple(sorted(team.paths))
    return team.revision or baseline, ()


def member_assets(files: Mapping[str, bytes], roles: Collection[str],
                  without: Collection[str] = ()) -> TeamAssets:
    """What a member with `roles` (their roles and projects) receives from a team commit's
    files, `without` paths left out: the one answer plan freezes and every driver delivers."""
    declared, _ = read_roles(files)
    kept = without_paths(files, without) if without else files
    return team_assets(kept, asset_namespaces(declared, roles))


def assets_hash(assets: TeamAssets) -> str:
    """sha256 over the delivered tree's paths and bytes (`asset_tree`), in path order: equal
    hashes, the same assets delivered, whatever commit or roles they came from."""
    h = hashlib.sha256()
    for path, data in sorted(asset_tree(assets).items()):
        h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


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
