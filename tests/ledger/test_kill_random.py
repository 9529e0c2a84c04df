"""Crash consistency: `armbench run` (then each `armbench resume`) killed with SIGKILL at 50
seeded random moments, then resumed to the end, leaves every run's record equal to the
uninterrupted run's, apart from timings and ids, with its log intact and verified.

A run is killed, resumed, killed again, ... until a resume outlives its random delay; then the
next run starts, until 50 kills have landed. Delays are drawn from 0..4 s after the process
starts (the `kill` suite takes a few seconds; a resume waits out the 2 s lease first), so the
kills fall before the run starts, during plan, baselines, setup, tools, checks and the report.
`ARMBENCH_MAX_ATTEMPTS` is raised here: a step killed under three drivers in a row would
otherwise settle `attempts_exhausted` (see test_run_faults.py), which is not what this test is
about.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from pathlib import Path

import pytest
from ledger_procs import Project, armbench, log, verified
from ledger_project import ARMBENCH
from test_kill_resume import finished

from armbench.ledger.events import RecordWritten, RunEnded, StepReported
from armbench.ledger.store import EventStore

pytestmark = pytest.mark.slow

SHIM = str(Path(__file__).with_name("shim"))
KILLS = 50
SEED = 20261201
ENV = {"PYTHONPATH": SHIM, "ARMBENCH_MAX_ATTEMPTS": "1000"}


def runs(project: Project) -> list[str]:
    store = EventStore(project.ledger)
    try:
        return [r.stream for r in store.all(topics=["RunStarted"])]
    finally:
        store.close()


def run_for(project: Project, args: list[str], delay: float) -> subprocess.CompletedProcess[str] | None:
    """Run armbench; SIGKILL it after `delay` s unless it ended first (then its result)."""
    proc = subprocess.Popen([ARMBENCH, *args], cwd=project.calc, env=project.env(**ENV),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=delay)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_kills_at_random_moments_never_change_the_record(
        template: Path, tmp_path: Path, uninterrupted: tuple[dict, dict]) -> None:
    rng = random.Random(SEED)
    kills = episodes = 0
    while kills < KILLS:
        project = Project(template, tmp_path / f"p{episodes}")
        episodes += 1
        done = None
        while done is None and kills < KILLS:
            started = runs(project)
            args = ["resume", started[0], "--sandbox"] if started else ["run", "kill", "--sandbox"]
            done = run_for(project, args, rng.uniform(0.0, 4.0))
            kills += done is None
        run = (runs(project) or [""])[0]
        if done is None:  # the 50th kill: finish the run without one
            if not run:
                continue
            done = armbench(project, "resume", run, "--sandbox", **ENV)
        assert done.returncode == 0, done.stderr
        events = log(project, run)
        assert isinstance(events[-1], RunEnded) and events[-1].state == "succeeded"
        assert sum(isinstance(e, RecordWritten) for e in events) == 1
        reported = [e.step for e in events if isinstance(e, StepReported)]
        assert len(reported) == len(set(reported)), "a step was reported twice"
        assert verified(project, run) == []
        assert finished(project, json.loads(done.stdout)["data"]["done"]) == uninterrupted, \
            f"episode {episodes}: the resumed run's record differs from the uninterrupted one"
    assert kills == KILLS


@pytest.fixture(scope="module")
def uninterrupted(template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    project = Project(template, tmp_path_factory.mktemp("uninterrupted") / "p")
    started = time.monotonic()
    done = armbench(project, "run", "kill", "--sandbox", **ENV)
    assert done.returncode == 0, done.stderr
    print(f"uninterrupted run: {time.monotonic() - started:.1f} s")
    return finished(project, json.loads(done.stdout)["data"]["done"])
