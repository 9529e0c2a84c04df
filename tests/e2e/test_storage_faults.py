"""Issue 11, item 1: every storage fault of the ledger is an envelope with its own code, through
the installed command; nothing committed is lost; commands that only read work read-only.

A read-only folder and a full disk are made for real, as root (where chmod means nothing): a
read-only bind mount or a tiny tmpfs in a private mount namespace (`unshare`), so nothing leaks
out of the one armbench process that runs inside it.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from armbench.benchmark.trials.workfolder import work_folder_name
from e2e.conftest import ARMBENCH, FIX_ADD, Result, World, make_world, parse_envelope, visible_task

pytestmark = pytest.mark.e2e

READ = ["runs", "log", "explain", "verify", "export"]
"""Commands that only read the ledger (explain and the rest get their arguments below)."""


@dataclass
class Ran:
    world: World
    run: str
    good: bytes
    """The ledger's bytes after the run, restored before each test."""

    @property
    def ledger(self) -> Path:
        return self.world.ledger

    def args(self, command: str) -> list[str]:
        extra = {"log": [self.run], "explain": [self.run, "r0.t1.base"], "verify": [self.run],
                 "resume": [self.run, "--sandbox"], "replay": [self.run],
                 "export": [self.run, "--db", str(self.world.out / "x.db")], "run": ["s"]}
        return [command, *extra.get(command, [])]

    def work_folders(self) -> list[Path]:
        return list((self.world.root / "tmp" / work_folder_name()).glob("*"))


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    world = make_world(tmp_path_factory.mktemp("storage"))
    world.team.tool("agent", FIX_ADD)
    world.team.suite("s", repetitions=1)
    world.team.task("s", "t1", **visible_task(world.project))
    world.init_and_pull()
    world.configure(sandbox=True)
    done = world.armbench("run", "s")
    assert done.code == 0, done
    with sqlite3.connect(world.ledger) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return Ran(world, done.data["done"]["run"], world.ledger.read_bytes())


@pytest.fixture
def fresh(ran: Ran) -> Ran:
    """The module's world with its ledger as the run left it and no work folder."""
    for extra in ("-wal", "-shm"):
        Path(f"{ran.ledger}{extra}").unlink(missing_ok=True)
    ran.ledger.write_bytes(ran.good)
    shutil.rmtree(ran.world.root / "tmp" / work_folder_name(), ignore_errors=True)
    return ran


def in_namespace(world: World, setup: str, *args: str) -> Result:
    """`armbench <args>` in a private mount namespace after the shell lines `setup`."""
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-euc", f'{setup}\nexec "$@"',
         "sh", str(ARMBENCH), *args],
        cwd=world.checkout, env=world.env, capture_output=True, text=True, timeout=240,
        stdin=subprocess.DEVNULL)
    return Result(done.returncode, parse_envelope(done.stdout), done.stdout, done.stderr)


def recover_hint(ledger: Path) -> str:
    return (f"Keep a copy of it, then restore it from a backup, or salvage what SQLite can still "
            f"read with `sqlite3 {ledger} .recover | sqlite3 "
            f"{ledger.with_suffix('.recovered.sqlite')}` and put the recovered file in its place; "
            "`armbench verify <run>` then checks each run's chain against its record.")


def assert_every_command_says(ran: Ran, code: str, message: str) -> None:
    for command in [*READ, "replay", "run", "resume"]:
        got = ran.world.armbench(*ran.args(command))
        assert got.code == 2, (command, got)
        assert got.envelope == {"error": {"code": code, "message": message}}, (command, got)
        assert "Traceback" not in got.stderr, (command, got)
    assert ran.work_folders() == []


def test_a_truncated_ledger_is_ledger_corrupt_for_every_command(fresh: Ran) -> None:
    fresh.ledger.write_bytes(fresh.good[:8192])
    assert_every_command_says(fresh, "ledger_corrupt", (
        f"The ledger {fresh.ledger} is truncated: it has 8192 bytes and its header says "
        f"{len(fresh.good)}, so events at its end are missing. Nothing was written to it. "
        + recover_hint(fresh.ledger)))
    assert fresh.ledger.read_bytes() == fresh.good[:8192]


def test_a_ledger_with_a_garbage_header_is_ledger_corrupt(fresh: Ran) -> None:
    fresh.ledger.write_bytes(b"not a database!!" + fresh.good[16:])
    assert_every_command_says(fresh, "ledger_corrupt", (
        f"The ledger {fresh.ledger} is not an SQLite database: its first bytes are "
        "b'not a database!!', not SQLite's header. It was overwritten or damaged, and nothing "
        f"was read from it or written to it. {recover_hint(fresh.ledger)}"))


def test_a_ledger_with_corrupted_pages_is_ledger_corrupt(fresh: Ran) -> None:
    page = 4096
    assert len(fresh.good) > 4 * page
    damaged = fresh.good[:page] + b"\xa5" * (len(fresh.good) - 2 * page) + fresh.good[-page:]
    fresh.ledger.write_bytes(damaged)
    assert_every_command_says(fresh, "ledger_corrupt", (
        f"The ledger {fresh.ledger} is damaged: SQLite says 'database disk image is malformed'. "
        f"Nothing was written to it. {recover_hint(fresh.ledger)}"))
    assert fresh.ledger.read_bytes() == damaged


def test_an_empty_ledger_beside_records_is_refused_naming_both(fresh: Ran) -> None:
    fresh.ledger.write_bytes(b"")
    record = fresh.world.record_path(fresh.run)
    assert_every_command_says(fresh, "ledger_empty", (
        f"The ledger {fresh.ledger} is empty (0 bytes), but records of 1 run(s) exist beside it "
        f"({record}): opening it would start a new ledger and orphan them, so nothing was done. "
        f"Restore {fresh.ledger} from a backup; to start a new ledger on purpose, move those "
        "records' folders aside first."))
    assert fresh.ledger.stat().st_size == 0


def read_only(folder: Path) -> str:
    return f"mount --bind {folder} {folder}\nmount -o remount,ro,bind {folder} {folder}"


def test_on_a_read_only_armbench_folder_reading_works_and_writing_is_refused(fresh: Ran) -> None:
    folder = fresh.world.checkout / ".armbench"
    events = len(fresh.world.events())
    listed = in_namespace(fresh.world, read_only(folder), "runs", "--json")
    assert listed.code == 0, listed
    assert [r["run"] for r in map(parse_envelope, listed.stdout.splitlines())] == [fresh.run]
    for command in ("log", "explain", "verify"):  # verify fetches the published copy elsewhere
        got = in_namespace(fresh.world, read_only(folder), *fresh.args(command))
        assert got.code == 0, (command, got)
    message = (
        f"The ledger {fresh.ledger} cannot be written (read-only): the file or its folder "
        f"{folder} is read-only, and this command writes to the ledger. Nothing was written and "
        "nothing is lost. Make them writable (or remount the disk read-write) and run it again; "
        "the commands that only read (runs, log, explain, verify, replay without --write, "
        "export) work as it is.")
    for command in ("run", "resume"):
        got = in_namespace(fresh.world, read_only(folder), *fresh.args(command))
        assert got.code == 2, (command, got)
        assert got.envelope == {"error": {"code": "ledger_read_only", "message": message}}
    assert len(fresh.world.events()) == events
    assert fresh.work_folders() == []


def full_disk(folder: Path, size: str, filler_kib: int | None) -> str:
    """A tmpfs of `size` over `folder` holding a copy of it, filled (to the brim, or with
    `filler_kib` KiB)."""
    fill = (f"dd if=/dev/zero of={folder}/filler bs=1k count={filler_kib} 2>/dev/null"
            if filler_kib else f"dd if=/dev/zero of={folder}/filler bs=4k 2>/dev/null || true")
    return (f"saved=$(mktemp -d /tmp/armbench-e2e-XXXXXX)\ncp -a {folder}/. $saved/\n"
            f"mount -t tmpfs -o size={size} tmpfs {folder}\ncp -a $saved/. {folder}/\n"
            f"rm -rf $saved\n{fill}")


def test_a_full_disk_under_the_ledger_refuses_the_run_and_keeps_reading(fresh: Ran) -> None:
    folder = fresh.world.checkout / ".armbench"
    setup = full_disk(folder, "4m", None)
    got = in_namespace(fresh.world, setup, *fresh.args("run"))
    assert got.code == 2, got
    assert got.envelope == {"error": {"code": "disk_full", "message": (
        f"The file system holding the ledger {folder} is full (no space left; armbench needs at "
        "least 1 MiB to write). Nothing was written and nothing already committed is lost. Free "
        f"space there (`df -h {folder}` shows it), then run the command again; `armbench resume "
        "<run>` finishes a run that was under way.")}}
    assert fresh.work_folders() == []
    listed = in_namespace(fresh.world, setup, "runs", "--json")
    assert listed.code == 0, listed
    assert [r["run"] for r in map(parse_envelope, listed.stdout.splitlines())] == [fresh.run]


def test_a_full_work_folder_refuses_the_run_before_it_starts(fresh: Ran) -> None:
    tmp = fresh.world.root / "tmp"
    got = in_namespace(fresh.world, full_disk(tmp, "2m", 1536), *fresh.args("run"))
    assert got.code == 2, got
    assert got.error["code"] == "disk_full"
    assert got.error["message"].startswith(
        f"The file system holding the work folder (TMPDIR) {tmp} is full (only ")
    assert len(fresh.world.events("RunStarted")) == 1
