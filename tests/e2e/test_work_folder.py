"""A run's work folder is the member's own: `<TMPDIR>/armbench-work-<uid>`, made owner-only. A
folder there another user made (root, a CI job that ran armbench before), a link, or one others
can write in is refused before any run exists, with the path, the owner and the fix; nothing is
left `running`, and a folder of the old shared name (`armbench-work`, root's, mode 755) is
nobody's business any more."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from armbench.benchmark.trials.workfolder import work_folder_name
from e2e.conftest import FIX_ADD, World, make_world, visible_task

pytestmark = pytest.mark.e2e

NOBODY = 65534


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = make_world(tmp_path_factory.mktemp("workfolder"))
    world.team.tool("agent", FIX_ADD)
    world.team.suite("calc", repetitions=1)
    world.team.task("calc", "visible", **visible_task(world.project))
    world.init_and_pull()
    return world


@pytest.fixture
def base(world: World) -> Iterator[Path]:
    folder = Path(world.env["TMPDIR"]) / work_folder_name()
    shutil.rmtree(folder, ignore_errors=True)
    if folder.is_symlink():
        folder.unlink()
    yield folder
    if folder.is_symlink():
        folder.unlink()
    shutil.rmtree(folder, ignore_errors=True)


def _runs(world: World) -> list[str]:
    """`armbench runs`' table, one line a run."""
    listed = world.armbench("runs")
    assert listed.code == 0, listed
    return [line for line in listed.stdout.splitlines() if line.startswith("| r")]


def test_the_work_folder_is_made_owner_only_and_a_shared_old_one_is_not_in_the_way(
        world: World, base: Path) -> None:
    old = Path(world.env["TMPDIR"]) / "armbench-work"  # what an earlier armbench (or root) left
    old.mkdir(exist_ok=True, mode=0o755)
    os.chown(old, NOBODY, NOBODY)
    ran = world.armbench("run", "calc", "--sandbox")
    assert ran.code == 0, ran
    assert base.is_dir() and stat.S_IMODE(base.lstat().st_mode) == 0o700
    assert base.lstat().st_uid == os.getuid()
    assert list(base.iterdir()) == []  # the finished run's folder is gone
    assert list(old.iterdir()) == []


@pytest.mark.parametrize("found", ["another user's", "a link", "writable by others", "a file"])
def test_a_work_folder_that_is_not_the_members_own_is_refused_before_any_run(
        world: World, base: Path, found: str, tmp_path: Path) -> None:
    before = _runs(world)
    if found == "another user's":
        base.mkdir(mode=0o700)
        os.chown(base, NOBODY, NOBODY)
        said = f"a folder owned by nobody (uid {NOBODY})"
    elif found == "a link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        base.symlink_to(tmp_path / "elsewhere")
        said = "a link"
    elif found == "writable by others":
        base.mkdir()
        base.chmod(0o777)
        said = "a folder others can write in (mode 777)"
    else:
        base.write_text("")
        said = "a file that is not a folder"
    refused = world.armbench("run", "calc", "--sandbox")
    assert refused.code == 2, refused
    error = refused.envelope["error"]
    assert error["code"] == "work_folder_unusable"
    assert f"goes in {base}, which must be a folder of this user's own" in error["message"]
    assert f"found {said}. No run was started. Set TMPDIR to a folder of your own" in error["message"]
    assert "Traceback" not in refused.stderr
    assert _runs(world) == before  # nothing started, nothing left running
    if found == "a link":
        assert list((tmp_path / "elsewhere").iterdir()) == []
