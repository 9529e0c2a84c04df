"""`armbench init` and `armbench pull`: tie a checkout to a team repo, fetch it, validate, cache."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime

import msgspec

from edge.config import Checkout, ProjectConfig, PullRecord, save_config
from edge.team import fetch_team, files_at, keep_revision, resolve_source
from ledger.errors import Refusal
from suites.diagnostics import Diagnostic, has_errors
from suites.validate import parse_aliases, parse_team_file, parse_tool, validate_suite_dir

__all__ = ["PullResult", "SuiteCache", "init", "load_cache", "pull"]


class SuiteCache(msgspec.Struct, kw_only=True):
    """The revision each valid suite was last cached at."""

    suites: dict[str, str] = {}


class PullResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a pull did, for the envelope."""

    revision: str
    cached: list[str]
    kept: list[str]
    rejected: list[str]
    tools: list[str]
    diagnostics: list[Diagnostic]


def init(checkout: Checkout, team: str) -> ProjectConfig:
    """Write `.armbench/config.yaml` tying the checkout to the team repo."""
    config = ProjectConfig(team=team)
    save_config(checkout, config)
    return config


def load_cache(checkout: Checkout) -> SuiteCache:
    """The suite cache, empty before the first pull."""
    path = checkout.cache_file
    return msgspec.json.decode(path.read_bytes(), type=SuiteCache) if path.exists() else SuiteCache()


def pull(checkout: Checkout, config: ProjectConfig, *, now: Callable[[], datetime]) -> PullResult:
    """Fetch the team repo, validate every benchmark file, cache the valid suites."""
    source = resolve_source(config.team, checkout.root)
    revision = fetch_team(source, checkout.mirror)
    files = files_at(checkout.mirror, revision)
    diagnostics = _team_file(files)
    aliases, alias_diags = _aliases(files)
    diagnostics += alias_diags
    tools, tool_diags = _tools(files)
    diagnostics += tool_diags
    cache = load_cache(checkout)
    cached, kept, rejected = [], [], []
    for suite_dir, suite_files in sorted(_suite_dirs(files).items()):
        name = suite_dir.rsplit("/", 1)[-1]
        check = validate_suite_dir(suite_files, suite_dir=suite_dir, aliases=aliases)
        diagnostics += check.diagnostics
        if check.valid:
            cache.suites[name] = revision
            keep_revision(checkout.mirror, f"suites/{name}", revision)
            cached.append(name)
        elif name in cache.suites:
            kept.append(name)
        else:
            rejected.append(name)
    checkout.cache_file.parent.mkdir(parents=True, exist_ok=True)
    checkout.cache_file.write_bytes(msgspec.json.encode(cache))
    keep_revision(checkout.mirror, "pulled", revision)
    record = PullRecord(team=config.team, revision=revision, at=now())
    checkout.pull_file.write_bytes(msgspec.json.encode(record))
    return PullResult(revision=revision, cached=cached, kept=kept, rejected=rejected,
                      tools=tools, diagnostics=diagnostics)


def _team_file(files: dict[str, bytes]) -> list[Diagnostic]:
    if "armbench.yaml" not in files:
        raise Refusal("The team repo has no armbench.yaml at its root, so it is not an armbench "
                      "team repo. Add one with `schemaVersion: v1alpha1`, push it, and pull "
                      "again.", code="team_invalid")
    _, found = parse_team_file(files["armbench.yaml"], file="armbench.yaml")
    return found


def _aliases(files: dict[str, bytes]) -> tuple[list[str], list[Diagnostic]]:
    text = files.get("models/aliases.yaml")
    if text is None:
        return [], []
    value, found = parse_aliases(text, file="models/aliases.yaml")
    return (sorted(value.aliases) if value else []), found


def _tools(files: dict[str, bytes]) -> tuple[list[str], list[Diagnostic]]:
    names, found = [], []
    for path in sorted(files):
        parts = path.split("/")
        if len(parts) == 3 and parts[0] == "tools" and parts[2] == "tool.yaml":
            tool, diags = parse_tool(files[path], file=path, folder_name=parts[1])
            found += diags
            if tool is not None and not has_errors(diags):
                names.append(parts[1])
    return names, found


def _suite_dirs(files: dict[str, bytes]) -> dict[str, dict[str, bytes]]:
    """`benchmarks/<suite>/` directories (those holding a suite.yaml or a tasks/ folder)."""
    dirs: dict[str, dict[str, bytes]] = defaultdict(dict)
    for path, data in files.items():
        parts = path.split("/")
        if parts[0] != "benchmarks" or len(parts) < 3:
            continue
        if parts[2] == "suite.yaml" and len(parts) == 3 or parts[2] == "tasks" and len(parts) == 4:
            dirs["/".join(parts[:2])][path] = data
    return dict(dirs)
