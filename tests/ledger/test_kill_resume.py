"""Nothing paid for is lost: a real `armbench run`, killed with SIGKILL at each point of a trial's
life, is finished by `armbench resume` exactly as an uninterrupted run would have finished.

The `kill` suite has 2 tasks x 2 arms in one lane, so its order is fixed: baselines double and
triple, then trials double.good, double.lazy, triple.good, triple.lazy. The hook (see
ledger_project.py) makes the named call sleep; the test then kills armbench and the sleeping step.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from ledger_procs import Project, armbench, hook_pids, kill_at, log, raw, verified

from armbench.benchmark.agents.command import CommandTool
from armbench.benchmark.runtools import RunTools
from armbench.edge.config import Checkout
from armbench.edge.overlay import entered, layers_of
from armbench.edge.sandbox import Sandbox
from armbench.ledger.events import (
    CheckRan,
    Event,
    LeaseExpired,
    LeaseRenewed,
    RecordWritten,
    RunEnded,
    StepLeased,
    StepReported,
    StepSkipped,
    WorkspacePrepared,
)

pytestmark = pytest.mark.slow  # real runs killed and resumed: a minute

SHIM = str(Path(__file__).with_name("shim"))
TRIAL3 = "trials.r0.triple.good"
CALLS = Counter({"fixer double": 1, "lazy double": 1, "fixer triple": 1, "lazy triple": 1})


VOLATILE = {"run", "startedAt", "durationMs", "median_duration_ms", "chain"}


def same_trials(value: Any) -> Any:
    """A record or table without what differs between two runs of the same trials: id, times."""
    if isinstance(value, dict):
        return {k: same_trials(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [same_trials(v) for v in value]
    return value


def finished(project: Project, done: dict[str, Any]) -> tuple[dict, dict]:
    record = json.loads((project.runs_dir / done["run"] / "benchmark.json").read_bytes())
    return same_trials(record), same_trials(done["outputs"]["table"])


@pytest.fixture(scope="module")
def uninterrupted(template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    project = Project(template, tmp_path_factory.mktemp("uninterrupted") / "p")
    done = armbench(project, "run", "kill", "--sandbox")
    assert done.returncode == 0, done.stderr
    assert Counter(project.calls("tool")) == CALLS
    return finished(project, json.loads(done.stdout)["data"]["done"])


def settled(events: list[Event]) -> set[str]:
    return {e.step for e in events if isinstance(e, (StepReported, StepSkipped))}


def check_the_kill_point(point: str, events: list[Event], project: Project) -> None:
    steps = [(type(e).__name__, getattr(e, "step", "")) for e in events
             if not isinstance(e, LeaseRenewed)]
    if point == "setup 5":
        assert steps[-1] == ("StepLeased", f"{TRIAL3}.prompt")
        assert Counter(project.calls("tool")) == Counter({"fixer double": 1, "lazy double": 1})
    elif point == "tool 3":
        assert steps[-1] == ("WorkspacePrepared", f"{TRIAL3}.prompt")
        prepared = [e for e in events if isinstance(e, WorkspacePrepared)][-1]
        into = entered(Path(prepared.path))  # an overlay's holder ended with the run: its layers
        assert Path(prepared.path).is_dir() if into is None else (  # stay, to mount again
            layers_of(into.inner(Path(prepared.path))) / "upper").is_dir()
    elif point == "check 5":
        assert steps[-2:] == [("StepReported", f"{TRIAL3}.prompt"), ("StepLeased", f"{TRIAL3}.check")]
    else:
        assert steps[-1] == ("StepLeased", "report")
        assert not any(isinstance(e, RecordWritten) for e in events)


@pytest.mark.parametrize(("point", "again"), [
    ("setup 5", None),  # after the lease, while its clone is prepared: the tool has not started
    ("tool 3", "fixer triple"),  # during the tool: this trial's tool runs again
    ("check 5", None),  # during the trial's check
    ("report 1", None),  # during the report, after the record was written, before it was logged
])
def test_a_killed_run_is_finished_by_resume_as_if_never_killed(
        project: Project, uninterrupted: tuple[dict, dict], point: str, again: str | None) -> None:
    run = kill_at(project, "kill", point, PYTHONPATH=SHIM)
    before = raw(project, run)
    killed = log(project, run)
    check_the_kill_point(point, killed, project)
    open_lease = next(e for e in reversed(killed) if isinstance(e, StepLeased))
    left_behind = sorted((project.work(run) / "clones").glob("*"))
    if point == "report 1":  # its clones were discarded; an overlay's empty mount point stays
        assert all(p.is_dir() and not any(p.iterdir()) for p in left_behind), (  # until the run's
            "a discarded clone still holds files")  # work folder goes
    else:
        assert left_behind, "the killed trial's clone should be there"
    assert snapshot_at(project, run) > 0, "resume should start from the killed driver's snapshot"

    done = armbench(project, "resume", run, "--sandbox", PYTHONPATH=SHIM)
    assert done.returncode == 0, done.stderr
    after = raw(project, run)
    events = log(project, run)

    assert after[:len(before)] == before, "an event written before the kill changed or was lost"
    assert [(e.step, e.lease) for e in events[len(killed):] if isinstance(e, LeaseExpired)] == [
        (open_lease.step, open_lease.lease)], "the dead driver's lease should expire, and only it"
    reported = Counter(e.step for e in events if isinstance(e, StepReported))
    assert max(reported.values()) == 1, "a step was reported twice"
    assert max(Counter(e.step for e in events if isinstance(e, CheckRan)).values()) == 1
    released = {e.step for e in events[len(killed):] if isinstance(e, StepLeased)}
    assert released.isdisjoint(settled(killed)), "a step settled before the kill ran again"
    assert Counter(project.calls("tool")) == CALLS + Counter([again] if again else [])
    assert isinstance(events[-1], RunEnded) and events[-1].state == "succeeded"
    assert sum(isinstance(e, RecordWritten) for e in events) == 1

    assert not any(p.exists() for p in left_behind), "a clone the killed driver left is still there"
    assert not project.work(run).exists(), "the run's work folder was left behind"
    assert verified(project, run) == []
    assert finished(project, json.loads(done.stdout)["data"]["done"]) == uninterrupted
    assert snapshot_at(project, run) == 0, "an ended run keeps no snapshot"


def snapshot_at(project: Project, run: str) -> int:
    """The version of the run's snapshot in the ledger (ARMBENCH_SNAPSHOT_EVERY=5 here), or 0."""
    with sqlite3.connect(project.ledger) as db:
        row = db.execute("SELECT version FROM snapshots WHERE stream = ?", (run,)).fetchone()
    return row[0] if row else 0


@pytest.mark.parametrize("isolation", ["bubblewrap", "declared"])
def test_a_resumed_driver_never_writes_the_killed_drivers_tool_folder(
        project: Project, monkeypatch, isolation: str) -> None:
    """The killed driver's read-only tool folder is never written again (non-root: EACCES):
    under bubblewrap, where no step can write it, the resumed driver reuses it as it is; under
    declared isolation, where a trial could have written it, it gets its own copy."""
    monkeypatch.setattr(tempfile, "tempdir", str(project.tmp))
    checkout = Checkout(root=project.calc)
    pulled = checkout.read_pull()
    assert pulled is not None
    sandbox = Sandbox(isolation=isolation)  # type: ignore[arg-type]
    first = RunTools(checkout, "rtools", sandbox, lambda: None)["scripted"]
    assert isinstance(first, CommandTool)
    kept = {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in first.tool_dir.rglob("*")}
    again = RunTools(checkout, "rtools", sandbox, lambda: None)["scripted"]
    assert isinstance(again, CommandTool)
    assert (first.tool_dir == again.tool_dir) == (isolation == "bubblewrap")
    assert {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in first.tool_dir.rglob("*")} == kept
    assert not (again.tool_dir / "agent.py").stat().st_mode & 0o222  # read-only
    assert (again.tool_dir / "agent.py").read_bytes() == (first.tool_dir / "agent.py").read_bytes()


def _declare(project: Project) -> None:
    """Run the project's trials without the sandbox (`workflows.isolation: declared`)."""
    path = project.calc / ".armbench" / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config.setdefault("workflows", {})["isolation"] = "declared"
    path.write_text(yaml.safe_dump(config))


def _hook_alive(project: Project, wait_s: float = 0.0) -> bool:
    """The killed driver's tool (its hook, sleeping) still runs, after waiting up to wait_s."""
    deadline = time.monotonic() + wait_s
    while hook_pids(project) and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(hook_pids(project))


def test_resume_stops_the_tool_a_killed_driver_left_running(project: Project) -> None:
    """Without the sandbox, kill -9 of armbench does not kill its tool (it runs in its own
    session): resume does, by the step's marker (the sweep the sandbox falls back to)."""
    _declare(project)
    run = kill_at(project, "kill", "tool 3", kill_step=False, PYTHONPATH=SHIM)
    assert _hook_alive(project), "the killed driver's tool should still be running"

    done = armbench(project, "resume", run, "--sandbox", PYTHONPATH=SHIM)

    assert done.returncode == 0, done.stderr
    assert not _hook_alive(project), "resume left the dead driver's tool running"
    assert "Stopped what the lapsed lease" in done.stderr


def test_in_the_sandbox_a_killed_driver_takes_its_tool_with_it(project: Project) -> None:
    """bubblewrap dies with its parent, and its PID namespace with it: nothing is left to stop."""
    run = kill_at(project, "kill", "tool 3", kill_step=False, PYTHONPATH=SHIM)
    assert not _hook_alive(project, wait_s=5), "the sandboxed tool outlived the killed driver"

    done = armbench(project, "resume", run, "--sandbox", PYTHONPATH=SHIM)

    assert done.returncode == 0, done.stderr
