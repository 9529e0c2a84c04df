"""`armbench init` and `armbench pull`: tie a checkout to a team repo, fetch it, validate, cache."""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime
from pathlib import Path

import msgspec

from armbench.benchmark.team.override import BENCHMARK_WORKFLOW, active_workflow_namespaces
from armbench.benchmark.team.suitecache import SuiteCache, load_cache
from armbench.edge.config import Checkout, ProjectConfig, PullRecord, armbench_home_in_home, save_config
from armbench.edge.team import fetch_team, files_at, keep_revision, resolve_source
from armbench.ledger.errors import Refusal
from armbench.suites import namespaces
from armbench.suites.diagnostics import Diagnostic, has_errors
from armbench.suites.flowconflicts import arm_conflicts, override_conflict
from armbench.suites.model import Aliases
from armbench.suites.scorers import check_scorer_files, scorer_names
from armbench.suites.teamtree import AssetNamespaces, TeamTree, asset_namespaces, team_tree
from armbench.suites.validate import parse_aliases, parse_team_file, parse_tool, validate_suite_dir
from armbench.suites.without import without_findings

__all__ = ["PullResult", "SuiteCache", "init", "load_cache", "pull"]


class PullResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a pull did, for the envelope."""

    revision: str
    cached: list[str]
    kept: list[str]
    rejected: list[str]
    tools: list[str]
    diagnostics: list[Diagnostic]
    namespaces: list[str] = []
    """The benchmark namespaces this checkout's roles and projects receive."""
    dropped: list[str] = []
    """Cached suites forgotten because their namespace is no longer active here."""


def init(checkout: Checkout, team: str) -> ProjectConfig:
    """Write `.armbench/config.yaml` tying the checkout to the team repo."""
    config = ProjectConfig(team=team)
    save_config(checkout, config)
    return config


def pull(checkout: Checkout, config: ProjectConfig, *, now: Callable[[], datetime]) -> PullResult:
    """Fetch the team repo, validate the benchmark files this member receives, cache the valid suites."""
    source = resolve_source(config.team, checkout.root)
    revision = fetch_team(source, checkout.mirror)
    files = files_at(checkout.mirror, revision)
    diagnostics = _team_file(files)
    tree = team_tree(files)
    roles, found = namespaces.read_roles(files)
    active, unknown = namespaces.active_namespaces(roles, config.roles)
    declared = namespaces.declared_namespaces(roles)
    layers, alias_diags = _aliases(files, tree, active)
    tools, tool_diags = _tools(files, tree)
    spaces = asset_namespaces(roles, config.roles)
    layout = [d for d in namespaces.layout_findings(files, declared)
              if namespaces.reaches(d.file, declared, active)]
    diagnostics += found + unknown + alias_diags + tool_diags + layout
    diagnostics += check_scorer_files(files, tree.scorers, active)
    flows = active_workflow_namespaces(files, config)  # as `armbench run` reads them
    diagnostics += override_conflict(list(files), BENCHMARK_WORKFLOW, flows)
    try:
        cache = load_cache(checkout)
    except Refusal:  # a cache that does not decode is rewritten from the team repo
        cache = SuiteCache()
    selection = namespaces.select_suites(namespaces.find_suite_dirs(tree.benchmarks, declared), active)
    cached, kept, rejected, suite_diags = _cache_suites(cache, files, tree, selection, layers,
                                                        revision, checkout.mirror, spaces, flows)
    dropped = [name for name in sorted(cache.suites)
               if namespaces.namespace_of(cache.dir_of(name)) not in (None, *active)]
    for name in dropped:
        cache.drop(name)
    checkout.cache_file.parent.mkdir(parents=True, exist_ok=True)
    checkout.cache_file.write_bytes(msgspec.json.encode(cache))
    keep_revision(checkout.mirror, "pulled", revision)
    record = PullRecord(team=config.team, revision=revision, at=now())
    checkout.pull_file.write_bytes(msgspec.json.encode(record))
    return PullResult(revision=revision, cached=cached, kept=kept, rejected=rejected, tools=tools,
                      diagnostics=diagnostics + suite_diags, namespaces=sorted(active), dropped=dropped)


def _cache_suites(cache: SuiteCache, files: dict[str, bytes], tree: TeamTree,
                  selection: namespaces.Selection,
                  layers: dict[str, Aliases | None], revision: str, mirror: Path,
                  spaces: AssetNamespaces, flows: Collection[str]
                  ) -> tuple[list[str], list[str], list[str], list[Diagnostic]]:
    """Validate each suite the member receives; cache the valid ones, keep or forget the others."""
    cached: list[str] = []
    kept: list[str] = []
    rejected: list[str] = []
    diagnostics: list[Diagnostic] = []
    for name, where in sorted(selection.chosen.items()):
        merged = namespaces.suite_aliases(layers, where.namespace)
        check = validate_suite_dir(namespaces.suite_files(files, where.dir), suite_dir=where.dir,
                                   aliases=sorted(merged.aliases) if merged else [],
                                   scorers=scorer_names(tree.scorers, where.namespace),
                                   tools=list(tree.tools))
        diagnostics += check.diagnostics
        if check.suite is not None:  # the team's `without` paths, as this member receives the team
            diagnostics += without_findings(check.suite, files, where.dir, spaces, "warning")
            diagnostics += arm_conflicts(check.suite, files, where.dir, flows)
        if check.valid or _only_unpublishable(check.diagnostics, where.dir):
            # an arm value that would reach the record is cached with its diagnostic, so plan and
            # run can refuse it by name (arm_unpublishable) instead of not finding the suite
            cache.keep(name, where.dir, revision, namespaces.suite_files(files, where.dir))
            keep_revision(mirror, f"suites/{name}", revision)
            cached.append(name)
        elif name in cache.suites and cache.dir_of(name) == where.dir:
            kept.append(name)
        else:
            cache.drop(name)
            rejected.append(name)
    for name in sorted(selection.clashes):
        cache.drop(name)
        rejected.append(name)
    clashing = [d for dirs in selection.clashes.values() for d in dirs]
    return cached, kept, rejected, diagnostics + namespaces.name_clashes(clashing, severity="error")


def _only_unpublishable(diagnostics: tuple[Diagnostic, ...], suite_dir: str) -> bool:
    """Whether the suite file's only errors are arm values that look like a URL or a path."""
    errors = [d for d in diagnostics if d.severity == "error"]
    suite_file = f"{suite_dir.strip('/')}/suite.yaml"
    return bool(errors) and all(d.code == "arm_unpublishable" and d.file == suite_file
                                for d in errors)


def _team_file(files: dict[str, bytes]) -> list[Diagnostic]:
    if "armbench.yaml" not in files:
        raise Refusal("The team repo has no armbench.yaml at its root, so it is not an armbench "
                      "team repo. Add one with `schemaVersion: v1alpha1`, push it, and pull "
                      "again.", code="team_invalid")
    _, found = parse_team_file(files["armbench.yaml"], file="armbench.yaml")
    return found


def _aliases(files: dict[str, bytes], tree: TeamTree, active: Collection[str]
             ) -> tuple[dict[str, Aliases | None], list[Diagnostic]]:
    """The shared alias file and those of the active namespaces, by path, with their diagnostics."""
    layers, found = {}, []
    for file in sorted({f for ns in (None, *active) for f in namespaces.alias_files(ns)}):
        if file in tree.aliases:
            layers[file], diags = parse_aliases(files[file], file=file)
            found += diags
    return layers, found


def _tools(files: dict[str, bytes], tree: TeamTree) -> tuple[list[str], list[Diagnostic]]:
    names, found = [], []
    for folder, path in tree.tools.items():
        tool, diags = parse_tool(files[path], file=path, folder_name=folder,
                                 armbench_home=armbench_home_in_home())
        found += diags
        if tool is not None and not has_errors(diags):
            names.append(folder)
    return names, found
