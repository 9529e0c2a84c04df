"""The team's own `armbench-benchmark` workflow, when its team repo has one: found by namespace
at the pulled revision, checked for the inputs `run` gives it, and turned into engine steps."""

from __future__ import annotations

import re
from collections.abc import Collection

from armbench.edge.config import ProjectConfig
from armbench.ledger.errors import Refusal
from armbench.ledger.events import StepSpec
from armbench.suites.namespaces import read_roles
from armbench.suites.workflows import TeamWorkflow, WorkflowStep, armbench_verb, find_workflow, parse_workflow

__all__ = ["BENCHMARK_WORKFLOW", "OverrideSteps", "active_workflow_namespaces", "team_override"]

BENCHMARK_WORKFLOW = "armbench-benchmark"
_INPUT = re.compile(r"\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}")

OverrideSteps = tuple[str, list[StepSpec], bool]
"""(the file, its steps as the engine runs them, whether every step that runs the trials requires
strict isolation: `requires: { strict: true }`)."""


def active_workflow_namespaces(files: dict[str, bytes], config: ProjectConfig) -> frozenset[str]:
    """The namespaces this checkout's roles and projects receive (benchmarks' or workflows')."""
    roles, _ = read_roles(files)
    found: set[str] = set()
    for role in (*roles.roles, *roles.projects) if roles else ():
        if role.id in config.roles:
            found |= set(role.resources.benchmarks) | set(role.resources.workflows)
    return frozenset(found)


def team_override(files: dict[str, bytes], active: Collection[str], *, member_aliases: bool
                  ) -> OverrideSteps | None:
    """The team's workflow that replaces armbench's benchmark workflow, or None; refused
    (`invalid_inputs`) when it cannot take the suite (or, with --member-aliases, the aliases)."""
    file = find_workflow(list(files), BENCHMARK_WORKFLOW, active)
    if file is None:
        return None
    flow = parse_workflow(files[file], file)
    missing = [name for name, wanted in (("suite", True), ("aliases", member_aliases))
               if wanted and name not in flow.inputs]
    if missing:
        option = "" if missing[0] == "suite" else " --member-aliases"
        raise Refusal(
            f"The team's {file} replaces armbench's benchmark workflow and takes no input "
            f"{missing[0]}, so armbench run{option} cannot give it the {missing[0]}. Add inputs: "
            f"{{ {missing[0]}: string }} to it, or remove it to run armbench's default.",
            code="invalid_inputs")
    trials = [s for s in (*flow.steps, *flow.finally_)
              if isinstance(s.workflow, dict) and "from" in s.workflow]
    return file, _steps(flow), all(s.strict() for s in trials)


def _steps(flow: TeamWorkflow) -> list[StepSpec]:
    return [*(_spec(s, final=False) for s in flow.steps),
            *(_spec(s, final=True) for s in flow.finally_)]


def _spec(step: WorkflowStep, *, final: bool) -> StepSpec:
    if isinstance(step.workflow, dict) and "from" in step.workflow:
        return StepSpec(id=step.id, kind="workflow", needs=list(step.needs),
                        from_step=str(step.workflow["from"]), independent=True, final=final)
    verb = armbench_verb(step.command)
    return StepSpec(id=step.id, kind="command", command=step.command, env=dict(step.env),
                    needs=list(step.needs), final=final, verb=verb)  # type: ignore[arg-type]
