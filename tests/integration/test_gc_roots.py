"""`armbench gc` collects the unpacked image roots (issue 28): a root no kept run, no run under
way and no recent use needs goes, read-only folders and all; every other root stays."""

from __future__ import annotations

import os
import tarfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from envimages import entry, layer, oci_archive

from armbench.benchmark.records.evidence import collect
from armbench.edge import environment
from armbench.edge.environment import cache_dir, cached_roots, resolve
from armbench.edge.evidence import EvidenceStore
from armbench.ledger.events import PlanFrozen, PlannedEnvironment, PlannedTask, RunEnded, RunStarted
from armbench.ledger.store import EventStore

NOW = datetime(2026, 12, 4, 12, tzinfo=UTC)
DAYS_AGO = (NOW - timedelta(days=2)).timestamp()


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARMBENCH_HOME", str(tmp_path / "armbench-home"))
    environment._resolve_once.cache_clear()


def _image(tmp_path: Path, name: str) -> str:
    """An image unpacked into the cache, last used two days ago; its digest."""
    archive = oci_archive(tmp_path / f"{name}.tar", [layer([
        entry("bin/sh", b"#!", mode=0o755), entry("bin/bash", b"#!", mode=0o755),
        entry("etc/name", name.encode() * 1000), entry("ro", kind=tarfile.DIRTYPE, mode=0o555)])])
    got = resolve("image", f"oci-archive:{archive}", base=tmp_path)
    (got.root / "ro" / "inside").write_text("x")
    os.chmod(got.root / "ro", 0o555)  # a folder with no write bit: gc must make it writable
    os.utime(got.root.parent / "manifest.json", (DAYS_AGO, DAYS_AGO))
    return got.digest


def _run(store: EventStore, run: str, digest: str, *, started: datetime, ended: bool) -> None:
    task = PlannedTask(id="t", title="T", source_hash="h", starting_commit="c" * 40, prompt="p",
                       check_run="true", environment=PlannedEnvironment(
                           kind="image", source=f"oci-archive:{run}.tar", digest=digest))
    plan = PlanFrozen(suite="s", suite_hash="sh", repo="https://x.invalid/r", repetitions=1,
                      parallel=1, timeout_s=60, baseline_team_revision="a" * 40, tasks=[task],
                      arms=[], trials=[])
    events = [RunStarted(run=run, workflow="armbench-benchmark", source_hash="w", timeout_s=60,
                         at=started), plan]
    store.append(run, [*events, *([RunEnded(state="succeeded", at=started)] if ended else [])],
                 expected_version=0)


def _cached() -> set[str]:
    return {r.digest for r in cached_roots()}


def test_gc_removes_the_roots_only_collected_runs_or_nothing_uses(tmp_path: Path) -> None:
    old, kept, running, unused, recent = (_image(tmp_path, n) for n in
                                          ("old", "kept", "running", "unused", "recent"))
    os.utime(cache_dir() / recent.replace(":", "-") / "manifest.json", (NOW.timestamp(),) * 2)
    store = EventStore(tmp_path / "ledger.sqlite")
    _run(store, "r-old", old, started=NOW - timedelta(days=9), ended=True)
    _run(store, "r-kept", kept, started=NOW - timedelta(days=8), ended=True)
    _run(store, "r-running", running, started=NOW - timedelta(days=10), ended=False)
    before = {r.digest: r.path for r in cached_roots()}

    got = collect(store, EvidenceStore(tmp_path / "evidence"), keep=1, older_than=None, now=NOW)

    assert got.kept == ["r-kept", "r-running"]
    assert sorted(got.roots) == sorted([old, unused])
    assert _cached() == {kept, running, recent}
    assert not before[old].exists() and not before[unused].exists()
    assert got.roots_freed >= 2 * (3 * 1000 + 1 + 2 * 2)  # etc/name, ro/inside, bin/sh, bin/bash
    again = resolve("image", f"oci-archive:{tmp_path / 'old.tar'}", base=tmp_path)
    assert again.digest == old and (again.root / "etc/name").read_bytes() == b"old" * 1000


def test_a_root_a_kept_run_uses_stays_however_long_unused(tmp_path: Path) -> None:
    digest = _image(tmp_path, "pinned")
    store = EventStore(tmp_path / "ledger.sqlite")
    _run(store, "r-a", digest, started=NOW - timedelta(days=40), ended=True)
    _run(store, "r-b", digest, started=NOW - timedelta(days=1), ended=True)
    got = collect(store, EvidenceStore(tmp_path / "evidence"), keep=None, older_than="7d", now=NOW)
    assert got.kept == ["r-b"] and got.roots == [] and got.roots_freed == 0
    assert _cached() == {digest}


def test_an_unpack_left_unfinished_goes_after_a_day(tmp_path: Path) -> None:
    cache_dir().mkdir(parents=True)
    stale, fresh = cache_dir() / ".unpack-stale", cache_dir() / ".unpack-fresh"
    for folder in (stale, fresh):
        (folder / "root").mkdir(parents=True)
    (cache_dir() / "not-ours").mkdir()
    os.utime(stale, (DAYS_AGO, DAYS_AGO))
    os.utime(fresh, (NOW.timestamp(), NOW.timestamp()))
    got = collect(EventStore(tmp_path / "ledger.sqlite"), EvidenceStore(tmp_path / "evidence"),
                  keep=0, older_than=None, now=NOW)
    assert got.roots == [""]
    assert not stale.exists() and fresh.exists() and (cache_dir() / "not-ours").exists()
