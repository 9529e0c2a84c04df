"""The benchmarks still measure what they say: run small, each floor computes armbench's answer.

Timing is never asserted here (perf/README.md has the figures); these runs only keep the
benchmark code from rotting between measurements.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from armbench.ledger.store import EventStore
from perf import bench_ledger


@pytest.mark.slow
def test_the_ledger_benchmark_runs_small(tmp_path: Path) -> None:
    """measure_replay stops if the floor's counts differ from the table's or replay finds a
    change; measure_resume stops if a resume leases anything but the lapsed trial's prompt."""
    got = bench_ledger.measure_replay(tmp_path, 250, rounds=1)
    assert got["events"] > 1500
    resumed = bench_ledger.measure_resume(tmp_path, 300, 50, 250, rounds=1)
    assert resumed["few"]["events"] > 300 and resumed["many"]["events"] > 1500


def test_the_floor_folds_the_results_the_table_counts(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    bench_ledger.generate(store, "r1", 250)
    table = {a.arm: {"passed": a.passed, "failed": a.failed, "error": a.error,
                     "not_run": a.not_run}
             for a in bench_ledger.ours_table(store, "r1").table.arms}
    floor = {arm: {r: c[r] for r in ("passed", "failed", "error", "not_run")}
             for arm, c in bench_ledger.floor_fold(store.path, "r1").items()}
    assert floor == table
    assert sum(c["passed"] for c in table.values()) and sum(c["failed"] for c in table.values())


def test_a_race_times_each_side_once_a_round_alternating_which_goes_first() -> None:
    calls: list[str] = []
    bench_ledger._race(lambda: calls.append("floor"), lambda: calls.append("ours"), rounds=3)
    assert calls == ["floor", "ours",  # the warm-up
                     "floor", "ours", "ours", "floor", "floor", "ours"]


def test_the_plain_fold_is_a_real_fold(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    bench_ledger.generate(store, "r1", 100)
    counts = bench_ledger.floor_fold(store.path, "r1")
    assert sorted(counts) == [f"arm{i}" for i in range(5)]
    assert {sum(c.values()) for c in counts.values()} == {20}
    assert all(set(c) <= {"passed", "failed"} and c["passed"] and c["failed"]
               for c in counts.values())


@pytest.mark.slow  # sandboxed steps, timed
def test_the_sandbox_benchmark_runs_both_ways() -> None:
    """measure_step fails loudly when a step did not run; each way gets one figure per round."""
    from perf import bench_sandbox

    got = bench_sandbox.measure_step(rounds=2)
    assert len(got["ratios"]) == 2  # type: ignore[arg-type]


@pytest.mark.e2e  # the installed armbench
def test_the_startup_benchmarks_ledger_is_listed_and_verifies(tmp_path: Path) -> None:
    """commands() stops unless `armbench runs` lists the run with its trials and `armbench
    verify` finds its keyed chain, lease rule and record whole."""
    from perf import bench_startup

    project = bench_startup.make_ledger(tmp_path, trials=20)
    assert set(bench_startup.commands(project, trials=20)) == {"help", "runs", "verify"}
    (project / ".armbench" / "runs" / "r1" / "benchmark.json").write_text("{}")
    with pytest.raises(SystemExit, match="the record.s bytes differ"):
        bench_startup.commands(project, trials=20)


@pytest.mark.slow
def test_the_dashboard_benchmark_runs_small(tmp_path: Path) -> None:
    """measure serves the run's document over real HTTP and stops unless it holds the pairs."""
    from perf import bench_dashboard

    got = bench_dashboard.measure(tmp_path, 250, rounds=1)
    assert got["bytes"] > 10_000 and got["ours_s"] > 0 and got["floor_s"] > 0
