"""A sandboxed step's disk: its quota and the free-space guard, with the real bwrap and disk.

The free-space tests put the trial's folders on a small tmpfs of their own (as root), so a
filler fills that and not the machine's disk."""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from armbench.edge.diskguard import reserve, written
from armbench.edge.limits import Limits
from armbench.edge.proc import ProcResult, run_step
from armbench.edge.sandbox import Room, Sandbox

MiB = 1024**2


def room_in(folder: Path) -> Room:
    clone = folder / "work" / "clones" / "abc"
    clone.mkdir(parents=True)
    return Room.of(clone).make()


def sandboxed(home: Path, room: Room, command: str, limits: Limits) -> ProcResult:
    launch = Sandbox(home=home, limits=limits).launch(room, network="host")
    return run_step(command, cwd=launch.cwd, env={**os.environ, **launch.env}, sandbox=launch.argv,
                    timeout_s=60, limits=limits)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 320 MiB filesystem of the test's own (its reserve: an eighth, 40 MiB)."""
    where = tmp_path / "small"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=320m", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def test_a_step_writing_past_its_quota_in_many_files_is_stopped_by_its_disk_limit(tmp_path: Path) -> None:
    room = room_in(tmp_path)
    result = sandboxed(tmp_path, room, "for i in $(seq 40); do head -c 16M /dev/zero > f$i; done; sleep 30",
                       Limits(disk=64 * MiB))
    assert (result.cause, result.limit, result.disk) == ("limit", "disk", "guard"), result
    assert result.duration_ms < 20_000  # stopped at its quota, not at the end of its sleep
    assert Limits(disk=64 * MiB).describe("disk") == "disk (64M)"


def test_one_file_written_past_the_quota_stops_its_step(tmp_path: Path) -> None:
    room = room_in(tmp_path)
    command = "for i in $(seq 64); do head -c 4M /dev/zero; sleep 0.02; done > /tmp/big; sleep 30"
    result = sandboxed(tmp_path, room, command, Limits(disk=32 * MiB))
    assert (result.cause, result.limit) == ("limit", "disk"), result
    assert 32 * MiB < (room.tmp / "big").stat().st_size < 128 * MiB


def test_a_sparse_file_past_the_quota_holds_few_blocks_and_is_no_hit(tmp_path: Path) -> None:
    room = room_in(tmp_path)
    result = sandboxed(tmp_path, room, "truncate -s 20G sparse && echo end >> sparse", Limits(disk=32 * MiB))
    assert (result.cause, result.limit) == ("ok", None), result
    assert (room.clone / "sparse").stat().st_size > 20 * 1024**3


def test_deleted_files_held_open_count_against_the_quota(tmp_path: Path) -> None:
    """A file unlinked while its writer holds it has no name to find; the step's open
    descriptors are read instead."""
    room = room_in(tmp_path)
    command = ("for i in $(seq 8); do exec {fd}>held$i; rm held$i; head -c 24M /dev/zero >&$fd; done; "
               "sleep 30")
    result = sandboxed(tmp_path, room, command, Limits(disk=64 * MiB))
    assert (result.cause, result.limit) == ("limit", "disk"), result
    assert list(room.clone.iterdir()) == []


def test_an_honest_step_well_under_its_quota_is_untouched(tmp_path: Path) -> None:
    room = room_in(tmp_path)
    result = sandboxed(tmp_path, room, "for i in $(seq 6); do head -c 16M /dev/zero > f$i; done",
                       Limits(disk=256 * MiB))
    assert (result.cause, result.limit, result.disk) == ("ok", None, "guard"), result


def test_the_filler_is_stopped_below_the_reserve_and_its_neighbour_lane_finishes(small_disk: Path) -> None:
    """Two steps at once on one filesystem: the one filling it (each file far under its quota)
    is stopped once free space falls below the reserve; the other, which wrote a little before
    and writes a little after, is not."""
    assert (reserve(320 * MiB), reserve(4 * MiB), reserve(8 * 1024**3), reserve(100 * 1024**3)) == \
        (40 * MiB, MiB // 2, 8 * 1024**3 // 20, 1024**3)
    filler, honest = room_in(small_disk / "a"), room_in(small_disk / "b")
    results: dict[str, ProcResult] = {}
    filling = ("i=0; while true; do i=$((i+1)); head -c 4M /dev/zero > f$i || exit 7; "
               "sleep 0.05; done")
    slow = "head -c 8M /dev/zero > a; sleep 6; head -c 8M /dev/zero > b"

    def run(name: str, room: Room, command: str) -> None:
        results[name] = sandboxed(small_disk, room, command, Limits())

    threads = [threading.Thread(target=run, args=("honest", honest, slow)),
               threading.Thread(target=run, args=("filler", filler, filling))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (results["filler"].cause, results["filler"].limit) == ("limit", "disk"), results["filler"]
    assert (results["honest"].cause, results["honest"].exit_code) == ("ok", 0), results["honest"]
    assert (honest.clone / "b").stat().st_size == 8 * MiB
    left = os.statvfs(small_disk)
    assert left.f_bavail * left.f_frsize > 8 * MiB  # stopped with room to spare


def test_what_a_step_wrote_counts_only_what_changed_since_it_began(tmp_path: Path) -> None:
    (tmp_path / "old").write_bytes(b"x" * MiB)
    import time

    since = time.time_ns()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new").write_bytes(b"y" * (2 * MiB))
    os.link(tmp_path / "sub" / "new", tmp_path / "twice")  # one file, counted once
    os.symlink("/", tmp_path / "root")  # never followed
    assert 2 * MiB <= written([tmp_path], since) < 3 * MiB
