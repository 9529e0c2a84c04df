"""Through the installed command: a subset of a suite (`--task`, `--arm`, `--repetitions`) is
refused before a run exists when it names what the suite lacks, frozen in the plan, written in
the record as `subset`, said in the table's caption, and never paired by the regression gate with
a whole run (nor a whole run with it).

One story in one world (the `gate` suite of `compare.world`: tasks add-one and add-two, arms
steady and shaky), records published to a bare reports repo:
1. a whole run;
2. a subset run (`--task 'add-o*' --arm steady`) with --fail-on-regression: nothing comparable,
   and the gate says the whole run was left out because this run is a subset;
3. a whole run with --fail-on-regression: compared with run 1, never with the newer subset;
4. the same subset again with --fail-on-regression: compared with run 2.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from dataclasses import dataclass

import pytest

from compare.world import Result, World, make_world

pytestmark = pytest.mark.e2e

SUBSET = ["--task", "add-o*", "--arm", "steady"]


@dataclass
class Story:
    world: World
    whole: Result
    subset: Result
    whole_again: Result
    subset_again: Result


def run_id(result: Result) -> str:
    return result.envelope["data"]["done"]["run"]


def events(world: World, topic: str) -> list[dict]:
    ledger = world.checkout / ".armbench" / "ledger.sqlite"
    with sqlite3.connect(ledger) as db:
        rows = db.execute("SELECT state FROM events WHERE topic = ? ORDER BY rowid",
                          (topic,)).fetchall()
    return [json.loads(r[0])["event"] for r in rows]


def runs_started(world: World) -> int:
    ledger = world.checkout / ".armbench" / "ledger.sqlite"
    if not ledger.exists():
        return 0
    with sqlite3.connect(ledger) as db:
        return db.execute("SELECT count(*) FROM events WHERE topic = 'RunStarted'").fetchone()[0]


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Story:
    root = tmp_path_factory.mktemp("subset")
    remote = root / "reports.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    world = make_world(root, reports=remote)
    whole = world.armbench("run", "gate", "--sandbox")
    subset = world.armbench("run", "gate", "--sandbox", *SUBSET, "--fail-on-regression")
    whole_again = world.armbench("run", "gate", "--sandbox", "--fail-on-regression")
    subset_again = world.armbench("run", "gate", "--sandbox", *SUBSET, "--fail-on-regression")
    return Story(world, whole, subset, whole_again, subset_again)


def record_of(story: Story, result: Result) -> dict:
    path = story.world.checkout / ".armbench" / "runs" / run_id(result) / "benchmark.json"
    return json.loads(path.read_text())


def test_a_subset_run_records_its_subset_and_runs_only_it(story: Story) -> None:
    assert story.subset.code == 0, story.subset
    record = record_of(story, story.subset)
    assert record["subset"] == {"tasks": ["add-one"], "arms": ["steady"], "repetitions": 1}
    assert [(t["task"], t["arm"], t["result"]) for t in record["trials"]] == [
        ("add-one", "steady", "passed")]
    assert [t["id"] for t in record["tasks"]] == ["add-one"]
    assert [a["name"] for a in record["arms"]] == ["steady"]
    assert "subset" not in record_of(story, story.whole)


def test_the_caption_says_the_run_was_a_subset(story: Story) -> None:
    caption = story.subset.envelope["data"]["done"]["outputs"]["table"]["caption"]
    assert caption.endswith("This run was a subset of suite gate (task add-one; arm steady; "
                            "1 repetition): the regression gate compares it only with runs of "
                            "the same subset.")
    assert "This run was a subset of suite gate" in story.subset.envelope["data"]["done"][
        "outputs"]["text"]
    whole = story.whole.envelope["data"]["done"]["outputs"]["table"]["caption"]
    assert "subset" not in whole


def test_the_gate_never_compares_a_subset_with_a_whole_run_and_says_why(story: Story) -> None:
    line = story.subset.stderr.rstrip().splitlines()[-1]
    assert line == ("This run was a subset of suite gate (--task, --arm or --repetitions), and no "
                    "earlier succeeded run of the same subset is on armbench-reports (1 whole "
                    "run(s) of the suite are, but a subset is never compared with a whole run): "
                    "--fail-on-regression has nothing to compare with. Run the whole suite for "
                    "the gate, or publish a run of this subset first.")


def test_a_whole_run_is_compared_with_the_whole_run_not_the_newer_subset(story: Story) -> None:
    assert story.whole_again.code == 0, story.whole_again
    assert story.whole_again.stderr.rstrip().endswith(
        f"No arm's pass rate dropped by more than chance against run {run_id(story.whole)}.")


def test_a_subset_is_compared_with_the_same_subset(story: Story) -> None:
    assert story.subset_again.code == 0, story.subset_again
    assert story.subset_again.stderr.rstrip().endswith(
        f"No arm's pass rate dropped by more than chance against run {run_id(story.subset)}.")


def test_an_unknown_task_is_refused_before_a_run_naming_the_tasks(story: Story) -> None:
    before = runs_started(story.world)
    got = story.world.armbench("run", "gate", "--sandbox", "--task", "add-one", "--task", "nope*")
    assert got.code == 2, got
    assert got.envelope == {"error": {"code": "unknown_task", "message": (
        'Suite "gate" has no task matching --task nope*. Its tasks are: add-one, add-two. Give a '
        "task id or a glob of them and start again.")}}
    assert runs_started(story.world) == before


def test_an_unknown_arm_is_refused_before_a_run_naming_the_arms(story: Story) -> None:
    before = runs_started(story.world)
    for verb in (["run", "gate", "--sandbox"], ["workflow", "start", "gate", "--benchmark",
                                               "--driver", "external", "--sandbox"]):
        got = story.world.armbench(*verb, "--arm", "careful")
        assert got.code == 2, got
        assert got.envelope == {"error": {"code": "unknown_arm", "message": (
            'Suite "gate" has no arm careful. Its arms are: steady, shaky. Give an arm\'s name and '
            "start again.")}}
    assert runs_started(story.world) == before


def test_repetitions_beyond_the_suites_are_refused(story: Story) -> None:
    got = story.world.armbench("plan", "gate", "--repetitions", "2")
    assert got.code == 2 and got.envelope["error"]["code"] == "bad_option", got


def test_plan_and_an_external_start_freeze_the_subset(story: Story) -> None:
    plan = story.world.armbench("plan", "gate", "--arm", "shaky")
    assert plan.code == 0, plan
    frozen = plan.envelope["data"]["plan"]["plan"]
    assert frozen["subset"] == {"tasks": ["add-one", "add-two"], "arms": ["shaky"],
                                "repetitions": 1}
    assert [(t["task"], t["arm"]) for t in frozen["trials"]] == [("add-one", "shaky"),
                                                                 ("add-two", "shaky")]
    whole = story.world.armbench("plan", "gate", "--task", "*")
    assert "subset" not in whole.envelope["data"]["plan"]["plan"] or \
        whole.envelope["data"]["plan"]["plan"]["subset"] is None
    started = story.world.armbench("workflow", "start", "gate", "--benchmark", "--driver",
                                   "external", "--sandbox", "--task", "add-two")
    assert started.code == 0, started
    assert events(story.world, "PlanFrozen")[-1]["subset"] == {
        "tasks": ["add-two"], "arms": ["steady", "shaky"], "repetitions": 1}
