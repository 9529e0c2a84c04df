"""A copy of the tiny project to run armbench in, and the ledger as a test reads it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ledger_project import ARMBENCH, HOOK

from armbench.benchmark.records.audit import verify_run
from armbench.benchmark.trials.workfolder import work_folder_name
from armbench.edge.ledgerkey import load_key
from armbench.ledger.events import Event
from armbench.ledger.store import EventStore

__all__ = ["Project", "armbench", "hook_pids", "keyed_store", "kill_at", "log", "raw", "verified"]


class Project:
    """A copy of the template: a checkout tied to the team, its own home, tmp and hooks."""

    def __init__(self, template: Path, where: Path) -> None:
        shutil.copytree(template, where, symlinks=True)
        self.root = where
        self.calc = where / "calc"
        self.hooks = where / "hooks"
        self.tmp = where / "tmp"
        for d in (self.hooks, self.tmp):
            d.mkdir(exist_ok=True)
        (self.hooks / "hook.py").write_text(HOOK)
        self.ledger = self.calc / ".armbench" / "ledger.sqlite"
        self.runs_dir = self.calc / ".armbench" / "runs"
        self.key_file = where / "home" / "ledger.key"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment armbench runs with in these tests."""
        return {**os.environ, "ARMBENCH_HOME": str(self.root / "home"), "TMPDIR": str(self.tmp),
                "LEDGERTEST_HOOKS": str(self.hooks), "ARMBENCH_SANDBOX_WRITE": str(self.hooks),
                "ARMBENCH_LEASE_TTL": "2",
                "ARMBENCH_SNAPSHOT_EVERY": "5", **extra}

    def calls(self, kind: str) -> list[str]:
        """The hook's log lines of one kind (tool, setup, check)."""
        path = self.hooks / "calls"
        lines = path.read_text().splitlines() if path.exists() else []
        return [line.split(" ", 1)[1] for line in lines if line.startswith(kind + " ")]

    def work(self, run: str) -> Path:
        """The run's work folder (clones, prompts, tool copies)."""
        return self.tmp / work_folder_name() / run


def armbench(project: Project, *args: str, check: bool = True, **env: str
             ) -> subprocess.CompletedProcess[str]:
    """Run the installed armbench in the project's checkout."""
    done = subprocess.run([ARMBENCH, *args], cwd=project.calc, env=project.env(**env),
                          capture_output=True, text=True, check=False, timeout=180)
    if check:
        assert done.returncode in (0, 1), f"{args}: {done.returncode}\n{done.stderr}\n{done.stdout}"
    return done


def kill_at(project: Project, suite: str, point: str, *, kill_step: bool = True, **env: str) -> str:
    """Start `armbench run <suite>`, wait for the hook at `point`, SIGKILL armbench (and the step,
    unless `kill_step` is False: then the step goes on running, as a dead driver's tool does)."""
    (project.hooks / "kill-at").write_text(point)
    fired = project.hooks / "fired"
    with (project.root / "run.out").open("w") as out:
        proc = subprocess.Popen([ARMBENCH, "run", suite, "--sandbox"], cwd=project.calc,
                                env=project.env(**env), stdout=out, stderr=out,
                                start_new_session=True)
        deadline = time.monotonic() + 120
        while not fired.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.05)  # the hook wrote `fired`; let it reach its sleep
        proc.kill()
        proc.wait()
    assert fired.exists(), (project.root / "run.out").read_text()
    if kill_step:  # the sleeping hook (in a sandbox it died with armbench already)
        for pid in hook_pids(project):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    store = EventStore(project.ledger)
    try:
        return next(r.stream for r in store.all(topics=["RunStarted"]))
    finally:
        store.close()


def log(project: Project, run: str) -> list[Event]:
    """The run's events."""
    store = EventStore(project.ledger)
    try:
        return [r.event for r in store.read(run)]
    finally:
        store.close()


def raw(project: Project, run: str) -> list[bytes]:
    """The run's stored records, as bytes."""
    store = EventStore(project.ledger)
    try:
        return [state for _, state in store.read_raw(run)]
    finally:
        store.close()


def keyed_store(project: Project) -> EventStore:
    """The project's ledger, opened with the key armbench made in the project's home."""
    return EventStore(project.ledger, key=load_key(project.key_file, create=False))


def verified(project: Project, run: str) -> list[str]:
    """What `armbench verify` finds wrong with the run ([] when nothing)."""
    store = keyed_store(project)
    try:
        return verify_run(store, run, project.runs_dir, key_file=project.key_file)
    finally:
        store.close()


def hook_pids(project: Project) -> list[int]:
    """The host pids of the hook processes still running (as the host sees them: a sandboxed
    step's own pids and session ids are its PID namespace's)."""
    marker = str(project.hooks / "hook.py").encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state not in ("Z", "X"):
            found.append(int(entry.name))
    return found
