"""`armbench review`: every team file of every namespace, validated as pull does, as findings.

It reads the team repo the current directory is in: a branch, tag or commit (through `edge.team`), or the
working tree from disk (uncommitted and untracked files included, ignored ones left out).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from armbench.edge.config import armbench_home_in_home
from armbench.edge.team import read_team_checkout
from armbench.ledger.errors import Refusal
from armbench.suites import namespaces
from armbench.suites.diagnostics import Diagnostic, sorted_by_line
from armbench.suites.model import Aliases
from armbench.suites.scorers import check_scorer_files, scorer_names
from armbench.suites.teamtree import ASSET_DIRS, team_tree
from armbench.suites.validate import (
    parse_aliases,
    parse_team_file,
    parse_tool,
    protect_advice,
    validate_suite_dir,
)
from armbench.suites.without import without_findings

__all__ = ["TEAM_PATHS", "Finding", "Review", "review", "review_files"]

TEAM_PATHS = ("armbench.yaml", namespaces.ROLES_FILE, "models", "tools", "benchmarks", "scorers",
              *ASSET_DIRS)
"""The files and folders of the team repo that review reads."""


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    """One problem review found: a fail keeps the file from being used, a warn does not."""

    severity: Literal["fail", "warn"]
    code: str
    file: str
    line: int | None
    message: str


class Review(msgspec.Struct, frozen=True, kw_only=True):
    """What review found, for the envelope."""

    findings: list[Finding]
    ok: bool
    """True when no finding is a fail."""
    revision: str | None
    """The commit reviewed, or None for the working tree."""


def review(cwd: Path, *, branch: str | None = None) -> Review:
    """Review the team repo that holds `cwd`: at `branch` (a branch, tag or commit), or its working tree."""
    root, revision, files = read_team_checkout(cwd, branch, TEAM_PATHS)
    if "armbench.yaml" not in files:
        where = f"at {branch} ({revision[:7]})" if revision else "in the working tree"
        raise Refusal(f"The repo at {root} has no armbench.yaml at its root {where}, so it is not "
                      "an armbench team repo. Run armbench review in a checkout of the team repo.",
                      code="team_invalid")
    findings = [Finding(severity="fail" if d.severity == "error" else "warn", code=d.code, file=d.file,
                        line=d.line, message=d.message) for d in review_files(files)]
    return Review(findings=findings, ok=all(f.severity == "warn" for f in findings), revision=revision)


def review_files(files: Mapping[str, bytes]) -> list[Diagnostic]:
    """Every diagnostic of armbench.yaml (which must be there), roles, aliases, tools and every suite."""
    found = parse_team_file(files["armbench.yaml"], file="armbench.yaml")[1]
    roles, diags = namespaces.read_roles(files)
    declared = namespaces.declared_namespaces(roles)
    found += diags
    tree = team_tree(files)
    layers: dict[str, Aliases | None] = {}
    for path in tree.aliases:
        layers[path], diags = parse_aliases(files[path], file=path)
        found += diags
    for folder, path in tree.tools.items():
        found += parse_tool(files[path], file=path, folder_name=folder,
                            armbench_home=armbench_home_in_home())[1]
    suite_dirs = namespaces.find_suite_dirs(tree.benchmarks, declared)
    for where in suite_dirs:
        merged = namespaces.suite_aliases(layers, where.namespace)
        check = validate_suite_dir(namespaces.suite_files(files, where.dir), suite_dir=where.dir,
                                   aliases=sorted(merged.aliases) if merged else [],
                                   scorers=scorer_names(tree.scorers, where.namespace),
                                   tools=list(tree.tools))
        found += check.diagnostics
        for task in check.tasks:
            found += protect_advice(files[task.file], file=task.file)
        if check.suite is not None:  # what fails for every member; pull checks the member's namespaces
            found += without_findings(check.suite, files, where.dir, None, "error")
    found += check_scorer_files(files, tree.scorers)
    found += namespaces.layout_findings([*tree.benchmarks, *tree.aliases], declared)
    return sorted_by_line([*found, *namespaces.name_clashes(suite_dirs, severity="warning")])
