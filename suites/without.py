"""The rules a `team: {without: [paths]}` must meet against the team repo it leaves paths out of. Pure.

Pull warns with these (a member's suite stays cached, so `armbench run` can refuse it by arm),
review reports them for every namespace, and plan refuses an arm that breaks one before a run
exists. Under an asset folder (`suites.teamtree.ASSET_DIRS`) a path must change what the member
receives; elsewhere it only has to exist. A path inside another listed path is a rule of the
suite file alone (`suites.suite_rules`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence

from msgspec import Struct

from armbench.suites.arms import MATRIX_KEYS
from armbench.suites.diagnostics import Diagnostic, Severity
from armbench.suites.findings import Findings
from armbench.suites.model import Suite, TeamWithout
from armbench.suites.pathspec import is_inside
from armbench.suites.teamtree import ASSET_DIRS, TEAM_FILE, AssetNamespaces, delivered
from armbench.suites.yamlfile import LoadedYaml, load_yaml

__all__ = ["WithoutProblem", "suite_without_findings", "team_without_paths", "without_findings",
           "without_problems"]


class WithoutProblem(Struct, frozen=True, kw_only=True):
    """Why one listed path cannot be left out."""

    index: int
    """Its place in the `without` list."""
    path: str
    """The path as written."""
    code: str
    """`without_team_file`, `without_path_missing`, `without_namespace_inactive` or `without_no_effect`."""
    reason: str
    """Why, as a clause: `the pulled team revision has no file or folder skills/x`."""


def without_problems(paths: Sequence[str], files: Collection[str], spaces: AssetNamespaces | None,
                     ) -> list[WithoutProblem]:
    """The problems of each path of one `without` list against the team repo's `files`; `spaces`
    None checks only what holds for every member (review reads every namespace)."""
    found = []
    clean = [p.strip("/") for p in paths]
    after = delivered(_left(files, clean), spaces) if spaces is not None else {}
    for index, raw in enumerate(paths):
        path = raw.strip("/")
        problem = _problem(path, files, spaces, [p for p in clean if p != path], after)
        if problem is not None:
            found.append(WithoutProblem(index=index, path=raw, code=problem[0], reason=problem[1]))
    return found


def _left(files: Collection[str], paths: Collection[str]) -> list[str]:
    """The files that remain when `paths` (files or folders) are left out."""
    return [f for f in files if not any(f == p or is_inside(f, p) for p in paths)]


def _problem(path: str, files: Collection[str], spaces: AssetNamespaces | None, others: list[str],
             after: dict[str, tuple[str, ...]]) -> tuple[str, str] | None:
    """Why `path` cannot be left out; with `spaces`, it must change what leaving out the `others`
    alone delivers (`after` is what leaving out all of them delivers)."""
    if path == TEAM_FILE:
        return ("without_team_file", f"{TEAM_FILE} marks the team repo and is no team asset, so no "
                "arm can run without it")
    parts = path.split("/")
    if spaces is None and parts[0] not in ASSET_DIRS:
        return None  # review reads only the asset folders; plan and pull see every file
    inside = [f for f in files if f == path or is_inside(f, path)]
    if not inside:
        return ("without_path_missing", f"the pulled team revision has no file or folder {path}")
    if spaces is None or parts[0] not in ASSET_DIRS:
        return None
    if len(parts) >= 2 and parts[1] in spaces.declared[parts[0]] and (
            parts[1] not in spaces.active[parts[0]]):
        return ("without_namespace_inactive", f"{parts[0]}/{parts[1]}/ is a namespace this checkout's "
                f"roles do not receive (.armbench/config.yaml's roles list none that has "
                f"`{parts[1]}` in resources.{parts[0]} of manifest/roles.yaml), so it is not delivered "
                "and leaving it out changes nothing")
    if delivered(_left(files, others), spaces) == after:
        return ("without_no_effect", f"leaving out {path} changes nothing armbench delivers to a "
                "trial: an active namespace's version stands in for it (list both), or it is no asset "
                "(a skill is skills/<name>/SKILL.md, a rule, agent or instruction file a .md file)")
    return None


def team_without_paths(suite: Suite) -> Iterator[tuple[str, TeamWithout]]:
    """Every `without` the suite writes, with its msgspec path: defaults, arms, then the matrix."""
    if isinstance(suite.defaults.team, TeamWithout):
        yield "$.defaults.team", suite.defaults.team
    for index, arm in enumerate(suite.arms):
        if isinstance(arm.team, TeamWithout):
            yield f"$.arms[{index}].team", arm.team
    if suite.matrix is not None and "team" in MATRIX_KEYS:
        for index, value in enumerate(suite.matrix.team or ()):
            if isinstance(value, TeamWithout):
                yield f"$.matrix.team[{index}]", value


def suite_without_findings(suite: Suite, loaded: LoadedYaml, files: Collection[str],
                           spaces: AssetNamespaces | None, severity: Severity) -> list[Diagnostic]:
    """The `without` problems of a decoded suite file, at their lines."""
    report = Findings(loaded)
    for where, team in team_without_paths(suite):
        for problem in without_problems(team.without, files, spaces):
            report.add(f"{where}.without[{problem.index}]", problem.code,
                       f"cannot leave out `{problem.path}`: {problem.reason}. Fix the path, or "
                       "make a branch of the team repo without it and name it as the arm's team.",
                       severity)
    return report.diagnostics


def without_findings(suite: Suite, files: Mapping[str, bytes], suite_dir: str,
                     spaces: AssetNamespaces | None, severity: Severity) -> list[Diagnostic]:
    """The `without` problems of a suite of the team repo whose files are `files` (none to look
    for when the suite leaves nothing out, so its file is not loaded again)."""
    if next(team_without_paths(suite), None) is None:
        return []
    file = f"{suite_dir.strip('/')}/suite.yaml"
    return suite_without_findings(suite, load_yaml(files[file], file=file), files, spaces, severity)
