"""The workflow problems `armbench pull` reports, as `armbench run` would refuse them: a namespace
conflict (`workflow_namespace_conflict`, benchmark-suites.md: "at pull and at run start") of the
team's workflow that replaces armbench's benchmark workflow, and every refusal of the workflows
the arms of a suite run.
Pure: callers pass the pulled revision's files and the namespaces the member's roles receive.

A ref arm's workflow is read at its ref's commit, which plan resolves from the mirror; pull reads
only the pulled revision, so it leaves ref arms to plan.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from armbench.ledger.errors import Refusal
from armbench.suites.armflows import pin_workflow
from armbench.suites.arms import ResolvedArm, resolve_arms, team_kind
from armbench.suites.diagnostics import Diagnostic
from armbench.suites.findings import Findings
from armbench.suites.model import Suite, TeamWithout
from armbench.suites.pathspec import is_inside
from armbench.suites.workflows import WorkflowConflict, namespace_conflict
from armbench.suites.yamlfile import load_yaml

__all__ = ["CODE", "arm_conflicts", "override_conflict"]

CODE = "workflow_namespace_conflict"
_FIX = ("Rename or remove all but one, or drop one of the roles from .armbench/config.yaml, and "
        "pull again.")


def override_conflict(paths: Collection[str], name: str, active: Collection[str]
                      ) -> list[Diagnostic]:
    """An error when two or more `active` namespaces define `name`, the workflow that replaces
    armbench's benchmark workflow: no run can start, and none falls back to armbench's own."""
    clash = namespace_conflict(paths, name, active)
    if not clash:
        return []
    return [Diagnostic(
        file=clash[0], line=None, severity="error", code=CODE,
        message=f"Workflow `{name}` replaces armbench's benchmark workflow, and {len(clash)} "
                f"namespaces this checkout receives define it, {' and '.join(clash)}; one is "
                "expected, so `armbench run` refuses every suite rather than pick one or fall "
                f"back to armbench's own. {_FIX}")]


def arm_conflicts(suite: Suite, files: Mapping[str, bytes], suite_dir: str,
                  active: Collection[str]) -> list[Diagnostic]:
    """A warning at the suite file's line for each arm whose workflow `armbench run` would refuse:
    one that two or more `active` namespaces define (or that a workflow it runs does), and any
    other refusal of pinning it (`workflow_not_found`, `invalid_inputs`, `arm_workflow_invalid`),
    with run's own code and words. The suite stays cached, and run refuses it naming the arm."""
    file = f"{suite_dir.strip('/')}/suite.yaml"
    found: dict[tuple[str, str], tuple[ResolvedArm, Refusal]] = {}
    for arm in resolve_arms(suite):
        if arm.workflow is None or team_kind(arm.team) == "ref":
            continue
        try:
            pin_workflow(arm.name, arm.workflow, _arm_files(arm, files), active, revision="")
        except WorkflowConflict as exc:
            found.setdefault((_where(arm), exc.name), (arm, exc))
        except Refusal as exc:
            found.setdefault((_where(arm), exc.code), (arm, exc))
    if not found:
        return []
    report = Findings(load_yaml(files[file], file=file))
    for (where, _), (arm, refusal) in found.items():
        if not isinstance(refusal, WorkflowConflict):
            report.add(where, refusal.code, f"{refusal.message} (`armbench run` refuses this suite "
                       "before a run exists.)", "warning")
            continue
        via = "" if refusal.name == arm.workflow else f', which runs workflow "{refusal.name}"'
        report.add(where, CODE, f'arm "{arm.name}" runs workflow "{arm.workflow}"{via}, and '
                   f"{len(refusal.files)} namespaces this checkout receives define "
                   f'"{refusal.name}", {" and ".join(refusal.files)}; one is expected, so `armbench '
                   f"run` refuses this suite before a run exists. {_FIX}", "warning")
    return report.diagnostics


def _arm_files(arm: ResolvedArm, files: Mapping[str, bytes]) -> Mapping[str, bytes]:
    """The files an arm's workflow is read from: the pulled revision's, less a `without` arm's paths."""
    if not isinstance(arm.team, TeamWithout):
        return files
    gone = [p.strip("/") for p in arm.team.without]
    return {f: data for f, data in files.items()
            if not any(f == p or is_inside(f, p) for p in gone)}


def _where(arm: ResolvedArm) -> str:
    """The msgspec path that names the arm's workflow: its own key, else the defaults'."""
    if arm.origin == "matrix":
        return "$.matrix.workflow" if "workflow" in arm.changes else "$.defaults.workflow"
    return f"{arm.path}.workflow" if "workflow" in arm.changes else "$.defaults.workflow"
