"""Where suites live: `benchmarks/<suite>/` for everyone, `benchmarks/<ns>/<suite>/` for members with <ns>.

A `benchmarks/<dir>/` is a namespace when a role or project of `manifest/roles.yaml` lists it in
`resources.benchmarks`; any other `benchmarks/<dir>/` is a shared suite's directory. A suite's
aliases are `models/aliases.yaml` with its namespace's `models/<ns>/aliases.yaml` over it, alias
by alias. Nothing here reads a disk: callers pass paths and file texts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TypeVar

from msgspec import Struct

from armbench.suites.diagnostics import Diagnostic, Severity
from armbench.suites.model import Aliases, AliasTarget, Roles
from armbench.suites.validate import parse_roles

__all__ = [
    "ROLES_FILE", "SHARED_ALIASES", "Selection", "SuiteDir", "active_namespaces", "alias_files",
    "declared_namespaces", "find_suite_dirs", "layout_findings", "merge_aliases", "name_clashes",
    "namespace_of", "reaches", "read_roles", "select_suites", "suite_aliases", "suite_files",
]

ROLES_FILE = "manifest/roles.yaml"
SHARED_ALIASES = "models/aliases.yaml"
T = TypeVar("T")


class SuiteDir(Struct, frozen=True, kw_only=True):
    """One suite's directory in the team repo."""

    dir: str
    """Its repo-relative path: `benchmarks/<suite>` or `benchmarks/<ns>/<suite>`."""
    name: str
    """The suite's name: the directory's own name."""
    namespace: str | None
    """The namespace it is placed in, or None for a shared suite."""


class Selection(Struct, frozen=True, kw_only=True):
    """The suites one member receives, by name, and the names two of their namespaces both define."""

    chosen: dict[str, SuiteDir]
    """Suite name -> its directory: shared suites, with an active namespace's suite over a shared one."""
    clashes: dict[str, tuple[SuiteDir, ...]]
    """Suite name -> the directories of two or more active namespaces that define it."""


def read_roles(files: Mapping[str, bytes]) -> tuple[Roles | None, list[Diagnostic]]:
    """`manifest/roles.yaml` when the team repo has one, with its diagnostics."""
    text = files.get(ROLES_FILE)
    return (None, []) if text is None else parse_roles(text, file=ROLES_FILE)


def declared_namespaces(roles: Roles | None) -> frozenset[str]:
    """Every `benchmarks/<ns>/` some role or project lists in `resources.benchmarks`."""
    members = (*roles.roles, *roles.projects) if roles else ()
    return frozenset(ns for role in members for ns in role.resources.benchmarks)


def active_namespaces(roles: Roles | None, active: Iterable[str]) -> tuple[frozenset[str], list[Diagnostic]]:
    """The namespaces a member's roles and projects receive, and a warning for each id the manifest lacks."""
    by_id: dict[str, set[str]] = defaultdict(set)
    for role in (*roles.roles, *roles.projects) if roles else ():
        by_id[role.id].update(role.resources.benchmarks)
    found, unknown = set(), []
    for role_id in active:
        if role_id in by_id:
            found |= by_id[role_id]
        else:
            unknown.append(Diagnostic(
                file=ROLES_FILE, line=None, severity="warning", code="role_unknown",
                message=f"This checkout's .armbench/config.yaml lists the role or project `{role_id}`, "
                        f"which {ROLES_FILE} does not declare, so it gives no benchmark namespace. "
                        "Declare it there, or remove it from `roles:` in .armbench/config.yaml."))
    return frozenset(found), unknown


def find_suite_dirs(paths: Iterable[str], namespaces: Collection[str]) -> list[SuiteDir]:
    """Every suite directory, shared and in every namespace: one holding `suite.yaml` or `tasks/*`."""
    dirs: dict[str, SuiteDir] = {}
    for path in paths:
        parts = path.split("/")
        if parts[0] != "benchmarks" or len(parts) < 3:
            continue
        depth = 3 if parts[1] in namespaces else 2
        rest = parts[depth:]
        if rest == ["suite.yaml"] or len(rest) == 2 and rest[0] == "tasks":
            where = "/".join(parts[:depth])
            dirs[where] = SuiteDir(dir=where, name=parts[depth - 1],
                                   namespace=parts[1] if depth == 3 else None)
    return [dirs[key] for key in sorted(dirs)]


def suite_files(files: Mapping[str, T], suite_dir: str) -> dict[str, T]:
    """The files under one suite directory, by repo-relative path."""
    prefix = suite_dir.rstrip("/") + "/"
    return {path: data for path, data in files.items() if path.startswith(prefix)}


def select_suites(dirs: Sequence[SuiteDir], active: Collection[str]) -> Selection:
    """The suites a member with `active` namespaces receives; a namespace's suite wins over a shared one."""
    chosen = {d.name: d for d in dirs if d.namespace is None}
    mine: dict[str, list[SuiteDir]] = defaultdict(list)
    for d in dirs:
        if d.namespace in active:
            mine[d.name].append(d)
    clashes = {}
    for name, found in mine.items():
        if len(found) == 1:
            chosen[name] = found[0]
        else:
            chosen.pop(name, None)
            clashes[name] = tuple(found)
    return Selection(chosen=chosen, clashes=clashes)


def name_clashes(dirs: Iterable[SuiteDir], *, severity: Severity) -> list[Diagnostic]:
    """A finding for each suite name that two or more namespaces define, naming every file."""
    by_name: dict[str, list[SuiteDir]] = defaultdict(list)
    for d in dirs:
        if d.namespace is not None:
            by_name[d.name].append(d)
    found = []
    for name, places in sorted(by_name.items()):
        if len(places) < 2:
            continue
        files = " and ".join(f"{d.dir}/suite.yaml" for d in places)
        consequence = ("so it is not cached: armbench cannot tell which one you mean. Rename one, or "
                       "drop one of the roles from .armbench/config.yaml" if severity == "error" else
                       "so a member with two of them active gets neither (pull reports a conflict). "
                       "Rename one")
        found.append(Diagnostic(
            file=f"{places[0].dir}/suite.yaml", line=None, severity=severity, code="suite_namespace_conflict",
            message=f"Suite `{name}` is defined in {len(places)} namespaces, {files}, {consequence}."))
    return found


def layout_findings(paths: Iterable[str], namespaces: Collection[str]) -> list[Diagnostic]:
    """Warnings for suite and alias files no member reads because of where they sit."""
    found = []
    for path in sorted(paths):
        why = _why_unread(path.split("/"), namespaces)
        if why is not None:
            found.append(Diagnostic(file=path, line=None, severity="warning", code="file_not_read",
                                    message=f"This file is not read: {why}"))
    return found


def _why_unread(parts: list[str], namespaces: Collection[str]) -> str | None:
    match parts:
        case ["benchmarks", ns, "suite.yaml"] if ns in namespaces:
            return (f"benchmarks/{ns}/ is a namespace ({ROLES_FILE} lists it in resources.benchmarks), "
                    f"and a namespace holds suite directories. Move it to benchmarks/{ns}/<suite>/.")
        case ["benchmarks", top, suite, "suite.yaml"] if top not in namespaces:
            return (f"benchmarks/{top}/ is not a namespace: {_undeclared(top)}. Declare it there, or "
                    f"move the suite to benchmarks/{suite}/.")
        case ["models", top, "aliases.yaml"] if top not in namespaces:
            return (f"models/{top}/ is not a namespace: {_undeclared(top)}. Declare it there, or move "
                    "its aliases to models/aliases.yaml.")
    return None


def _undeclared(name: str) -> str:
    return f"no role or project in {ROLES_FILE} lists `{name}` in resources.benchmarks"


def reaches(path: str, declared: Collection[str], active: Collection[str]) -> bool:
    """Whether a member with `active` namespaces receives a `benchmarks/` path: shared, or theirs."""
    parts = path.split("/")
    in_namespace = len(parts) > 2 and parts[0] == "benchmarks" and parts[1] in declared
    return not in_namespace or parts[1] in active


def namespace_of(suite_dir: str) -> str | None:
    """The namespace of a suite directory: `auth` for `benchmarks/auth/login`, None for a shared one."""
    parts = suite_dir.strip("/").split("/")
    return parts[1] if len(parts) == 3 else None


def alias_files(namespace: str | None) -> tuple[str, ...]:
    """The alias files a suite in `namespace` resolves with, the shared one first."""
    return (SHARED_ALIASES,) if namespace is None else (SHARED_ALIASES, f"models/{namespace}/aliases.yaml")


def suite_aliases(layers: Mapping[str, Aliases | None], namespace: str | None) -> Aliases | None:
    """A suite's aliases from the parsed alias files by path: its namespace's over the shared ones."""
    return merge_aliases([layers.get(file) for file in alias_files(namespace)])


def merge_aliases(layers: Sequence[Aliases | None]) -> Aliases | None:
    """The aliases of every layer, a later layer's alias replacing an earlier one of the same name."""
    present = [layer for layer in layers if layer is not None]
    if not present:
        return None
    merged: dict[str, dict[str, str | AliasTarget]] = {}
    for layer in present:
        merged.update(layer.aliases)
    return Aliases(schema_version=present[-1].schema_version, aliases=merged)
