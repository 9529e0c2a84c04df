"""The one walk over the team repo's files: which are aliases, tools, suites, scorers, workflows
and team assets. Pure.

`armbench pull`, `review`, `plan` and `run` all read the team repo through `team_tree`, so a file
is classified the same way everywhere. Team assets are the folders armbench delivers into a
trial's home: `skills/<name>/` (a `SKILL.md` and the files beside it), `rules/*.md`,
`agents/*.md`, `claudemd/*.md` and `docs/`. Like `benchmarks/`, each asset folder may hold
namespaces: `skills/<ns>/<name>/` is a namespace's version of `skills/<name>/` when a role or
project of `manifest/roles.yaml` lists `<ns>` in `resources.skills`, and stands in for it for a
member who receives `<ns>`; a member who does not receive `<ns>` gets none of it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from msgspec import Struct

from armbench.suites.model import Roles

__all__ = ["ASSET_DIRS", "TEAM_FILE", "AssetNamespaces", "TeamTree", "asset_namespaces", "delivered",
           "team_tree"]

TEAM_FILE = "armbench.yaml"
ASSET_DIRS = ("skills", "rules", "agents", "claudemd", "docs")
"""The team repo's asset folders, in the order the docs list them."""


class TeamTree(Struct, frozen=True, kw_only=True):
    """The team repo's files, classified once."""

    team_file: bool
    """Whether `armbench.yaml` is at the root."""
    aliases: tuple[str, ...]
    """`models/aliases.yaml` and every `models/<ns>/aliases.yaml`, sorted."""
    tools: dict[str, str]
    """Tool folder name -> its `tools/<name>/tool.yaml`."""
    benchmarks: tuple[str, ...]
    """Every file under `benchmarks/`, sorted (`suites.namespaces.find_suite_dirs` reads them)."""
    scorers: tuple[str, ...]
    """Every scorer file, `scorers/<name>.md` and `scorers/<ns>/<name>.md`, sorted
    (`suites.scorers` reads them)."""
    assets: tuple[str, ...]
    """Every file under an asset folder (`ASSET_DIRS`), sorted."""
    workflows: tuple[str, ...] = ()
    """`workflows/<name>.yaml` and every `workflows/<ns>/<name>.yaml`, sorted."""


def team_tree(paths: Iterable[str]) -> TeamTree:
    """Classify the team repo's repo-relative file paths."""
    aliases, benchmarks, scorers, assets, workflows = [], [], [], [], []
    tools: dict[str, str] = {}
    has_team_file = False
    for path in sorted(paths):
        match path.split("/"):
            case [name] if name == TEAM_FILE:
                has_team_file = True
            case ["models", "aliases.yaml"] | ["models", _, "aliases.yaml"]:
                aliases.append(path)
            case ["tools", folder, "tool.yaml"]:
                tools[folder] = path
            case ["benchmarks", *_]:
                benchmarks.append(path)
            case ["scorers", name] | ["scorers", _, name] if name.endswith(".md"):
                scorers.append(path)
            case [top, _, *_] if top in ASSET_DIRS:
                assets.append(path)
            case ["workflows", name] | ["workflows", _, name] if name.endswith(".yaml"):
                workflows.append(path)
    return TeamTree(team_file=has_team_file,
                    aliases=tuple(aliases), tools=tools, benchmarks=tuple(benchmarks),
                    scorers=tuple(scorers), assets=tuple(assets), workflows=tuple(workflows))


class AssetNamespaces(Struct, frozen=True, kw_only=True):
    """Per asset folder, the namespaces some role declares and those this member receives."""

    declared: dict[str, frozenset[str]]
    """Asset folder -> every `<folder>/<ns>/` some role or project lists."""
    active: dict[str, frozenset[str]]
    """Asset folder -> the namespaces this member's roles and projects receive."""


def asset_namespaces(roles: Roles | None, active: Collection[str]) -> AssetNamespaces:
    """The asset namespaces of `manifest/roles.yaml`, and those the roles in `active` receive."""
    members = (*roles.roles, *roles.projects) if roles else ()
    declared = {kind: frozenset(ns for r in members for ns in getattr(r.resources, kind))
                for kind in ASSET_DIRS}
    mine = {kind: frozenset(ns for r in members if r.id in active for ns in getattr(r.resources, kind))
            for kind in ASSET_DIRS}
    return AssetNamespaces(declared=declared, active=mine)


def delivered(paths: Iterable[str], spaces: AssetNamespaces) -> dict[str, tuple[str, ...]]:
    """What a member receives: asset (`skills/release`, `rules/commits.md`, `docs/a/b.md`) -> the
    team repo files it is made of. A namespace's asset stands in for the shared one of its name."""
    shared: dict[str, list[str]] = {}
    mine: dict[str, dict[str, list[str]]] = {}
    for path in sorted(paths):
        parts = path.split("/")
        kind = parts[0]
        if kind not in ASSET_DIRS or len(parts) < 2:
            continue
        namespace = parts[1] if len(parts) > 2 and parts[1] in spaces.declared[kind] else None
        rest = parts[2:] if namespace else parts[1:]
        name = _asset_name(kind, rest)
        if name is None:
            continue
        if namespace is None:
            shared.setdefault(name, []).append(path)
        elif namespace in spaces.active[kind]:
            mine.setdefault(name, {}).setdefault(namespace, []).append(path)
    out = {name: tuple(files) for name, files in shared.items()}
    for name, by_ns in mine.items():
        if len(by_ns) == 1:  # two namespaces defining one asset deliver neither (as for suites)
            out[name] = tuple(next(iter(by_ns.values())))
        else:
            out.pop(name, None)
    return {name: files for name, files in sorted(out.items())
            if not name.startswith("skills/") or any(f.endswith("/SKILL.md") for f in files)}


def _asset_name(kind: str, rest: list[str]) -> str | None:
    """The asset a file belongs to, named by its shared path, or None when it is not one."""
    if kind == "skills":
        return f"skills/{rest[0]}" if len(rest) >= 2 else None
    if kind == "docs":
        return "docs/" + "/".join(rest)
    return f"{kind}/{rest[0]}" if len(rest) == 1 and rest[0].endswith(".md") else None
