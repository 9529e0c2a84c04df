"""Criterion 2 (and parts of 11 and 14): 2 tasks x 2 arms x 2 repetitions, through `armbench run`.

The scripted tool leaves the first trial's clone as it found it (so that trial fails) and fixes
the bug in every later one. The run's record, its printed table and jq over the record agree.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from armbench.benchmark.trials.workfolder import work_folder_name
from e2e.conftest import FIX_ADD, Result, World, arm_rows, hidden_task, make_world, visible_task

pytestmark = pytest.mark.e2e

AGENT = r"""
set -eu
prompt=$(cat)
n=$(wc -l < "$E2E_OUT/invocations" 2>/dev/null || echo 0)
echo "$n $ARMBENCH_MODEL $(printf '%s' "$prompt" | head -n1 | cut -d: -f1)" >> "$E2E_OUT/invocations"
if [ "$n" -gt 0 ]; then
""" + FIX_ADD + """fi
"""

JQ = ('. as $b | $b.arms[] | .name as $arm | [$b.trials[] | select(.arm == $arm)] | '
      '(map(select(.result == "passed")) | length) as $passed | '
      '"\\($arm) \\($passed / length * 100 | round)% (\\($passed)/\\(length))"')
PROMPT_MARK = "add() in calc.py subtracts"


@dataclass
class Ran:
    world: World
    result: Result
    record: dict


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    world = make_world(tmp_path_factory.mktemp("trials"))
    team = world.team
    team.tool("agent", AGENT)
    team.suite("pair", defaults={"tool": "agent", "model": "m-one"},
               arms=[{"name": "one"}, {"name": "two", "model": "m-two"}], repetitions=2)
    team.task("pair", "a-visible", **visible_task(world.project))
    team.task("pair", "b-hidden", **hidden_task(world.project))
    world.init_and_pull()
    result = world.armbench("run", "pair", "--sandbox")
    assert result.envelope is not None, result
    run = result.data["done"]["run"]
    return Ran(world, result, world.record(run))


def test_the_run_succeeds_with_exit_0_although_its_first_trial_failed(ran: Ran) -> None:
    assert ran.result.code == 0, ran.result
    assert ran.result.data["done"]["state"] == "succeeded"
    assert ran.record["outcome"] == "succeeded"
    first = min(ran.record["trials"], key=lambda t: t["order"])
    assert first["result"] == "failed"


def test_eight_trials_are_listed_with_task_arm_repetition_and_order(ran: Ran) -> None:
    trials = ran.record["trials"]
    assert len(trials) == 8
    assert sorted(t["order"] for t in trials) == list(range(8))
    assert {(t["task"], t["arm"], t["repetition"]) for t in trials} == {
        (task, arm, rep) for task in ("a-visible", "b-hidden") for arm in ("one", "two")
        for rep in (0, 1)}


def test_the_other_seven_trials_ran_and_passed(ran: Ran) -> None:
    by_order = sorted(ran.record["trials"], key=lambda t: t["order"])
    assert [t["result"] for t in by_order] == ["failed"] + ["passed"] * 7
    assert len(ran.world.out_lines("invocations")) == 8


def test_repetition_two_runs_the_arms_in_the_reverse_order_of_repetition_one(ran: Ran) -> None:
    def arms_of(rep: int, task: str) -> list[str]:
        ts = sorted((t for t in ran.record["trials"] if t["repetition"] == rep and t["task"] == task),
                    key=lambda t: t["order"])
        return [t["arm"] for t in ts]

    for task in ("a-visible", "b-hidden"):
        assert arms_of(0, task) == ["one", "two"]
        assert arms_of(1, task) == ["two", "one"]
    # and the tool was really launched in that order, with each arm's model
    models = [line.split()[1] for line in ran.world.out_lines("invocations")]
    assert models == ["m-one", "m-two", "m-one", "m-two", "m-two", "m-one", "m-two", "m-one"]


def test_the_printed_table_counts_every_trial(ran: Ran) -> None:
    rows = arm_rows(ran.result.stderr)
    assert rows["one"]["Planned"] == "4" and rows["one"]["Passed"] == "3"
    assert rows["one"]["Failed"] == "1" and rows["one"]["Pass rate"] == "75% (3/4)"
    assert rows["two"]["Passed"] == "4" and rows["two"]["Pass rate"] == "100% (4/4)"
    assert ran.result.data["done"]["outputs"]["text"] in ran.result.stderr


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed on this machine")
def test_jq_over_the_record_reproduces_the_printed_pass_rates_without_the_cache(ran: Ran) -> None:
    shutil.rmtree(ran.world.checkout / ".armbench" / "cache")
    path = ran.world.record_path(ran.record["run"])
    out = subprocess.run(["jq", "-r", JQ, str(path)], capture_output=True, text=True, check=True)
    printed = {arm: row["Pass rate"] for arm, row in arm_rows(ran.result.stderr).items()}
    assert out.stdout.splitlines() == [f"{arm} {rate}" for arm, rate in printed.items()]


def test_the_record_holds_no_prompt_no_check_command_and_no_local_path(ran: Ran) -> None:
    text = ran.world.record_path(ran.record["run"]).read_text()
    assert PROMPT_MARK not in text
    assert "unittest" not in text
    assert str(ran.world.root) not in text
    assert str(Path(ran.world.root).resolve()) not in text
    assert "/tmp/" not in text


def test_the_run_leaves_no_clone_behind(ran: Ran) -> None:
    assert not (ran.world.root / "tmp" / work_folder_name() / ran.record["run"]).exists()
