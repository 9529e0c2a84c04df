"""Team workflow files, `workflows/<name>.yaml` and `workflows/<ns>/<name>.yaml`: which one a
member gets, and the parts of them armbench runs (the benchmark override, arm workflows). Pure:
callers pass the files' paths and bytes.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import msgspec

from armbench.ledger.errors import Refusal
from armbench.suites.namespaced import clashing, resolve
from armbench.suites.teamtree import team_tree

__all__ = ["TeamWorkflow", "WorkflowConflict", "WorkflowStep", "armbench_verb", "find_workflow",
           "namespace_conflict", "parse_workflow"]

_VERBS = {("plan",): "plan", ("check", "--baseline"): "check_baseline",
          ("check", "--trial"): "check_trial", ("judge",): "judge", ("report",): "report"}


def armbench_verb(command: str | None) -> str | None:
    """The armbench verb a command line runs (`plan`, `check_baseline`, `check_trial`, `judge`,
    `report`), or None when it runs no verb of armbench's."""
    words = (command or "").split()
    if words[:1] != ["armbench"]:
        return None
    return _VERBS.get(tuple(words[1:3])) or _VERBS.get(tuple(words[1:2]))


class WorkflowStep(msgspec.Struct, frozen=True, kw_only=True):
    """One step of a team workflow (keys armbench does not run are kept, unread)."""

    id: str
    """The step's id, unique in the workflow."""
    prompt: str | None = None
    """A prompt for the arm's tool; `{{ inputs.task }}` and `{{ steps.<id>.outputs.<name> }}`
    are filled in when it runs."""
    command: str | None = None
    """A command line."""
    env: dict[str, str] = {}
    """Variables for a command step; `{{ inputs.<name> }}` is filled in."""
    needs: list[str] = []
    """Steps that run first."""
    workflow: Any = None
    """A sub-workflow: `{from: <step>}`."""
    workspace: Any = None
    """`continue`, or a workspace it opens."""
    output: dict[str, str] = {}
    """What the step outputs, by name and type."""
    deliver: Any = None
    """A pull request or branch it delivers."""
    ask: Any = None
    """A question it asks a person."""
    requires: Any = None
    """What the step requires of its driver."""

    def strict(self) -> bool:
        """Whether it requires strict isolation (`requires: { strict: true }`): without it, a
        benchmark's trials step runs best-effort where no sandbox was declared."""
        return isinstance(self.requires, dict) and self.requires.get("strict") is True


class TeamWorkflow(msgspec.Struct, frozen=True, kw_only=True, rename={"finally_": "finally"}):
    """A team workflow file."""

    name: str
    """The workflow's name."""
    inputs: dict[str, Any] = {}
    """Its inputs, by name."""
    steps: list[WorkflowStep] = []
    """Its steps, in order."""
    finally_: list[WorkflowStep] = []
    """Steps that run however it ended."""


class WorkflowConflict(Refusal):
    """Two or more namespaces a member receives both define one workflow (exit 2)."""

    code = "workflow_namespace_conflict"

    def __init__(self, message: str, *, name: str, files: tuple[str, ...]) -> None:
        self.name = name
        """The workflow's name."""
        self.files = files
        """Its files in the member's namespaces, sorted."""
        super().__init__(message)


def namespace_conflict(paths: Collection[str], name: str, active: Collection[str]
                       ) -> tuple[str, ...]:
    """The files of workflow `name` in the `active` namespaces when two or more define it, else ()."""
    return clashing(team_tree(paths).workflows, "workflows", name, ".yaml", active)


def find_workflow(paths: Collection[str], name: str, active: Collection[str], *,
                  own: str | None = None) -> str | None:
    """The file of workflow `name` a member with `active` namespaces runs
    (`suites.namespaced.resolve`): the `own` namespace's `workflows/<own>/<name>.yaml` (a
    workflow's own, for the workflows it runs), else an active namespace's
    `workflows/<ns>/<name>.yaml`, over the shared `workflows/<name>.yaml`; two active namespaces
    that both define it are refused (`WorkflowConflict`) when `own` has none."""
    found = team_tree(paths).workflows
    clash = () if own and f"workflows/{own}/{name}.yaml" in found else namespace_conflict(
        paths, name, active)
    if clash:
        raise WorkflowConflict(
            f'Workflow "{name}" is defined in {len(clash)} namespaces this checkout receives, '
            f"{' and '.join(clash)}, so armbench cannot tell which one to run. Rename one, or "
            "drop one of the roles from .armbench/config.yaml, and start again.",
            name=name, files=clash)
    return resolve(found, "workflows", name, ".yaml", own=own, active=active)


def parse_workflow(data: bytes, file: str) -> TeamWorkflow:
    """A workflow file, or a refusal naming the file and what is wrong with it."""
    import yaml  # here: the host asks `armbench_verb` of every step, in every driver's process

    try:
        raw = yaml.safe_load(data)
        return msgspec.convert(raw, TeamWorkflow)
    except (yaml.YAMLError, msgspec.ValidationError) as exc:
        raise Refusal(f"The team's {file} is not a workflow armbench can read: {exc}. Fix it, "
                      "push, run armbench pull, and start again.",
                      code="workflow_invalid") from None

