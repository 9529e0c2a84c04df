"""The rules a decoded `suite.yaml` must meet beyond its types ("Validation, at pull")."""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection

import msgspec

from armbench.suites.arms import (
    ARM_KEYS,
    BUILT_IN_TOOLS,
    MATRIX_KEYS,
    ResolvedArm,
    matrix_size,
    resolve_arms,
    same_team,
)
from armbench.suites.durations import parse_duration
from armbench.suites.environment_rules import check_environment
from armbench.suites.findings import Findings
from armbench.suites.model import (
    ARMS_MAX,
    DEFAULT_DISK,
    DEFAULT_MEMORY,
    MATRIX_ARMS_MAX,
    PARALLEL_RANGE,
    REPETITIONS_RANGE,
    RETRIES_RANGE,
    CostCap,
    StepLimits,
    Suite,
    TeamWithout,
)
from armbench.suites.pathspec import is_inside
from armbench.suites.sizes import parse_size
from armbench.suites.values import name_problem, path_problem, ref_problem, unpublishable

__all__ = ["check_suite"]


def check_suite(suite: Suite, report: Findings, aliases: Collection[str] | None,
                tools: Collection[str] | None = None) -> None:
    """Report every rule `suite` breaks; `aliases` (alias names) enables the model-name warning,
    `tools` (the team's tool folders) the warning on a tool no trial could run."""
    _check_scalars(suite, report)
    check_environment(suite.environment, report)
    _check_arm_values(suite, report)
    if not suite.arms and suite.matrix is None:
        report.error("$.arms", "arms_count", "expected 1 to 6 arms, found none. Add `arms:` with a "
                     "baseline arm such as `- name: baseline`, or a `matrix`.")
    if len(suite.arms) > ARMS_MAX:
        report.error(f"$.arms[{ARMS_MAX}]", "arms_count", f"expected 1 to {ARMS_MAX} arms, found "
                     f"{len(suite.arms)}. Remove an arm or split the suite.")
    if suite.matrix is not None and not _check_matrix(suite, report):
        arms = resolve_arms(msgspec.structs.replace(suite, matrix=None))
    else:
        arms = resolve_arms(suite)
    _check_arms(arms, report)
    _check_model_name(suite, arms, report, aliases)
    if tools is not None:
        _check_tool_names(suite, arms, report, tools)


def _check_tool_names(suite: Suite, arms: list[ResolvedArm], report: Findings,
                      tools: Collection[str]) -> None:
    """An arm whose tool is neither built in nor a team tool: its trials would never run, and
    `run` would exit 0 all the same; a warning at the arm, with the likeliest name."""
    known = sorted({*BUILT_IN_TOOLS, *tools})
    warned: set[str] = set()
    for arm in arms:
        if arm.tool in known or arm.tool in warned:
            continue
        warned.add(arm.tool)
        path = "$.defaults.tool" if arm.tool == suite.defaults.tool else f"{arm.path}.tool"
        close = difflib.get_close_matches(arm.tool, known, n=1, cutoff=0.6)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        report.warning(path, "tool_unknown",
                       f"arm `{arm.name}` runs tool `{arm.tool}`, which is neither an agent CLI armbench "
                       f"runs ({_and(list(BUILT_IN_TOOLS))}) nor a team tool (tools/{arm.tool}/tool.yaml), "
                       f"so its trials would not run.{hint} Fix the tool's name, or add its tool.yaml.")


def _check_scalars(suite: Suite, report: Findings) -> None:
    if problem := name_problem(suite.name):
        report.error("$.name", "suite_name_invalid", f"{problem}. Name the suite like its directory.")
    if not suite.repo.strip():
        report.error("$.repo", "repo_empty", "expected the project the tasks start from, found an empty "
                     "text. Write its clone URL, such as `https://github.com/acme/api`.")
    for key, (low, high), value in (("repetitions", REPETITIONS_RANGE, suite.repetitions),
                                    ("parallel", PARALLEL_RANGE, suite.parallel)):
        if not low <= value <= high:
            report.error(f"$.{key}", f"{key}_range",
                         f"must be a whole number from {low} to {high}, found {value}. "
                         "Set it within that range.")
    _check_duration(report, "$.timeout", suite.timeout)
    if suite.trial is not None:
        if suite.trial.timeout is not None:
            _check_duration(report, "$.trial.timeout", suite.trial.timeout)
        if suite.trial.limits is not None:
            _check_limits(report, suite.trial.limits)
        if suite.trial.egress != "any":
            _check_egress(report, suite.trial.egress)
        if suite.trial.max_turns is not None and suite.trial.max_turns < 1:
            report.error("$.trial.max_turns", "max_turns_range", f"must be a whole number of at least 1, "
                         f"found {suite.trial.max_turns}. Raise it, or remove it for no turn limit.")
        low, high = RETRIES_RANGE
        if not low <= suite.trial.retries <= high:
            report.error("$.trial.retries", "retries_range", f"must be a whole number from {low} to "
                         f"{high}, found {suite.trial.retries}. Set it within that range (0: never "
                         "retry a transient failure).")
        _check_duration(report, "$.trial.retry_backoff", suite.trial.retry_backoff)
        if suite.trial.setup == "once" and not (suite.setup or "").strip():
            report.error("$.trial.setup", "setup_once_without_setup", "`once` runs the suite's "
                         "setup once per task, but the suite has no setup. Write `setup`, or "
                         "remove `trial.setup`.")
    if suite.budget is not None:
        _check_cost(report, "$.budget.cost", suite.budget.cost, "the run", "`budget`")
    budget = suite.trial.budget if suite.trial is not None else None
    if budget is not None:
        if budget.cost is not None:
            _check_cost(report, "$.trial.budget.cost", budget.cost, "one trial",
                        "`trial.budget.cost`")
        if budget.tokens is not None and budget.tokens < 1:
            report.error("$.trial.budget.tokens", "budget_range", f"must be a whole number of at "
                         f"least 1, found {budget.tokens}. Raise it, or remove it for no token "
                         "cap.")
    if suite.setup is not None and not suite.setup.strip():
        report.error("$.setup", "setup_empty", "expected a shell command such as `npm ci`, found an empty "
                     "text. Write the command, or remove `setup`.")
    for index, scorer in enumerate(suite.scorers):
        if problem := name_problem(scorer):
            report.error(f"$.scorers[{index}]", "scorer_invalid", f"{problem}. Name a team scorer file.")
        elif scorer in suite.scorers[:index]:
            report.error(f"$.scorers[{index}]", "scorer_duplicate",
                         f"`{scorer}` is listed twice. Remove one; each scorer judges every trial once.")
    if suite.judge is not None:
        if not suite.judge.tool.strip():
            report.error("$.judge.tool", "judge_tool_empty", "expected the tool that judges (such as "
                         "`claude` or a team command tool), found an empty text. Name one.")
        if suite.judge.timeout is not None:
            _check_duration(report, "$.judge.timeout", suite.judge.timeout)


def check_scorer_names(suite: Suite, report: Findings, known: Collection[str]) -> None:
    """Each scorer the suite names is a scorer file it can reach (`scorers/<name>.md`, or
    `scorers/<ns>/<name>.md` for a suite in namespace `<ns>`)."""
    for index, scorer in enumerate(suite.scorers):
        if scorer not in known and not name_problem(scorer):
            report.error(f"$.scorers[{index}]", "scorer_not_found",
                         f"expected a scorer file scorers/{scorer}.md (or scorers/<namespace>/"
                         f"{scorer}.md for a namespaced suite), found none. Add the file, or "
                         "remove the name.")


_EGRESS_HOST = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?"
                          r"(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*\.?|\[?[0-9A-Fa-f:.]+\]?")
"""A host `trial.egress` may list: a name (a `*.` before it for every name below it) or an address."""


def _check_egress(report: Findings, hosts: tuple[str, ...]) -> None:
    for index, host in enumerate(hosts):
        if not _EGRESS_HOST.fullmatch(host.strip()):
            report.error(f"$.trial.egress[{index}]", "egress_host_invalid",
                         f"expected a host name such as `pypi.org` or `*.example.com`, or an "
                         f"address, found {host!r} (no scheme, path or port). Write the host alone, "
                         "or `trial.egress: any` for any host.")


def _check_limits(report: Findings, limits: StepLimits) -> None:
    sizes = (("memory", limits.memory, DEFAULT_MEMORY), ("disk", limits.disk, DEFAULT_DISK))
    for key, size, default in sizes:
        if size is None:
            continue
        try:
            parse_size(size)
        except ValueError as error:
            report.error(f"$.trial.limits.{key}", "size_invalid", f"{error}. Write a size such as "
                         f"`{default}`, or remove it for armbench's default ({default}).")
    if limits.pids is not None and limits.pids < 16:
        report.error("$.trial.limits.pids", "pids_range", f"must be a whole number of at least 16, "
                     f"found {limits.pids}. Raise it, or remove it for armbench's default (1024).")


def _check_cost(report: Findings, path: str, cap: CostCap, who: str, key: str) -> None:
    if not (cap.amount > 0 and cap.amount < float("inf")):
        report.error(f"{path}.amount", "budget_range", f"must be a number more than 0, found "
                     f"{cap.amount}. Set the most {who} may spend, or remove {key}.")
    if not cap.unit.strip():
        report.error(f"{path}.unit", "budget_unit_empty", "expected the unit the tools state their "
                     "cost in, such as `USD`, found an empty text. Write it.")


def _check_duration(report: Findings, path: str, text: str) -> None:
    try:
        parse_duration(text)
    except ValueError as error:
        report.error(path, "duration_invalid", f"{error}.")


def _check_arm_values(suite: Suite, report: Findings) -> None:
    for key in ARM_KEYS:
        _check_value(report, f"$.defaults.{key}", key, getattr(suite.defaults, key))
    for index, arm in enumerate(suite.arms):
        if problem := name_problem(arm.name):
            report.error(f"$.arms[{index}].name", "arm_name_invalid", f"{problem}. Rename the arm.")
        for key in ARM_KEYS:
            _check_value(report, f"$.arms[{index}].{key}", key, getattr(arm, key))
    for key in MATRIX_KEYS if suite.matrix is not None else ():
        for index, value in enumerate(getattr(suite.matrix, key) or ()):
            _check_value(report, f"$.matrix.{key}[{index}]", key, value)


def _check_value(report: Findings, path: str, key: str, value: object) -> None:
    if value is None:
        return
    if isinstance(value, TeamWithout):
        _check_without(report, path, value)
        return
    assert isinstance(value, str)
    if not value.strip():
        report.error(path, "arm_value_empty", f"expected a {key} name, found an empty text. "
                     f"Write the {key}, or remove the key to keep the defaults' {key}.")
    elif unpublishable(value):
        report.error(path, "arm_unpublishable", f"expected a plain {key} name, found `{value}`, which looks "
                     "like a URL or a local path and would reach the published record. Use a plain name.")
    elif key == "team" and value not in ("pulled", "none") and (problem := ref_problem(value)):
        report.error(path, "team_ref_invalid", f"{problem}. Use `pulled`, `none`, a branch, tag or commit, "
                     "or `{without: [paths]}`.")


def _check_without(report: Findings, path: str, team: TeamWithout) -> None:
    if not team.without:
        report.error(f"{path}.without", "without_empty", "expected team repo paths to leave out, found an "
                     "empty list. List paths such as `skills/release`, or use `team: pulled`.")
    for index, item in enumerate(team.without):
        where = f"{path}.without[{index}]"
        if problem := path_problem(item):
            report.error(where, "without_path_invalid", f"{problem}. Write a team repo path as git lists it.")
        elif outer := next((o for o in team.without[:index] if o.rstrip("/") == item.rstrip("/")
                            or is_inside(item, o) or is_inside(o, item)), None):
            report.error(where, "without_nested", f"`{item}` overlaps `{outer}`, listed before it: a path "
                         "inside another listed path, or the same path twice. Keep only the outer path.")


def _check_matrix(suite: Suite, report: Findings) -> bool:
    """Report the matrix's own problems; True when it has none, so its arms can be derived."""
    assert suite.matrix is not None
    before = len(report.diagnostics)
    listed = [key for key in MATRIX_KEYS if getattr(suite.matrix, key) is not None]
    if not listed:
        report.error("$.matrix", "matrix_empty", "expected values to cross under tool, model, team or "
                     "workflow, found none. Add lists such as `tool: [claude, codex]`, or remove `matrix`.")
    for key in listed:
        values = getattr(suite.matrix, key)
        if not values:
            report.error(f"$.matrix.{key}", "matrix_empty", f"expected a list of {key} values, found an "
                         f"empty list. Add values, or remove `{key}` from the matrix.")
        for index, value in enumerate(values):
            if any(same_team(value, v) if key == "team" else value == v for v in values[:index]):
                report.error(f"$.matrix.{key}[{index}]", "matrix_value_duplicate",
                             "repeats a value listed before it. Remove the repeat.")
    size = matrix_size(suite.matrix)
    if size > MATRIX_ARMS_MAX:
        counts = " × ".join(str(len(getattr(suite.matrix, key))) for key in listed)
        report.error("$.matrix", "matrix_too_many", f"expected at most {MATRIX_ARMS_MAX} arms, found {size} "
                     f"({counts}). Remove values, or split the suite.")
    return len(report.diagnostics) == before


def _check_arms(arms: list[ResolvedArm], report: Findings) -> None:
    seen: dict[str, ResolvedArm] = {}
    unchanged: ResolvedArm | None = None
    for position, arm in enumerate(arms):
        where = f"{arm.path}.name" if arm.origin == "arms" else arm.path
        if arm.name in seen:
            report.error(where, "arm_name_duplicate", f"the arm name `{arm.name}` is already used by "
                         f"{_where(seen[arm.name])}. Give each arm its own name.")
        seen.setdefault(arm.name, arm)
        if arm.origin == "arms" and len(arm.changes) > 1:
            report.error(arm.path, "arm_changes_many", f"arm `{arm.name}` changes {_and(arm.changes)}; an "
                         "arm changes at most one defaults key, so its result reads as that change. Split "
                         "it into one arm per key, or cross the values in a `matrix`.")
        twin = next((o for o in arms[:position] if _same_values(o, arm)), None)
        if not arm.changes and unchanged is not None:
            report.error(arm.path, "arms_unchanged", f"arm `{arm.name}` changes no defaults key, and neither "
                         f"does {_where(unchanged)}: at most one arm runs the defaults as they are. Remove "
                         "it, or change one key.")
        elif twin is not None and arm.changes:
            report.error(arm.path, "arm_duplicate", f"arm `{arm.name}` runs the same tool, model, effort, "
                         f"team and workflow as {_where(twin)}. Remove one of them, or change one key.")
        if not arm.changes and unchanged is None:
            unchanged = arm


def _check_model_name(suite: Suite, arms: list[ResolvedArm], report: Findings,
                      aliases: Collection[str] | None) -> None:
    model, tool = suite.defaults.model, suite.defaults.tool
    if aliases is None or model is None or model in aliases:
        return
    others = sorted({arm.tool for arm in arms if arm.tool != tool})
    if others:
        report.warning("$.defaults.model", "model_not_alias",
                       f"`{model}` is a model name, not an alias of models/aliases.yaml, and arms change "
                       f"the tool to {_and(others)}, which would be asked for `{model}` too. Use an alias, "
                       "which resolves to a model per tool.")


def _same_values(a: ResolvedArm, b: ResolvedArm) -> bool:
    return (a.tool, a.model, a.effort, a.workflow) == (b.tool, b.model, b.effort, b.workflow) and same_team(
        a.team, b.team)


def _where(arm: ResolvedArm) -> str:
    return f"`{arm.name}` ({arm.path.removeprefix('$.')})"


def _and(items: tuple[str, ...] | list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
