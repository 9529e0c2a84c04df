"""Each entry point that reads and projects a run pauses the cycle collector once, around all of
it (`ledger/collector.py`): with the collector set to run at almost every allocation, none starts
while the body of the report step, `project_run`, `replay_run`, `verify_run` or `export_run`
runs on a real finished run. The projection itself (`project`) does not pause it."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import CodeType
from typing import Any

import pytest
from ledger_procs import keyed_store

from armbench.benchmark.host import BenchmarkHost
from armbench.benchmark.records.audit import replay_run, verify_run
from armbench.benchmark.records.export import export_run
from armbench.benchmark.records.reporting import project, project_run, report_events
from armbench.ledger.events import StepSpec

pytestmark = pytest.mark.slow  # each test reads a real finished run (4 s to make)


def collections_inside(entry: Callable[..., Any], call: Callable[[], Any]) -> int:
    """How many cycle collections start while `entry`'s own body is on the stack during `call`,
    with the collector at threshold 1 (the pause's own way in and out is not the body)."""
    body: CodeType = getattr(entry, "__wrapped__", entry).__code__
    inside = 0

    def count(phase: str, info: dict[str, int]) -> None:
        nonlocal inside
        frame = sys._getframe(1)
        while frame is not None and phase == "start":
            if frame.f_code is body:
                inside += 1
                return
            frame = frame.f_back

    threshold = gc.get_threshold()
    gc.callbacks.append(count)
    gc.set_threshold(1)
    try:
        call()
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(count)
    return inside


def clock() -> datetime:
    return datetime(2026, 12, 24, tzinfo=UTC)


def test_the_read_paths_entry_points_run_no_collection(audited, tmp_path: Path) -> None:
    project_dir, run = audited
    store = keyed_store(project_dir)
    try:
        events = report_events(store, run)
        assert collections_inside(project, lambda: project(run, events, None)) > 0, \
            "the projection alone pauses nothing (and the count sees collections)"
        entry_points: dict[str, tuple[Callable[..., Any], Callable[[], Any]]] = {
            "project_run": (project_run, lambda: project_run(store, run, None)),
            "replay_run": (replay_run, lambda: replay_run(store, run, project_dir.runs_dir, write=False,
                                                          now=clock)),
            "verify_run": (verify_run, lambda: verify_run(store, run, project_dir.runs_dir)),
            "export_run": (export_run, lambda: export_run(store, run, tmp_path / "export.db")),
        }
        got = {name: collections_inside(entry, call) for name, (entry, call) in entry_points.items()}
        assert got == dict.fromkeys(entry_points, 0)
    finally:
        store.close()


def test_the_report_step_runs_no_collection(audited, monkeypatch: pytest.MonkeyPatch) -> None:
    from armbench.cli.compose import compose

    project_dir, run = audited
    for name, value in project_dir.env().items():
        if os.environ.get(name) != value:
            monkeypatch.setenv(name, value)
    app = compose(project_dir.calc)
    try:
        report = StepSpec(id="report", kind="command", command="armbench report")
        got: list[Any] = []
        assert collections_inside(BenchmarkHost._report, lambda: got.append(
            app.host.execute(run, report, workspace=None, run_state="succeeded"))) == 0
        assert got[0].report.outcome == "succeeded", got[0].report
    finally:
        app.store.close()
