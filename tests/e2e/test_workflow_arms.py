"""Arms that run a team workflow (team-asset-arms.md criteria 13, 14, 15 and 17), through the
installed command.

One team repo for the module. The scripted tool `agent` logs every turn's prompt (one line) and
model to `$E2E_OUT/turns-<suite>.log`; it prints `PLAN-use-plus` (its final message: a command
tool's stdout) when asked for a plan, fixes the bug only when told to follow that plan, sleeps on
`SLOW` and exits 3 on `BREAK`. So a trial passes only if both turns ran in its clone and the
first turn's output reached the second.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pytest

from e2e.conftest import FIX_ADD, World, dump, hidden_task, make_world

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

AGENT = r'''prompt=$(cat "$ARMBENCH_PROMPT_FILE")
printf '%s|%s\n' "$ARMBENCH_MODEL" "$(printf '%s' "$prompt" | tr '\n' ' ')" >> "$E2E_OUT/turns-$E2E_TAG.log"
case "$prompt" in *BREAK*) exit 3 ;; esac
case "$prompt" in *SLOW*) sleep 30 ;; esac
case "$prompt" in *"Write a plan"*) echo "PLAN-use-plus" ;; esac
case "$prompt" in *"Follow this plan: PLAN-use-plus"*)
''' + FIX_ADD + ''';; esac
'''


def flow(name: str, steps: list[dict[str, Any]], inputs: dict[str, str] | None = None) -> str:
    return dump({"schemaVersion": "v1alpha1", "name": name,
                 "inputs": {"task": "string"} if inputs is None else inputs, "steps": steps})


PLAN = {"id": "plan", "prompt": "Write a plan. Change no file.\n{{ inputs.task }}",
        "output": {"plan": "string"}}
FIX = {"id": "fix", "needs": ["plan"],
       "prompt": "{{ inputs.task }}\nFollow this plan: {{ steps.plan.outputs.plan }}"}
ROLES = {"roles": [{"id": "dev", "resources": {"workflows": ["dev", "ops"]}}]}


@dataclass
class Team:
    world: World
    pulled: dict[str, Any]
    """What `armbench pull` returned, with `roles: [dev]` in the checkout's config."""

    def run(self, suite: str) -> Any:
        got = self.world.armbench("run", suite, "--sandbox", env={"E2E_TAG": suite})
        assert got.envelope is not None and "data" in got.envelope, got
        return got

    def refused(self, suite: str) -> dict[str, str]:
        before = len(self.world.events("RunStarted"))
        got = self.world.armbench("run", suite, "--sandbox", env={"E2E_TAG": suite})
        assert got.code == 2, got
        assert len(self.world.events("RunStarted")) == before  # no run was created
        return got.error

    def turns(self, suite: str) -> list[str]:
        return self.world.out_lines(f"turns-{suite}.log")

    def sha(self, path: str) -> str:
        return hashlib.sha256((self.world.team.work / path).read_bytes()).hexdigest()


def _suite(world: World, name: str, arms: list[dict[str, Any]], **fields: Any) -> None:
    world.team.suite(name, defaults={"tool": "agent", "model": "m-one"}, arms=arms, **fields)
    world.team.task(name, "fix", **hidden_task(world.project))


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Team:
    world = make_world(tmp_path_factory.mktemp("workflow-arms"))
    t = world.team
    t.tool("agent", AGENT)
    t.write("manifest/roles.yaml", dump(ROLES))
    t.write("workflows/plan-then-fix.yaml", flow("plan-then-fix", [PLAN, FIX]))
    t.write("workflows/slow-then-fix.yaml", flow("slow-then-fix", [
        {**PLAN, "prompt": "SLOW " + PLAN["prompt"]}, FIX]))
    t.write("workflows/break-then-fix.yaml", flow("break-then-fix", [
        {**PLAN, "prompt": "BREAK " + PLAN["prompt"]}, FIX]))
    t.write("workflows/no-input.yaml", flow("no-input", [FIX], inputs={"goal": "string"}))
    t.write("workflows/deliver.yaml", flow("deliver", [PLAN, {**FIX, "deliver": {"pr": True}}]))
    t.write("workflows/ask.yaml", flow("ask", [PLAN, {**FIX, "ask": "Go on?"}]))
    t.write("workflows/branch.yaml", flow("branch", [PLAN, {**FIX, "workspace": {"branch": "x"}}]))
    t.write("workflows/shell.yaml", flow("shell", [{"id": "lint", "command": "make lint"}]))
    t.write("workflows/dev/both.yaml", flow("both", [PLAN, FIX]))
    t.write("workflows/ops/both.yaml", flow("both", [PLAN, FIX]))
    # criterion 17: the dev version runs, and its sub-workflow comes from dev too
    t.write("workflows/ns-flow.yaml", flow("ns-flow", [{"id": "x", "prompt": "SHARED-NS-FLOW"}]))
    t.write("workflows/dev/ns-flow.yaml", flow("ns-flow", [
        {"id": "think", "workflow": "think"},
        {"id": "fix", "prompt": "{{ inputs.task }}\nFollow this plan: PLAN-use-plus"}]))
    t.write("workflows/think.yaml", flow("think", [{"id": "t", "prompt": "SHARED-THINK"}]))
    t.write("workflows/dev/think.yaml", flow("think", [
        {"id": "t", "prompt": "DEV-THINK {{ inputs.task }}"}]))
    _suite(world, "wf", [{"name": "one-shot"}, {"name": "plan-first", "workflow": "plan-then-fix"}])
    _suite(world, "wf-slow", [{"name": "slow", "workflow": "slow-then-fix"}],
           trial={"timeout": "3s", "max_turns": 5})
    _suite(world, "wf-break", [{"name": "broken", "workflow": "break-then-fix"}])
    _suite(world, "wf-ns", [{"name": "dev-flow", "workflow": "ns-flow"}])
    _suite(world, "wf-matrix", [], matrix={"workflow": ["plan-then-fix", "ns-flow"]})
    for bad in ("no-input", "deliver", "ask", "branch", "shell", "both", "missing"):
        _suite(world, f"wf-{bad}", [{"name": "odd", "workflow": bad}])
    t.publish()
    assert world.armbench("init", "--team", str(t.bare)).code == 0
    config = world.checkout / ".armbench" / "config.yaml"
    config.write_text(config.read_text() + "roles: [dev]\n")
    pulled = world.armbench("pull")
    assert pulled.code == 0, pulled
    return Team(world, pulled.data["pull"])


def test_a_workflow_arm_runs_both_turns_in_its_clone_and_is_checked_on_what_they_left(
        team: Team) -> None:
    got = team.run("wf")
    assert got.code == 0, got
    record = team.world.record(got.data["done"]["run"])
    arms = {a["name"]: a for a in record["arms"]}
    assert "workflow" not in arms["one-shot"]
    assert arms["plan-first"]["workflow"] == {
        "name": "plan-then-fix", "sourceHash": team.sha("workflows/plan-then-fix.yaml")}
    results = {t["arm"]: t for t in record["trials"]}
    assert results["plan-first"]["result"] == "passed"  # the fix came from the second turn
    assert results["one-shot"]["result"] == "failed"  # one prompt, no plan to follow
    turns = team.turns("wf")
    assert [line.split("|")[0] for line in turns] == ["m-one"] * 3  # the arm's model each turn
    assert sum("Follow this plan: PLAN-use-plus" in line for line in turns) == 1
    assert sum(line.startswith("m-one|Write a plan") for line in turns) == 1
    reported = [e for e in team.world.events("StepReported")
                if e["step"].endswith("plan-first.prompt")]
    assert reported[-1]["outputs"]["workflow"] == {"name": "plan-then-fix",
                                                   "ran": ["plan", "fix"], "skipped": []}


def test_a_turn_that_spends_the_trial_timeout_skips_the_next_step_and_is_still_checked(
        team: Team) -> None:
    got = team.run("wf-slow")
    assert got.code == 0, got
    record = team.world.record(got.data["done"]["run"])
    [trial] = record["trials"]
    assert trial["limit"] == "timeout"
    assert trial["unenforced"] == ["max_turns"]
    assert trial["result"] == "failed"  # checked: the fix never ran
    assert [e for e in team.world.events("CheckRan") if e["kind"] == "trial"][-1]["result"] \
        == "failed"
    assert len(team.turns("wf-slow")) == 1  # the fix step was skipped


def test_a_workflow_step_that_fails_without_a_limit_makes_the_trial_error(team: Team) -> None:
    got = team.run("wf-break")
    record = team.world.record(got.data["done"]["run"])
    [trial] = record["trials"]
    assert trial["result"] == "error"
    assert "limit" not in trial
    assert len(team.turns("wf-break")) == 1


def test_a_namespaced_workflow_and_its_sub_workflow_come_from_the_members_namespace(
        team: Team) -> None:
    got = team.run("wf-ns")
    assert got.code == 0, got
    record = team.world.record(got.data["done"]["run"])
    assert record["arms"][0]["workflow"] == {
        "name": "ns-flow", "sourceHash": team.sha("workflows/dev/ns-flow.yaml")}
    assert record["trials"][0]["result"] == "passed"
    turns = team.turns("wf-ns")
    assert len(turns) == 2 and turns[0].startswith("m-one|DEV-THINK Task fix")
    assert not any("SHARED" in line for line in turns)


def test_a_matrix_of_workflows_has_one_arm_per_workflow_and_no_prompt_arm(team: Team) -> None:
    got = team.world.armbench("plan", "wf-matrix")
    assert got.code == 0, got
    arms = got.data["plan"]["plan"]["arms"]
    assert [(a["name"], a["workflow"], a["pinned_workflow"]["name"]) for a in arms] == [
        ("plan-then-fix", "plan-then-fix", "plan-then-fix"), ("ns-flow", "ns-flow", "ns-flow")]


REASONS = {
    "deliver": "delivers a pull request",
    "ask": "asks a person",
    "branch": "opens a workspace other than continue",
    "shell": "runs a command in the member's checkout; give it workspace: continue",
}


@pytest.mark.parametrize("bad", sorted(REASONS))
def test_a_step_no_trial_can_run_is_refused_before_a_run_exists(team: Team, bad: str) -> None:
    error = team.refused(f"wf-{bad}")
    step = "lint" if bad == "shell" else "fix"
    assert error == {"code": "arm_workflow_invalid", "message": (
        f'Arm "odd" runs workflow "{bad}" (workflows/{bad}.yaml), whose step "{step}" '
        f"{REASONS[bad]}. Fix it in the team repo, push, run armbench pull, and start again.")}


def test_a_workflow_without_inputs_task_is_refused_before_a_run_exists(team: Team) -> None:
    error = team.refused("wf-no-input")
    assert error["code"] == "invalid_inputs"
    assert "takes no input task" in error["message"]


def test_two_namespaces_the_member_receives_are_refused_before_a_run_exists(team: Team) -> None:
    error = team.refused("wf-both")
    assert error["code"] == "workflow_namespace_conflict"
    assert "workflows/dev/both.yaml and workflows/ops/both.yaml" in error["message"]


def test_pull_reports_an_arm_workflow_two_namespaces_define_and_keeps_the_suite(
        team: Team) -> None:
    found = [d for d in team.pulled["diagnostics"] if d["code"] == "workflow_namespace_conflict"]
    assert found == [{
        "file": "benchmarks/wf-both/suite.yaml", "line": 9, "severity": "warning",
        "code": "workflow_namespace_conflict", "path": "$.arms[0].workflow", "message": (
            'arms[0].workflow: arm "odd" runs workflow "both", and 2 namespaces this checkout '
            'receives define "both", workflows/dev/both.yaml and workflows/ops/both.yaml; one is '
            "expected, so `armbench run` refuses this suite before a run exists. Rename or "
            "remove all but one, or drop one of the roles from .armbench/config.yaml, and pull "
            "again.")}]
    assert "wf-both" in team.pulled["cached"]  # so run can refuse it by arm


def test_a_workflow_that_does_not_exist_is_refused_before_a_run_exists(team: Team) -> None:
    assert team.refused("wf-missing")["code"] == "workflow_not_found"


def test_pull_reports_each_arm_workflow_run_would_refuse_with_runs_code_and_words(
        team: Team) -> None:
    """Every suite above that run refuses for an arm's workflow was already named by pull, at the
    suite file's line, with the refusal's own code and message; the suites stay cached."""
    by_suite = {d["file"].split("/")[1]: d for d in team.pulled["diagnostics"]
                if d["severity"] == "warning" and d["code"] in
                {"workflow_not_found", "invalid_inputs", "arm_workflow_invalid"}}
    expected = {"wf-missing", "wf-no-input", *(f"wf-{bad}" for bad in REASONS)}
    assert set(by_suite) == expected
    for suite in sorted(expected):
        refused = team.refused(suite)
        got = by_suite[suite]
        assert got["code"] == refused["code"], suite
        assert got["message"].endswith(
            f"{refused['message']} (`armbench run` refuses this suite before a run exists.)"), suite
        assert suite in team.pulled["cached"]
