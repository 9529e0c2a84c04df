"""bench_harvest still measures what it says: run small (2 planted fixes, 1 decoy, 8 commits) through
the installed `armbench`; `_check` stops it unless exactly the planted fixes were written. No time
is asserted (perf/README.md has the figures)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from perf import bench_harvest

pytestmark = pytest.mark.slow


def test_the_harvest_benchmark_runs_small(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(bench_harvest, "FIXES", 2)
    monkeypatch.setattr(bench_harvest, "DECOYS", 1)
    monkeypatch.setattr(bench_harvest, "COMMITS", 8)
    monkeypatch.setenv("ARMBENCH_BENCH_DIR", str(tmp_path))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    got = bench_harvest.measure(1)
    assert got["candidates"] == 3 and got["floor_s"] > 0 and got["ours_s"] > 0


def test_a_wrong_answer_stops_the_benchmark(tmp_path: Path) -> None:
    planted = bench_harvest.build_history(tmp_path / "calc")
    (tmp_path / "out").mkdir()
    with pytest.raises(SystemExit, match="expected the 20 planted fixes exactly"):
        bench_harvest._check(tmp_path / "out", planted, {"candidates": []})
