"""Every run can be finished, and every stop still reports: the real `armbench run` under the
faults CI and machines bring (SIGTERM, SIGHUP, Ctrl-C during setup, a full disk, a runs folder
that cannot be written, a clone gone before its check).

The `kill` suite (2 tasks x 2 arms, one lane) runs baselines double and triple (setup calls 1
and 2), then trials double.good (setup 3, tool 1), double.lazy, triple.good, triple.lazy. A
`kill-at` hook makes the named call sleep 120 s; each test stops armbench there. A private
mount namespace (`unshare --mount`) holds a tmpfs or a read-only bind mount, so nothing leaks.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
from ledger_procs import Project, armbench, hook_pids, kill_at, log
from ledger_project import ARMBENCH

from armbench.ledger.events import CheckRan, RunCancelRequested, RunEnded, StepReported, StepSkipped

pytestmark = pytest.mark.slow  # real runs stopped by signals and faults: half a minute

SHIM = str(Path(__file__).with_name("shim"))


def in_namespace(project: Project, script: str, *args: str) -> list[str]:
    """armbench `args`, run after `script` in a private mount namespace."""
    return ["unshare", "--mount", "--propagation", "private", "sh", "-ec",
            f'{script}\nexec "$0" "$@"', ARMBENCH, *args]


def start(project: Project, argv: list[str], **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, cwd=project.calc, env=project.env(PYTHONPATH=SHIM, **env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def signalled_at(project: Project, point: str, *signals: signal.Signals
                 ) -> tuple[int, str, str]:
    """Run the kill suite, wait for the hook at `point` to sleep, send `signals` to armbench
    (0.3 s apart), and wait for it to end (a step left running would hold it for 120 s)."""
    (project.hooks / "kill-at").write_text(point)
    proc = start(project, [ARMBENCH, "run", "kill", "--sandbox"])
    deadline = time.monotonic() + 120
    while not (project.hooks / "fired").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    time.sleep(0.2)
    for sig in signals:
        proc.send_signal(sig)
        time.sleep(0.3)
    stdout, stderr = proc.communicate(timeout=60)
    return proc.returncode, stdout, stderr


def run_id(project: Project) -> str:
    return next(p.name for p in project.runs_dir.iterdir()) if project.runs_dir.exists() else ""


def ended(project: Project, run: str) -> RunEnded:
    last = log(project, run)[-1]
    assert isinstance(last, RunEnded), f"the run did not end: its last event is {last!r}"
    return last


@pytest.mark.parametrize(("point", "signals"), [
    ("tool 1", (signal.SIGTERM,)),  # how CI cancels a job, during the agent's work
    ("tool 1", (signal.SIGHUP,)),  # a closed terminal
    ("setup 3", (signal.SIGTERM,)),  # during a long setup: stopped at once
    ("setup 3", (signal.SIGINT, signal.SIGINT)),  # Ctrl-C twice during setup
])
def test_a_stop_signal_cancels_the_run_and_still_reports(
        project: Project, point: str, signals: tuple[signal.Signals, ...]) -> None:
    code, stdout, stderr = signalled_at(project, point, *signals)

    assert code == 1, stderr
    done = json.loads(stdout)["data"]["done"]
    assert done["state"] == "cancelled"
    assert "| Arm |" in stderr or "| arm |" in stderr.lower(), stderr
    record = json.loads((project.runs_dir / done["run"] / "benchmark.json").read_bytes())
    assert record["outcome"] == "cancelled"
    assert ended(project, done["run"]).state == "cancelled"
    assert hook_pids(project) == [], "the step's processes outlived the cancelled run"
    assert any(isinstance(e, RunCancelRequested) for e in log(project, done["run"]))


def test_a_clone_gone_before_its_check_settles_on_resume(project: Project) -> None:
    """Killed during triple.good's check, then its clone removed: resume settles the check as
    could not run (workspace_lost), never crashes, and the run ends."""
    run = kill_at(project, "kill", "check 5", PYTHONPATH=SHIM)
    shutil.rmtree(project.work(run) / "clones")

    done = armbench(project, "resume", run, "--sandbox", PYTHONPATH=SHIM)

    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    checks = [e for e in log(project, run) if isinstance(e, CheckRan)
              and e.step == "trials.r0.triple.good.check"]
    assert [(c.result, c.cause) for c in checks] == [("could_not_run", "workspace_lost")]
    assert ended(project, run).state == "succeeded"
    record = json.loads((project.runs_dir / run / "benchmark.json").read_bytes())
    by_arm = {(t["task"], t["arm"]): t["result"] for t in record["trials"]}
    assert by_arm == {("double", "good"): "passed", ("double", "lazy"): "failed",
                      ("triple", "good"): "error", ("triple", "lazy"): "failed"}


def test_a_step_whose_driver_keeps_dying_settles_instead_of_looping(project: Project) -> None:
    """With one attempt allowed, the step a killed driver held is settled, not handed out
    again, and the run still ends."""
    run = kill_at(project, "kill", "tool 3", PYTHONPATH=SHIM)

    done = armbench(project, "resume", run, "--sandbox", PYTHONPATH=SHIM, ARMBENCH_MAX_ATTEMPTS="1")

    assert done.returncode == 0, done.stderr
    skipped = [e for e in log(project, run) if isinstance(e, StepSkipped)
               and e.reason == "attempts_exhausted"]
    assert [e.step for e in skipped] == ["trials.r0.triple.good.prompt"]
    assert project.calls("tool").count("fixer triple") == 1, "the exhausted step ran again"
    assert ended(project, run).state == "succeeded"


def test_a_runs_folder_that_cannot_be_written_fails_the_run_with_its_table(
        project: Project) -> None:
    project.runs_dir.mkdir(parents=True, exist_ok=True)
    ro = f"mount --bind {project.runs_dir} {project.runs_dir}\n" \
         f"mount -o remount,ro,bind {project.runs_dir}"
    proc = start(project, in_namespace(project, ro, "run", "kill", "--sandbox"))
    stdout, stderr = proc.communicate(timeout=180)

    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    error = json.loads(stdout)["error"]
    assert error["code"] == "record_unwritable"
    assert str(project.runs_dir) in error["message"] and "replay" in error["message"]
    assert "double" in stderr and "|" in stderr, "the table should be on stderr"
    store_runs = [e for e in _all_runs(project)]
    assert [ended(project, r).state for r in store_runs] == ["failed"]


def fill(folder: Path) -> None:
    """Write zeros into `folder` until its file system is full."""
    with (folder / "zeros").open("ab", buffering=0) as f:
        for size in (65536, 4096, 1):
            try:
                while True:
                    f.write(bytes(size))
            except OSError:
                pass


def test_a_full_disk_during_a_run_ends_it_failed_and_reported(project: Project) -> None:
    """The run's work folder (TMPDIR) is a 4 MB tmpfs in armbench's own mount namespace; the
    test fills it (through /proc/<pid>/root) while the first trial's setup runs, so armbench's
    own next write there (the tool's prompt file) finds the disk full."""
    (project.hooks / "kill-at").write_text("setup 3")
    mount = f"mount -t tmpfs -o size=4m tmpfs {project.tmp}"
    proc = start(project, in_namespace(project, mount, "run", "kill", "--sandbox"))
    deadline = time.monotonic() + 120
    while not (project.hooks / "fired").exists():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    fill(Path(f"/proc/{proc.pid}/root") / project.tmp.relative_to("/"))
    (project.hooks / "go").write_text("")
    stdout, stderr = proc.communicate(timeout=120)

    run = run_id(project)
    reports = [(e.step, e.outcome, e.cause, e.message) for e in log(project, run)
               if isinstance(e, StepReported)]
    assert proc.returncode == 1, (stderr, reports)
    assert "Traceback" not in stderr, stderr
    done = json.loads(stdout)["data"]["done"]
    assert done["state"] == "failed"
    events = log(project, run)
    assert any(isinstance(e, RunCancelRequested) and e.fault == "disk_full" for e in events)
    assert ("trials.r0.double.good.prompt", "error", "disk_full") in [r[:3] for r in reports]
    assert ended(project, run).state == "failed"
    record = json.loads((project.runs_dir / run / "benchmark.json").read_bytes())
    assert record["outcome"] == "failed"
    assert "| good |" in stderr, "the table should be on stderr"


def _all_runs(project: Project) -> list[str]:
    from armbench.ledger.store import EventStore
    store = EventStore(project.ledger)
    try:
        return [r.stream for r in store.all(topics=["RunStarted"])]
    finally:
        store.close()
