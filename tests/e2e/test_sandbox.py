"""Criterion 10: the sandbox rule, an arm the local driver cannot run, and a 10% pass rate.

Arm `real` runs the scripted tool: it fixes the bug in its first trial only and fails (exit 1)
in the other nine. Arm `ghost` uses `nosuchtool`, which the team repo has no tools/ folder for.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from e2e.conftest import FIX_ADD, SANDBOX_MESSAGE, Result, World, arm_rows, hidden_task, make_world

pytestmark = pytest.mark.e2e

AGENT = """
cat > /dev/null
n=$(wc -l < "$E2E_OUT/prompts" 2>/dev/null || echo 0)
echo "$ARMBENCH_MODEL" >> "$E2E_OUT/prompts"
if [ "$n" -gt 0 ]; then echo "giving up" >&2; exit 1; fi
""" + FIX_ADD

GHOST_LINE = 'Arm "ghost" uses nosuchtool, which the local driver cannot run, so its trials did not run.'


@dataclass
class Ran:
    world: World
    refused: Result
    result: Result
    record: dict


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    world = make_world(tmp_path_factory.mktemp("sandbox"))
    world.team.tool("agent", AGENT)
    world.team.suite("ten", arms=[{"name": "real"}, {"name": "ghost", "tool": "nosuchtool"}],
                     repetitions=10)
    world.team.task("ten", "hidden", **hidden_task(world.project))
    world.init_and_pull()
    refused = world.armbench("run", "ten")
    world.configure(sandbox=True)
    result = world.armbench("run", "ten")
    assert result.envelope is not None, result
    return Ran(world, refused, result, world.record(result.data["done"]["run"]))


def test_without_a_declared_sandbox_run_refuses_and_creates_no_run(ran: Ran) -> None:
    assert ran.refused.code == 2, ran.refused
    assert ran.refused.envelope == {"error": {"code": "requirement_unmet", "message": SANDBOX_MESSAGE}}
    assert SANDBOX_MESSAGE in ran.refused.stderr
    assert len(ran.world.events("RunStarted")) == 1  # only the later, declared run


def test_with_workflows_sandbox_true_in_the_config_it_runs_and_succeeds(ran: Ran) -> None:
    assert ran.result.code == 0, ran.result
    assert ran.result.data["done"]["state"] == "succeeded"


def test_an_arm_whose_tool_the_local_driver_cannot_run_has_its_trials_not_run(ran: Ran) -> None:
    ghost = [t for t in ran.record["trials"] if t["arm"] == "ghost"]
    assert len(ghost) == 10 and {t["result"] for t in ghost} == {"not_run"}
    assert GHOST_LINE in ran.result.stderr.splitlines()
    assert ran.result.stderr.index(GHOST_LINE) < ran.result.stderr.index("| Arm | Tool |")
    assert arm_rows(ran.result.stderr)["ghost"]["Not run"] == "10"


def test_the_other_arms_trials_still_run(ran: Ran) -> None:
    real = [t for t in ran.record["trials"] if t["arm"] == "real"]
    assert sorted(t["result"] for t in real) == ["error"] * 9 + ["passed"]
    assert len(ran.world.out_lines("prompts")) == 10


def test_one_passed_trial_of_ten_planned_shows_a_pass_rate_of_10_percent(ran: Ran) -> None:
    row = arm_rows(ran.result.stderr)["real"]
    assert (row["Planned"], row["Passed"], row["Error"]) == ("10", "1", "9")
    assert row["Pass rate"] == "10% (1/10)"
    assert arm_rows(ran.result.stderr)["ghost"]["Pass rate"] == "0% (0/10)"
