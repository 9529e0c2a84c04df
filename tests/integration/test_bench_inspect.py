"""bench_inspect still does what it says, run small; no time is asserted.

One test drives armbench's side of the workload small; another runs Inspect's side small in the
benchmark's own Inspect venv (made from PyPI on first use, about half a minute, in CI too: a test
never skips for want of a component); the module itself never imports Inspect.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perf import bench_inspect


@pytest.mark.e2e
def test_armbench_side_of_the_inspect_workload_runs_and_passes(tmp_path: Path) -> None:
    workload = bench_inspect.prepare(tmp_path, trials=4, lanes=2)
    side = bench_inspect.run_armbench(workload)
    assert (side.passed, side.trials) == (4, 4)
    assert side.wall_ms > side.span_ms > 0


def test_the_inspect_task_file_compiles_without_inspect_here() -> None:
    source = bench_inspect.TASK_FILE.read_text()
    compile(source, str(bench_inspect.TASK_FILE), "exec")
    assert "from inspect_ai import" in source


def test_armbench_never_imports_inspect() -> None:
    """Only the Inspect venv's python runs the task file; the benchmark module stays clear of it."""
    assert "inspect_ai" not in sys.modules and "inspect_task" not in bench_inspect.__dict__


@pytest.mark.slow
def test_inspects_side_of_the_workload_runs_and_passes(tmp_path: Path) -> None:
    """Inspect's side too, so its task file cannot rot: its venv is made from PyPI on first use."""
    python = bench_inspect.inspect_python()
    workload = bench_inspect.prepare(tmp_path, trials=4, lanes=2)
    side = bench_inspect.run_inspect(workload, python, "t")
    assert (side.passed, side.trials) == (4, 4)
    assert side.version == bench_inspect.INSPECT_SPEC.partition("==")[2]
