"""The pinned arm workflow and its refusals (team-asset-arms.md, criteria 14 and 17): pure."""

from __future__ import annotations

import hashlib

import pytest
import yaml

from armbench.ledger.errors import Refusal
from armbench.suites.armflows import pin_workflow

PLAN_THEN_FIX = {
    "schemaVersion": "v1alpha1", "name": "plan-then-fix", "inputs": {"task": "string"},
    "steps": [{"id": "plan", "prompt": "Plan: {{ inputs.task }}", "output": {"plan": "string"}},
              {"id": "fix", "needs": ["plan"],
               "prompt": "{{ inputs.task }}\nFollow: {{ steps.plan.outputs.plan }}"}]}


def _y(flow: dict) -> bytes:
    return yaml.safe_dump(flow, sort_keys=False).encode()


def _refused(files: dict[str, bytes], name: str = "plan-then-fix",
             active: frozenset[str] = frozenset()) -> Refusal:
    with pytest.raises(Refusal) as got:
        pin_workflow("plan-first", name, files, active, "r" * 40)
    return got.value


def test_a_workflow_is_pinned_with_its_hash_revision_and_steps_in_order() -> None:
    data = _y(PLAN_THEN_FIX)
    pinned = pin_workflow("plan-first", "plan-then-fix", {"workflows/plan-then-fix.yaml": data},
                          frozenset(), "r" * 40)
    assert (pinned.name, pinned.file, pinned.source_hash, pinned.revision) == (
        "plan-then-fix", "workflows/plan-then-fix.yaml", hashlib.sha256(data).hexdigest(), "r" * 40)
    assert [(t.id, t.outputs) for t in pinned.steps] == [("plan", ["plan"]), ("fix", [])]


def test_a_namespace_the_member_receives_wins_and_its_sub_workflows_come_from_it() -> None:
    caller = {**PLAN_THEN_FIX, "steps": [{"id": "think", "workflow": "think"},
                                         {"id": "fix", "prompt": "{{ inputs.task }}"}]}
    think = {"name": "think", "inputs": {"task": "string"},
             "steps": [{"id": "t", "prompt": "dev thinks {{ inputs.task }}"}]}
    files = {"workflows/plan-then-fix.yaml": _y(PLAN_THEN_FIX),
             "workflows/dev/plan-then-fix.yaml": _y(caller),
             "workflows/think.yaml": _y({**think, "steps": [{"id": "t", "prompt": "shared"}]}),
             "workflows/dev/think.yaml": _y(think)}
    pinned = pin_workflow("a", "plan-then-fix", files, frozenset({"dev"}), "r" * 40)
    assert pinned.file == "workflows/dev/plan-then-fix.yaml"
    assert [(t.id, t.prompt) for t in pinned.steps] == [
        ("think.t", "dev thinks {{ inputs.task }}"), ("fix", "{{ inputs.task }}")]
    assert pinned.runs == {"think": "workflows/dev/think.yaml@"
                           + hashlib.sha256(files["workflows/dev/think.yaml"]).hexdigest()}
    shared = pin_workflow("a", "plan-then-fix", files, frozenset(), "r" * 40)
    assert shared.file == "workflows/plan-then-fix.yaml"


def test_a_workflow_without_inputs_task_is_refused() -> None:
    flow = {**PLAN_THEN_FIX, "inputs": {"goal": "string"}}
    got = _refused({"workflows/plan-then-fix.yaml": _y(flow)})
    assert got.code == "invalid_inputs"
    assert got.message == (
        'Arm "plan-first" runs workflow "plan-then-fix" (workflows/plan-then-fix.yaml), which '
        "takes no input task, so its trials cannot give it the task's prompt. Add inputs: "
        "{ task: string } to it, push, run armbench pull, and start again.")


@pytest.mark.parametrize(("step", "reason"), [
    ({"deliver": {"pr": True}, "prompt": "x"}, "delivers a pull request"),
    ({"ask": "Ready?", "prompt": "x"}, "asks a person"),
    ({"workspace": {"branch": "b"}, "prompt": "x"}, "opens a workspace other than continue"),
    ({"command": "make fix"},
     "runs a command in the member's checkout; give it workspace: continue"),
])
def test_each_step_a_trial_cannot_run_is_refused_in_the_spec_words(step: dict, reason: str) -> None:
    flow = {**PLAN_THEN_FIX, "steps": [PLAN_THEN_FIX["steps"][0], {"id": "odd", **step}]}
    got = _refused({"workflows/plan-then-fix.yaml": _y(flow)})
    assert got.code == "arm_workflow_invalid"
    assert got.message == (
        'Arm "plan-first" runs workflow "plan-then-fix" (workflows/plan-then-fix.yaml), whose '
        f'step "odd" {reason}. Fix it in the team repo, push, run armbench pull, and start again.')


def test_a_command_with_workspace_continue_is_pinned() -> None:
    flow = {**PLAN_THEN_FIX, "steps": [{"id": "lint", "command": "make lint",
                                        "workspace": "continue"}]}
    pinned = pin_workflow("a", "plan-then-fix", {"workflows/plan-then-fix.yaml": _y(flow)},
                          frozenset(), "r" * 40)
    assert [(t.id, t.command) for t in pinned.steps] == [("lint", "make lint")]


def test_two_namespaces_the_member_receives_are_a_conflict() -> None:
    files = {"workflows/dev/plan-then-fix.yaml": _y(PLAN_THEN_FIX),
             "workflows/ops/plan-then-fix.yaml": _y(PLAN_THEN_FIX)}
    got = _refused(files, active=frozenset({"dev", "ops"}))
    assert got.code == "workflow_namespace_conflict"
    assert got.message.startswith('Arm "plan-first" runs workflow "plan-then-fix": Workflow '
                                  '"plan-then-fix" is defined in 2 namespaces')
    assert pin_workflow("a", "plan-then-fix", files, frozenset({"dev"}), "r").file \
        == "workflows/dev/plan-then-fix.yaml"


def test_a_workflow_that_does_not_exist_is_refused() -> None:
    got = _refused({"workflows/ops/plan-then-fix.yaml": _y(PLAN_THEN_FIX)})
    assert got.code == "workflow_not_found"
    assert "has no workflows/plan-then-fix.yaml" in got.message


@pytest.mark.parametrize(("prompt", "said"), [
    ("{{ steps.fix.outputs.plan }}", "no earlier step 'fix' declares the output 'plan'"),
    ("{{ steps.plan.outputs.notes }}", "no earlier step 'plan' declares the output 'notes'"),
    ("{{ inputs.style }}", "a trial gives a workflow only inputs.task"),
    ("{{ env.HOME }}", "neither inputs.task nor steps.<id>.outputs.<name>"),
])
def test_a_reference_no_trial_can_fill_is_refused(prompt: str, said: str) -> None:
    flow = {**PLAN_THEN_FIX, "steps": [PLAN_THEN_FIX["steps"][0], {"id": "fix", "prompt": prompt}]}
    got = _refused({"workflows/plan-then-fix.yaml": _y(flow)})
    assert got.code == "arm_workflow_invalid"
    assert said in got.message


def test_a_workflow_that_runs_itself_back_is_refused() -> None:
    flow = {**PLAN_THEN_FIX, "steps": [{"id": "again", "workflow": "plan-then-fix"}]}
    got = _refused({"workflows/plan-then-fix.yaml": _y(flow)})
    assert 'runs workflow "plan-then-fix", which runs it back' in got.message
