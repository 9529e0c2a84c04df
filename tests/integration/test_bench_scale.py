"""bench_scale runs small against the session's PostgreSQL cluster: its workers report every
trial, its double-lease count sees a double lease, and its per-step figure comes from both
stores. No time is asserted (perf/README.md has the figures)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.ledger.events import RunStarted, StepLeased, StepReported
from armbench.ledger.store import EventStore
from perf import bench_scale

pytestmark = pytest.mark.slow

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_scaling_benchmark_runs_small(postgres_server: str) -> None:
    got = bench_scale.measure_scaling(postgres_server, 16, 0.05, workers=(1, 2))
    assert set(got) == {1, 2}
    assert all(m["double"] == 0 and m["per_s"] > 0 for m in got.values())


def test_the_per_step_figure_runs_on_both_stores(postgres_server: str, tmp_path: Path) -> None:
    got = bench_scale.measure_per_step(postgres_server, tmp_path, 10)
    assert got["sqlite"] > 0 and got["postgresql"] > 0


def test_the_double_lease_count_sees_one(tmp_path: Path) -> None:
    store = EventStore(tmp_path / "l.sqlite")
    store.append("r1", [RunStarted(run="r1", workflow="w", timeout_s=1, at=AT, source_hash="h"),
                        StepLeased(step="a", lease="l1", driver="x", at=AT, expires_at=AT),
                        StepReported(step="a", lease="l1", outcome="succeeded", at=AT),
                        StepLeased(step="b", lease="l2", driver="x", at=AT, expires_at=AT)],
                 expected_version=0)
    assert bench_scale.double_leases(store, "r1") == 0
    twice = [StepLeased(step="b", lease="l3", driver="y", at=AT, expires_at=AT)]
    store.append("r1", twice, expected_version=4)  # the store's rule does not hold this back
    assert bench_scale.double_leases(store, "r1") == 1
