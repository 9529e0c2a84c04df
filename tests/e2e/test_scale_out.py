"""Many `armbench work` processes, one run, one PostgreSQL ledger (a private cluster).

Four workers of two lanes finish a 200-trial run: no step is held by two live leases, every
trial is reported exactly once, the report step runs once and the run ends once, and the
record's trials are the ones a single driver on SQLite gives for the same suite. A worker killed
with kill -9 loses its trials to the others once its leases lapse; two runs are worked at once;
a wrong URL or password is an error envelope without the password or a traceback. Every other
command (judge calibrate, the dashboard, the external drivers' verbs, log, explain, replay,
verify, export) works on the same ledger.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from armbench.ledger.store import EventStore
from e2e.conftest import ARMBENCH, FIX_ADD, TIDY_SCORER, World, hidden_task, make_world, visible_task

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PY_DRIVER = Path(__file__).resolve().parents[2] / "examples" / "drivers" / "driver.py"

AGENT = """
cat > /dev/null
sleep "${E2E_AGENT_SLEEP:-0}"
"""


def _events(url: str, run: str) -> list[dict[str, Any]]:
    store = EventStore(url)
    try:
        return [json.loads(raw)["event"] for _, raw in store.read_raw(run)]
    finally:
        store.close()


def lease_problems(events: list[dict[str, Any]]) -> list[str]:
    """Each place a step was leased while a live lease held it, or reported by a lease that did
    not hold it (the log's own order decides)."""
    held: dict[str, tuple[str, str]] = {}
    problems = []
    for e in events:
        kind, step = e["type"], e.get("step")
        if kind == "StepLeased":
            if step in held:
                problems.append(f"{step}: leased as {e['lease']} while {held[step][0]} held it")
            held[step] = (e["lease"], e["expires_at"])
        elif kind == "LeaseRenewed" and held.get(step, ("",))[0] == e["lease"]:
            held[step] = (e["lease"], e["expires_at"])
        elif kind == "LeaseExpired":
            lease, expires = held.pop(step, ("", ""))
            if lease != e["lease"] or datetime.fromisoformat(e["at"]) < datetime.fromisoformat(
                    expires):
                problems.append(f"{step}: lease {e['lease']} expired early or was not held")
        elif kind == "StepReported":
            if held.pop(step, ("",))[0] != e["lease"]:
                problems.append(f"{step}: reported under {e['lease']}, which did not hold it")
        elif kind == "StepSkipped":
            held.pop(step, None)
    return problems


def held_to_the_rules(events: list[dict[str, Any]], trials: int) -> None:
    assert lease_problems(events) == []
    reported = Counter(e["step"] for e in events if e["type"] == "StepReported")
    prompts = [s for s in reported if s.startswith("trials.") and ".agent" in s] or [
        s for s in reported if s.startswith("trials.")]
    assert all(n == 1 for n in reported.values()), reported.most_common(3)
    assert reported["report"] == 1
    assert sum(e["type"] == "RunEnded" for e in events) == 1
    assert len(prompts) >= trials


def trials_of(record: dict[str, Any]) -> list[tuple[str, str, int, str]]:
    """The record's trials without timings or lanes."""
    return sorted((t["task"], t["arm"], t["repetition"], t.get("result") or "")
                  for t in record["trials"])


def start_workers(world: World, run: str, n: int, lanes: int,
                  env: dict[str, str]) -> list[subprocess.Popen[str]]:
    return [subprocess.Popen([str(ARMBENCH), "work", run, "--sandbox", "--lanes", str(lanes)],
                             cwd=world.checkout, env={**world.env, **env}, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             stdin=subprocess.DEVNULL, start_new_session=True)
            for _ in range(n)]


def finished(workers: list[subprocess.Popen[str]], timeout: float = 900) -> list[dict[str, Any]]:
    got = []
    for w in workers:
        out, err = w.communicate(timeout=timeout)
        assert w.returncode == 0, (out, err[-3000:])
        got.append(json.loads(out.strip().splitlines()[-1])["data"]["worked"])
    return got


def suite_world(root: Path, *, repetitions: int, parallel: int, tasks: int = 1) -> World:
    """Two arms, `tasks` tasks, `repetitions` each: 2 x tasks x repetitions trials."""
    world = make_world(root)
    world.team.tool("agent", AGENT)
    world.team.suite("wide", arms=[{"name": "one"}, {"name": "two", "model": "m-two"}],
                     repetitions=repetitions, parallel=parallel)
    for i in range(tasks):
        world.team.task("wide", f"hidden{i}", **hidden_task(world.project))
    world.init_and_pull()
    return world


def started(world: World, env: dict[str, str], suite: str = "wide") -> str:
    got = world.armbench("run", suite, "--sandbox", "--driver", "none", env=env)
    assert got.code == 0, got
    return got.data["started"]["run"]


def test_four_workers_finish_a_200_trial_run_as_one_driver_would(
        tmp_path: Path, postgres_url: str) -> None:
    world = suite_world(tmp_path / "w", repetitions=10, parallel=8, tasks=10)
    pg = {"ARMBENCH_LEDGER_URL": postgres_url}
    run = started(world, pg)
    workers = finished(start_workers(world, run, 4, 2, pg))
    assert {w["state"] for w in workers} == {"succeeded"}
    assert len({w["driver"] for w in workers}) == 4
    events = _events(postgres_url, run)
    held_to_the_rules(events, 200)
    drivers = {e["driver"] for e in events if e["type"] == "StepLeased"}
    assert len(drivers) >= 2  # the work was shared
    assert world.armbench("verify", run, env=pg).code == 0
    single = world.armbench("run", "wide", "--sandbox")  # the same suite, one driver, SQLite
    assert single.code == 0, single
    assert trials_of(world.record(run)) == trials_of(world.record(single.data["done"]["run"]))


def test_a_worker_killed_with_kill_9_loses_its_trials_to_the_others(
        tmp_path: Path, postgres_url: str) -> None:
    world = suite_world(tmp_path / "w", repetitions=8, parallel=4)
    env = {"ARMBENCH_LEDGER_URL": postgres_url, "ARMBENCH_LEASE_TTL": "3",
           "E2E_AGENT_SLEEP": "1"}
    run = started(world, env)
    doomed, *rest = start_workers(world, run, 2, 2, env)
    deadline = time.monotonic() + 120
    held: list[str] = []
    while time.monotonic() < deadline:  # kill it while it holds a trial's prompt (a 1 s tool)
        events = _events(postgres_url, run)  # a host step (the baselines) is reported at once
        reported = {e["lease"] for e in events if e["type"] == "StepReported"}
        held = [e["lease"] for e in events if e["type"] == "StepLeased"
                and e["driver"].endswith(f"-{doomed.pid}") and e["step"].endswith(".prompt")
                and e["lease"] not in reported]
        if held:
            break
        time.sleep(0.1)
    assert held, "the worker to kill never held a trial's prompt"
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.communicate()
    assert finished(rest)[0]["state"] == "succeeded"
    events = _events(postgres_url, run)
    held_to_the_rules(events, 16)
    expired = {e["lease"] for e in events if e["type"] == "LeaseExpired"}
    assert held[0] in expired, "the killed worker's lease never lapsed"
    assert world.armbench("verify", run, env=env).code == 0


def test_two_runs_are_worked_at_once_on_one_ledger(tmp_path: Path, postgres_url: str) -> None:
    world = suite_world(tmp_path / "w", repetitions=3, parallel=2)
    pg = {"ARMBENCH_LEDGER_URL": postgres_url}
    runs = [started(world, pg), started(world, pg)]
    workers = [w for run in runs for w in start_workers(world, run, 2, 1, pg)]
    assert {w["state"] for w in finished(workers)} == {"succeeded"}
    for run in runs:
        held_to_the_rules(_events(postgres_url, run), 6)
    listed = world.armbench("runs", "--json", env=pg)
    assert {json.loads(line)["run"] for line in listed.stdout.splitlines()} == set(runs)
    for args in (("log", runs[0]), ("explain", runs[0], "r0.hidden0.one"),
                 ("replay", runs[1]), ("verify", runs[1]),
                 ("export", runs[0], "--db", str(tmp_path / "x.db"))):
        got = world.armbench(*args, env=pg)
        assert got.code == 0, (args, got)


JUDGE = """
case "$(cat)" in
  *"## Rubric (tidy)"*) echo '{"label": "tidy", "reason": "scripted"}' ;;
  *) echo '{"label": "correct", "reason": "scripted"}' ;;
esac
"""


def judged(world: World, url: str, run: str) -> list[str]:
    """The run's trial results, once every judge step gave its label (none failed)."""
    events = _events(url, run)
    assert [e["cause"] for e in events if e["type"] == "JudgeFailed"] == []
    labels = [(e["scorer"], e["label"]) for e in events if e["type"] == "LabelRecorded"]
    assert labels == [("tidy", "tidy")] * 2, labels
    trials = world.record(run)["trials"]
    assert all([(lb["scorer"], lb["label"]) for lb in t["labels"]] == [("tidy", "tidy")]
               for t in trials), trials
    return sorted(t["result"] for t in trials)


def test_every_command_works_on_a_postgresql_ledger(tmp_path: Path, postgres_url: str) -> None:
    """A judged run (each trial labelled by the team's scorer) worked by two workers (each
    showing the run's progress), then judge calibrate, the dashboard's export, verify and
    replay; and a run of external drivers, its judge steps labelling as the workers' did."""
    world = make_world(tmp_path / "w")
    world.team.tool("agent", AGENT + FIX_ADD)
    world.team.tool("judge", JUDGE)
    world.team.write("scorers/tidy.md", TIDY_SCORER)
    world.team.suite("checked", repetitions=2, parallel=2, timeout="5m", judge={"tool": "judge"},
                     scorers=["tidy"])
    world.team.task("checked", "a-visible", **visible_task(world.project))
    world.init_and_pull()
    pg = {"ARMBENCH_LEDGER_URL": postgres_url}
    run = started(world, pg, "checked")
    workers = start_workers(world, run, 2, 2, pg)
    for w in workers:
        out, err = w.communicate(timeout=600)
        assert w.returncode == 0, (out, err[-3000:])
        assert f"Run {run}: 2/2 trials done" in err, err  # the whole run's progress
    held_to_the_rules(_events(postgres_url, run), 2)
    assert judged(world, postgres_url, run) == ["passed", "passed"]
    assert not world.ledger.exists()  # nothing went to the SQLite file
    calibrated = world.armbench("judge", "calibrate", run, "--sandbox", env=pg)
    assert calibrated.code == 0, calibrated
    assert calibrated.data["calibration"]["calibration"]["matrix"] == [[2, 0], [0, 0]]
    exported = world.armbench("dashboard", "--export", str(tmp_path / "site"), env=pg)
    assert exported.code == 0, exported
    assert run in "".join(p.read_text() for p in (tmp_path / "site").rglob("*.js"))
    for args in (("verify", run), ("replay", run)):
        got = world.armbench(*args, env=pg)
        assert got.code == 0, (args, got)

    external = world.armbench("workflow", "start", "checked", "--benchmark", "--driver",
                              "external", "--sandbox", env=pg)
    assert external.code == 0, external
    other = external.data["run"]["id"]
    driver = subprocess.run([sys.executable, str(PY_DRIVER), other, "--tools", "agent,judge"],
                            cwd=world.checkout, env={**world.env, **pg, "ARMBENCH": str(ARMBENCH)},
                            capture_output=True, text=True, timeout=600, check=False)
    assert driver.returncode == 0, driver.stderr[-3000:]
    assert json.loads(driver.stdout.strip().splitlines()[-1])["state"] == "succeeded"
    held_to_the_rules(_events(postgres_url, other), 2)
    assert judged(world, postgres_url, other) == ["passed", "passed"]  # the judge ran there too
    assert world.armbench("verify", other, env=pg).code == 0
    assert not world.ledger.exists()


@pytest.mark.parametrize("how", ["unreachable", "wrong password"])
def test_a_wrong_url_is_a_clear_error_without_the_password(
        tmp_path: Path, postgres_server: str, how: str) -> None:
    world = make_world(tmp_path / "w")
    world.init_and_pull()
    secret = "s3cret-Passw0rd"
    url = ("postgresql://armbench:s3cret-Passw0rd@127.0.0.1:1/postgres" if how == "unreachable"
           else postgres_server.replace("postgresql://postgres:", "postgresql://armbench:")
           .replace(postgres_server.split(":")[2].split("@")[0], secret))
    got = world.armbench("runs", env={"ARMBENCH_LEDGER_URL": url})
    assert got.code == 2, got
    assert got.error["code"] == "ledger_unreachable"
    assert "postgresql://armbench@127.0.0.1:" in got.error["message"]
    assert secret not in got.stdout + got.stderr
    assert "Traceback" not in got.stderr


def test_an_unknown_driver_is_refused_before_anything_starts(tmp_path: Path) -> None:
    world = make_world(tmp_path / "w")
    world.init_and_pull()
    got = world.armbench("run", "wide", "--sandbox", "--driver", "remote")
    assert got.code == 2 and got.error["code"] == "bad_option", got
    assert "expected local" in got.error["message"] and not world.ledger.exists()
