"""Arms that run a team workflow (team-asset-arms.md, "Arms that run a workflow"): the workflow
and the workflows it runs, pinned by name at the arm's team revision through the namespaces the
member receives, and refused before any run exists when a trial could not run them. Pure:
callers pass the revision's workflow files.

A trial runs the pinned steps in order in its own clone: a `prompt` step is a turn of the arm's
tool with its template filled (`{{ inputs.task }}` is the task's prompt, `{{ steps.<id>.outputs.
<name> }}` the final message of an earlier turn that declares `<name>`), a `command` step with
`workspace: continue` a command in the clone, and `workflow: <name>` splices that workflow's
steps in, found first in the calling workflow's own namespace.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping

from armbench.ledger.errors import Refusal
from armbench.ledger.events import PinnedWorkflow, WorkflowTurn
from armbench.suites.workflows import (
    TeamWorkflow,
    WorkflowConflict,
    WorkflowStep,
    find_workflow,
    parse_workflow,
)

__all__ = ["TEMPLATE", "pin_workflow", "step_refusal"]

TEMPLATE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
"""A `{{ ... }}` in a step's prompt or command."""
_OUTPUT = re.compile(r"steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)")
_FIX = "Fix it in the team repo, push, run armbench pull, and start again."


def pin_workflow(arm: str, name: str, files: Mapping[str, bytes], active: Collection[str],
                 revision: str) -> PinnedWorkflow:
    """Workflow `name` as arm `arm` runs it at `revision` (`files`: its `workflows/` files), or
    a Refusal naming the arm, the file and the fix."""
    file = _find(arm, name, files, active, namespace=None)
    flow = _read(arm, name, file, files)
    runs: dict[str, str] = {}
    steps = _turns(arm, flow, file, files, active, runs, scope="", seen=(name,))
    return PinnedWorkflow(name=name, file=file, source_hash=_sha(files[file]), revision=revision,
                          steps=steps, runs=runs)


def step_refusal(step: WorkflowStep) -> str | None:
    """Why a trial cannot run a workflow step, in the spec's words, or None."""
    if step.deliver is not None:
        return "delivers a pull request"
    if step.ask is not None:
        return "asks a person"
    if step.workspace is not None and step.workspace != "continue":
        return "opens a workspace other than continue"
    if step.command is not None and step.workspace != "continue":
        return "runs a command in the member's checkout; give it workspace: continue"
    if isinstance(step.workflow, Mapping) and "from" in step.workflow:
        return "fills a workflow from another step's output, which plan cannot pin"
    if step.workflow is not None and not isinstance(step.workflow, str):
        return "names its workflow in a form armbench does not know; write workflow: <name>"
    if sum(x is not None for x in (step.prompt, step.command, step.workflow)) != 1:
        return "has not exactly one of prompt, command and workflow"
    return None


def _find(arm: str, name: str, files: Mapping[str, bytes], active: Collection[str],
          namespace: str | None) -> str:
    try:
        file = find_workflow(list(files), name, active, own=namespace)
    except WorkflowConflict as exc:
        raise WorkflowConflict(f'Arm "{arm}" runs workflow "{name}": {exc.message}',
                               name=exc.name, files=exc.files) from None
    if file is None:
        raise Refusal(
            f'Arm "{arm}" runs workflow "{name}", and the team revision it runs on has no '
            f"workflows/{name}.yaml (nor one in a namespace this checkout receives). Add the "
            "workflow, or fix the arm's workflow, push, run armbench pull, and start again.",
            code="workflow_not_found")
    return file


def _read(arm: str, name: str, file: str, files: Mapping[str, bytes]) -> TeamWorkflow:
    flow = parse_workflow(files[file], file)
    if "task" not in flow.inputs:
        raise Refusal(
            f'Arm "{arm}" runs workflow "{name}" ({file}), which takes no input task, so its '
            "trials cannot give it the task's prompt. Add inputs: { task: string } to it, push, "
            "run armbench pull, and start again.", code="invalid_inputs")
    return flow


def _turns(arm: str, flow: TeamWorkflow, file: str, files: Mapping[str, bytes],
           active: Collection[str], runs: dict[str, str], *, scope: str,
           seen: tuple[str, ...]) -> list[WorkflowTurn]:
    turns: list[WorkflowTurn] = []
    declared: dict[str, list[str]] = {}
    for step in [*flow.steps, *flow.finally_]:
        def refuse(reason: str, step: WorkflowStep = step) -> Refusal:
            return Refusal(f'Arm "{arm}" runs workflow "{flow.name}" ({file}), whose step '
                           f'"{step.id}" {reason}. {_FIX}', code="arm_workflow_invalid")
        reason = step_refusal(step)
        if reason is not None:
            raise refuse(reason)
        for text in (step.prompt, step.command):
            for ref in TEMPLATE.findall(text or ""):
                problem = _reference_problem(ref, declared)
                if problem is not None:
                    raise refuse(problem)
        if isinstance(step.workflow, str):
            sub = step.workflow
            if sub in seen:
                raise refuse(f'runs workflow "{sub}", which runs it back')
            namespace = file.split("/")[1] if file.count("/") == 2 else None
            sub_file = _find(arm, sub, files, active, namespace)
            sub_flow = _read(arm, sub, sub_file, files)
            runs[sub] = f"{sub_file}@{_sha(files[sub_file])}"
            turns += _turns(arm, sub_flow, sub_file, files, active, runs,
                            scope=f"{scope}{step.id}.", seen=(*seen, sub))
        else:
            turns.append(WorkflowTurn(id=f"{scope}{step.id}", prompt=step.prompt,
                                      command=step.command, outputs=sorted(step.output),
                                      scope=scope))
        declared[step.id] = sorted(step.output)
    return turns


def _reference_problem(ref: str, declared: Mapping[str, list[str]]) -> str | None:
    if ref == "inputs.task":
        return None
    if ref.startswith("inputs."):
        return f"reads {{{{ {ref} }}}}, and a trial gives a workflow only inputs.task"
    found = _OUTPUT.fullmatch(ref)
    if found is None:
        return f"reads {{{{ {ref} }}}}, which is neither inputs.task nor steps.<id>.outputs.<name>"
    step, name = found.groups()
    if name not in declared.get(step, []):
        return (f"reads {{{{ {ref} }}}}, and no earlier step {step!r} declares the output "
                f"{name!r}")
    return None


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
