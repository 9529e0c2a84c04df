"""`find_checkout` finds the same work tree as libgit2's discovery (pygit2), which it replaces
on the start path of every command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest

from armbench.edge.config import find_checkout
from armbench.ledger.errors import Refusal


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _pygit2_root(start: Path) -> Path | None:
    found = pygit2.discover_repository(str(start))
    if found is None:
        return None
    workdir = pygit2.Repository(found).workdir
    return None if workdir is None else Path(workdir).resolve()


@pytest.fixture()
def layouts(tmp_path: Path) -> dict[str, Path]:
    main = tmp_path / "main"
    main.mkdir()
    _git("init", "-q", cwd=main)
    _git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "0",
         cwd=main)
    (main / "src" / "deep").mkdir(parents=True)
    _git("worktree", "add", "-q", str(tmp_path / "linked"), cwd=main)
    (tmp_path / "linked" / "sub").mkdir()
    nested = main / "vendor" / "inner"
    nested.mkdir(parents=True)
    _git("init", "-q", cwd=nested)
    return {"root": main, "subfolder": main / "src" / "deep", "linked worktree": tmp_path / "linked",
            "inside a linked worktree": tmp_path / "linked" / "sub", "nested repo": nested}


def test_it_finds_the_work_tree_libgit2_finds(layouts: dict[str, Path]) -> None:
    for name, start in layouts.items():
        assert find_checkout(start).root == _pygit2_root(start), name


def test_a_folder_outside_any_repo_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert _pygit2_root(outside) is None
    with pytest.raises(Refusal) as got:
        find_checkout(outside)
    assert got.value.code == "not_a_checkout" and "not inside a git checkout" in got.value.message


def test_a_bare_repository_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    _git("init", "-q", "--bare", str(bare), cwd=tmp_path)
    assert pygit2.Repository(str(bare)).workdir is None
    with pytest.raises(Refusal) as got:
        find_checkout(bare)
    assert got.value.code == "not_a_checkout" and "bare repository" in got.value.message
