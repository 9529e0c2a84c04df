"""The benchmarks still measure what they say: run small, each floor computes armbench's answer.

Timing is never asserted here (benchmarks/README.md has the figures); these runs only keep the
benchmark code from rotting between measurements.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks import bench_ledger
from ledger.store import EventStore


def test_the_ledger_benchmark_runs_small_and_its_floor_agrees(tmp_path: Path) -> None:
    """measure_replay itself checks the floor's counts equal the table and replay finds no change."""
    got = bench_ledger.measure_replay(tmp_path, 250, rounds=1)
    assert got["events"] > 1500 and got["ratio"] > 0 and got["memory_ratio"] > 0
    resumed = bench_ledger.measure_resume(tmp_path, 300, 50, 250, rounds=1)
    assert resumed["few"]["events"] > 300 and resumed["many"]["events"] > 1500
    assert resumed["independence"]["ratio"] > 0


def test_the_plain_fold_is_a_real_fold(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    bench_ledger.generate(store, "r1", 100)
    counts = bench_ledger.floor_fold(store.path, "r1")
    assert sorted(counts) == [f"arm{i}" for i in range(5)]
    assert {sum(c.values()) for c in counts.values()} == {20}
    assert all(set(c) <= {"passed", "failed"} and c["passed"] and c["failed"]
               for c in counts.values())


def test_the_sandbox_benchmark_runs_both_ways() -> None:
    """measure_step fails loudly when a step did not run; each way gets one figure per round."""
    from benchmarks import bench_sandbox

    got = bench_sandbox.measure_step(rounds=2)
    assert len(got["ratios"]) == 2  # type: ignore[arg-type]
    assert got["sandbox_ms"] > 0 and got["plain_ms"] > 0
