"""Transient failures, through the installed `armbench run`: a command tool that exits 75
(`EX_TEMPFAIL`) is the provider's failure, not the agent's, and is tried again from scratch.

- `flaky` fails every other call with 75: its trial passes on its second attempt, in a fresh
  clone, and the record keeps both attempts' usage;
- `down` always exits 75: after three calls (two retries) its trial is an error, marked
  transient, and the table's Error column says so;
- `said` exits 1 but writes `"transient": true` in its usage file, with `retries: 0`: an error
  marked transient after one call;
- `flaky` again, worked only by the reference external driver (`workflow next`, `launch`,
  `report`): the decider retries it the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from e2e.conftest import ARMBENCH, FIX_ADD, Result, World, arm_rows, make_world, visible_task

pytestmark = pytest.mark.e2e
PY_DRIVER = Path(__file__).resolve().parents[2] / "examples" / "drivers" / "driver.py"

USAGE = """echo '{"tokens": {"input": 100, "output": 10}, "cost": {"amount": 0.25, "unit": "USD"}}' \
> "$ARMBENCH_USAGE_FILE"
"""
FLAKY = f"""set -eu
echo "$PWD" >> "$E2E_OUT/flaky"
{USAGE}if [ $(( $(wc -l < "$E2E_OUT/flaky") % 2 )) -eq 1 ]; then
  touch left-by-the-failed-attempt
  echo "529 overloaded, try again later" >&2
  exit 75
fi
test ! -e left-by-the-failed-attempt
{FIX_ADD}"""
DOWN = f"""set -eu
echo call >> "$E2E_OUT/down"
{USAGE}echo "connection reset by peer" >&2
exit 75
"""
SAID = """set -eu
echo call >> "$E2E_OUT/said"
echo '{"transient": true}' > "$ARMBENCH_USAGE_FILE"
exit 1
"""
FAST = {"timeout": "1m", "retry_backoff": "1s"}


@dataclass
class Ran:
    world: World
    results: dict[str, Result]

    def trial(self, suite: str) -> dict:
        run = self.results[suite].data["done"]["run"]
        (trial,) = self.world.record(run)["trials"]
        return trial


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    world = make_world(tmp_path_factory.mktemp("retries"))
    for name, script, trial in (("flaky", FLAKY, FAST), ("down", DOWN, FAST),
                                ("said", SAID, {"timeout": "1m", "retries": 0})):
        world.team.tool(name, script)
        world.team.suite(name, defaults={"tool": name}, trial=trial)
        world.team.task(name, "fix", **visible_task(world.project))
    world.init_and_pull()
    return Ran(world, {name: world.armbench("run", name, "--sandbox")
                       for name in ("flaky", "down", "said")})


def test_a_tool_failing_every_other_call_passes_on_its_second_attempt(ran: Ran) -> None:
    assert ran.results["flaky"].code == 0, ran.results["flaky"]
    trial = ran.trial("flaky")
    assert trial["result"] == "passed"
    assert trial["attempts"] == 2
    assert "transient" not in trial
    assert len(ran.world.out_lines("flaky")) == 2


def test_every_attempt_s_usage_and_cost_is_in_the_record(ran: Ran) -> None:
    trial = ran.trial("flaky")
    assert trial["retried"] == [{"attempt": 1, "cause": "tempfail",
                                 "durationMs": trial["retried"][0]["durationMs"],
                                 "tokens": {"input": 100, "output": 10},
                                 "cost": {"amount": 0.25, "unit": "USD"}, "usageVerified": True}]
    assert trial["cost"] == {"amount": 0.25, "unit": "USD"}
    assert "0.50 USD" in ran.results["flaky"].stderr, "the Cost column counts both attempts"


def test_every_attempt_is_an_event_with_its_cause(ran: Ran) -> None:
    run = ran.results["flaky"].data["done"]["run"]
    log = ran.world.armbench("log", run, "--json")
    assert log.code == 0, log
    kinds = [json.loads(line)["event"] for line in log.stdout.splitlines() if line.strip()]
    failed = [e for e in kinds if e.get("type") == "AttemptFailed"]
    assert [(e["attempt"], e["cause"], e["exit_code"]) for e in failed] == [(1, "tempfail", 75)]
    leases = [e for e in kinds if e.get("type") == "StepLeased" and e["step"].endswith(".prompt")]
    assert [e["attempt"] for e in leases] == [1, 2]
    clones = [e["path"] for e in kinds if e.get("type") == "WorkspacePrepared"
              and e["step"].endswith(".prompt")]
    assert len(clones) == 2 and clones[0] != clones[1], "each attempt runs in a fresh clone"
    # the second attempt found no file the first one left (its script checks): it passed


def test_a_tool_that_always_exits_75_is_an_error_after_three_calls(ran: Ran) -> None:
    result = ran.results["down"]
    assert result.code == 0, result  # a trial's error is a measurement, not the run's failure
    trial = ran.trial("down")
    assert (trial["result"], trial["attempts"], trial["transient"]) == ("error", 3, True)
    assert [r["cause"] for r in trial["retried"]] == ["tempfail", "tempfail"]
    assert len(ran.world.out_lines("down")) == 3
    assert arm_rows(result.stderr)["base"]["Error"] == "1 (1 transient)"


def test_a_usage_file_saying_transient_is_a_transient_error_and_retries_0_never_retries(ran: Ran) -> None:
    trial = ran.trial("said")
    assert (trial["result"], trial["transient"]) == ("error", True)
    assert "attempts" not in trial
    assert len(ran.world.out_lines("said")) == 1
    assert arm_rows(ran.results["said"].stderr)["base"]["Error"] == "1 (1 transient)"


def test_explain_names_each_attempt_and_the_transient_rule(ran: Ran) -> None:
    run = ran.results["down"].data["done"]["run"]
    got = ran.world.armbench("explain", run, "r0.fix.base")
    assert got.code == 0, got
    assert got.stderr.count("AttemptFailed") == 2
    assert "failed for a transient cause, the provider's or the network's (tempfail)" in got.stderr


@pytest.mark.slow
def test_an_external_driver_s_trial_is_retried_the_same_way(ran: Ran) -> None:
    world = ran.world
    started = world.armbench("workflow", "start", "flaky", "--benchmark", "--driver", "external",
                             "--sandbox")
    assert started.code == 0, started
    run = str(started.data["run"]["id"])
    calls = len(world.out_lines("flaky"))
    assert calls % 2 == 0  # so the driver's first call fails and its second passes
    proc = subprocess.run([sys.executable, str(PY_DRIVER), run, "--tools", "flaky"],
                          cwd=world.checkout, env={**world.env, "ARMBENCH": str(ARMBENCH)},
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    (trial,) = world.record(run)["trials"]
    assert (trial["result"], trial["attempts"]) == ("passed", 2)
    assert [r["cause"] for r in trial["retried"]] == ["tempfail"]
    assert len(world.out_lines("flaky")) == calls + 2


def test_export_has_each_trial_s_attempts_and_whether_its_error_was_transient(ran: Ran) -> None:
    import sqlite3

    run = ran.results["down"].data["done"]["run"]
    db = ran.world.root / "down.sqlite"
    got = ran.world.armbench("export", run, "--db", str(db))
    assert got.code == 0, got
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT result, attempts, transient FROM trials").fetchall() == [("error", 3, 1)]
