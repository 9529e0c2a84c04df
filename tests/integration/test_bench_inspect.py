"""bench_inspect still does what it says, run small; no time is asserted.

CI does not install Inspect AI (its own venv takes about half a minute of PyPI downloads), so the
always-run test drives armbench's side of the workload and compiles the Inspect task file without
importing it; the slow one runs both sides small wherever the benchmark's Inspect venv already
exists (after one `python -m benchmarks.bench_inspect`), and is skipped elsewhere.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from benchmarks import bench_inspect


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


def _inspect_venv() -> Path:
    default = Path(bench_inspect.REPO) / ".cache" / "bench-inspect-venv"
    return Path(os.environ.get("ARMBENCH_INSPECT_VENV", default))


@pytest.mark.slow
@pytest.mark.skipif(not (_inspect_venv() / "bin" / "python").exists(),
                    reason="no Inspect venv here; `python -m benchmarks.bench_inspect` makes one")
def test_both_sides_run_small_and_pass() -> None:
    figure = bench_inspect.measure_inspect(rounds=1, trials=4, lanes=2)
    assert figure["ratio"] > 0 and len(figure["ratios"]) == 1  # type: ignore[arg-type]
