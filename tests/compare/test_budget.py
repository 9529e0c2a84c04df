"""Through the installed command: a run's budget (`budget: {cost: {amount, unit}}`) stops
leasing new trials once the cost the trials stated reaches it; the rest are not_run with cause
budget, the report still runs, the run succeeds (exit 0) and the caption says so, counting the
trials that stated no cost (never counted as zero).

The `gate` suite of `compare.world`, in one lane with a budget of 0.015 USD: its tool states
0.01 USD a trial, except `shaky`, which states no cost at all here. In plan order (steady, shaky,
steady, shaky) the first three run (0.02 USD stated, one trial stating none) and the fourth is
not run. Each trial may also cost 0.05 USD and use 1000 tokens (`trial.budget`), which the
command tool cannot be held to: its trials list both unenforced, and plan prints the worst case.
"""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml

from compare.world import AGENT, Result, World, git, make_world

pytestmark = pytest.mark.e2e

SILENT = AGENT.replace("sed -i", 'if [ "$ARMBENCH_MODEL" = "m-shaky" ]; then '
                       "sed -i 's/return a - b/return a + b/' calc.py; exit 0; fi\nsed -i", 1)


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Result]:
    root = tmp_path_factory.mktemp("budget")
    remote = root / "reports.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    world = make_world(root, reports=remote)
    work = root / "team-work"
    suite_file = work / "benchmarks" / "gate" / "suite.yaml"
    suite = yaml.safe_load(suite_file.read_text())
    suite.update(parallel=1, budget={"cost": {"amount": 0.015, "unit": "USD"}})
    suite["trial"]["budget"] = {"tokens": 1000, "cost": {"amount": 0.05, "unit": "USD"}}
    suite_file.write_text(yaml.safe_dump(suite, sort_keys=False))
    (work / "tools" / "agent" / "agent.sh").write_text(SILENT)
    git(work, "commit", "-qam", "a budget")
    git(work, "push", "-q", str(root / "team.git"), "HEAD:main")
    assert world.armbench("pull").code == 0
    return world, world.armbench("run", "gate", "--sandbox")


def test_the_budget_stops_leasing_the_rest_is_not_run_and_the_run_succeeds(
        budgeted: tuple[World, Result]) -> None:
    _, got = budgeted
    assert got.code == 0, got
    done = got.envelope["data"]["done"]
    assert done["state"] == "succeeded"
    run = done["run"]
    record = budgeted[0].checkout / ".armbench" / "runs" / run / "benchmark.json"
    trials = json.loads(record.read_text())["trials"]
    assert [(t["arm"], t["result"], t.get("cost")) for t in trials] == [
        ("steady", "passed", {"amount": 0.01, "unit": "USD"}), ("shaky", "passed", None),
        ("steady", "passed", {"amount": 0.01, "unit": "USD"}), ("shaky", "not_run", None)]


def test_the_caption_says_the_budget_stopped_it_and_how_many_stated_no_cost(
        budgeted: tuple[World, Result]) -> None:
    caption = budgeted[1].envelope["data"]["done"]["outputs"]["table"]["caption"]
    assert caption.endswith(
        " The run's budget of 0.015 USD was reached: 1 trial(s) were not run (budget); 1 trial(s) "
        "that ran stated no cost in USD, so what they spent is not counted.")


def test_explain_gives_the_budget_as_the_not_run_trials_cause(
        budgeted: tuple[World, Result]) -> None:
    world, got = budgeted
    run = got.envelope["data"]["done"]["run"]
    got = world.armbench("explain", run, "r0.add-two.shaky")
    assert got.code == 0, got
    explained = json.dumps(got.envelope)
    assert "The cost the run's trials stated had reached the run's budget (0.015 USD) before the "\
        "trial was leased." in explained
    assert "reason=budget detail=0.015 USD" in explained


def test_a_command_tool_lists_the_trial_budget_unenforced(budgeted: tuple[World, Result]) -> None:
    world, got = budgeted
    record = world.checkout / ".armbench" / "runs" / got.envelope["data"]["done"]["run"] / \
        "benchmark.json"
    ran = [t for t in json.loads(record.read_text())["trials"] if t["result"] != "not_run"]
    assert [t["unenforced"] for t in ran] == [["budget_tokens", "budget_cost"]] * 3


def test_plan_prints_the_worst_case_trials_times_the_trial_cap(
        budgeted: tuple[World, Result]) -> None:
    got = budgeted[0].armbench("plan", "gate")
    assert got.code == 0, got
    assert got.envelope["data"]["plan"]["worst_case"] == {"amount": 0.2, "unit": "USD"}
    assert ("At most 0.2 USD for 4 trials (0.05 USD each, trial.budget.cost), where every tool "
            "holds the cap; a tool that lists it unenforced can spend more.") in got.stderr
    one = budgeted[0].armbench("plan", "gate", "--arm", "steady")
    assert one.envelope["data"]["plan"]["worst_case"] == {"amount": 0.1, "unit": "USD"}
