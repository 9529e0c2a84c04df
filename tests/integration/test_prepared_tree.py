"""edge.prepared on real folders: the copy keeps links as links and modes, shows the manifest it
was copied from, shares nothing writable, and special files refuse the tree; clearing the cache
between runs leaves the trees a process holds."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from armbench.edge.prepared import SpecialFileInTree, clear_cache, copy_method, copy_tree, locked, manifest


def _tree(root: Path, outside: Path) -> Path:
    tree = root / "tree"
    (tree / "node_modules" / "dep").mkdir(parents=True)
    (tree / "node_modules" / "dep" / "index.js").write_text("built\n")
    (tree / "run.sh").write_text("#!/bin/sh\n")
    (tree / "run.sh").chmod(0o755)
    outside.mkdir()
    os.mkfifo(outside / "pipe")  # followed, the link would reach a FIFO
    (tree / "node_modules" / "out").symlink_to(outside)
    (tree / ".git").mkdir()
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/x\n")
    return tree


def test_a_copy_keeps_links_and_modes_and_shows_the_same_manifest(tmp_path: Path) -> None:
    tree = _tree(tmp_path, tmp_path / "outside")
    kept = manifest(tree)
    copy = tmp_path / "copy"
    copy_tree(tree, copy)
    assert (copy / "node_modules" / "out").is_symlink()
    assert os.readlink(copy / "node_modules" / "out") == str(tmp_path / "outside")
    assert os.stat(copy / "run.sh").st_mode & 0o777 == 0o755
    assert manifest(copy) == kept
    assert os.stat(copy / "node_modules/dep/index.js").st_ino != os.stat(
        tree / "node_modules/dep/index.js").st_ino
    (copy / "node_modules" / "dep" / "index.js").write_text("changed\n")
    assert (tree / "node_modules" / "dep" / "index.js").read_text() == "built\n"


def test_the_manifest_sees_a_change_but_not_git(tmp_path: Path) -> None:
    tree = _tree(tmp_path, tmp_path / "outside")
    kept = manifest(tree)
    (tree / ".git" / "HEAD").write_text("ref: refs/heads/y\n")
    assert manifest(tree) == kept
    with (tree / "node_modules" / "dep" / "index.js").open("a") as file:
        file.write("damaged\n")
    assert manifest(tree) != kept


def test_a_fifo_refuses_the_tree(tmp_path: Path) -> None:
    tree = _tree(tmp_path, tmp_path / "outside")
    os.mkfifo(tree / "node_modules" / "pipe")
    with pytest.raises(SpecialFileInTree, match="a FIFO at 'node_modules/pipe'"):
        manifest(tree)


def test_a_socket_refuses_the_tree(tmp_path: Path) -> None:
    tree = _tree(tmp_path, tmp_path / "outside")
    with socket.socket(socket.AF_UNIX) as bound:
        bound.bind(str(tree / "sock"))
        with pytest.raises(SpecialFileInTree, match="a socket at 'sock'"):
            manifest(tree)


def test_clearing_the_cache_leaves_a_tree_in_use_and_removes_the_rest(tmp_path: Path) -> None:
    cache = tmp_path / "prepared"
    for name in ("a" * 24, "b" * 24, "." + "c" * 24 + "-x1"):  # the last one a build cut short
        (cache / name / "tree").mkdir(parents=True)
        (cache / name / "tree" / "file").write_bytes(b"12345")
    with locked(cache / f"{'b' * 24}.lock", shared=True):  # a run copying from it
        assert clear_cache(cache) == (1, 10, 1)
    assert sorted(p.name for p in cache.iterdir() if p.is_dir()) == ["b" * 24]
    assert clear_cache(cache) == (1, 5, 0)
    assert clear_cache(tmp_path / "none") == (0, 0, 0)


def test_a_tree_on_another_file_system_is_copied_into_the_cache(tmp_path: Path) -> None:
    """The run's work folder ($TMPDIR, often a tmpfs) and the cache (under the home) may lie on
    different file systems, where a rename fails: the tree is copied, and shows its manifest."""
    from armbench.benchmark.trials.prepared import _move
    from armbench.edge.tree import remove_tree

    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on another file system than the test's folder")
    other = Path(tempfile.mkdtemp(dir=shm, prefix="armbench-test-"))
    try:
        clone = _tree(other, other / "outside")
        before = manifest(clone)
        _move(clone, tmp_path / "tree")
        assert not clone.exists()
        assert manifest(tmp_path / "tree") == before
        assert (tmp_path / "tree" / "node_modules" / "out").is_symlink()
    finally:
        remove_tree(other)


def test_copy_method_says_what_cp_reflink_auto_does_here(tmp_path: Path) -> None:
    reflinks = subprocess.run(["cp", "--reflink=always", __file__, str(tmp_path / "x")],
                              capture_output=True).returncode == 0
    assert copy_method(tmp_path) == ("reflink" if reflinks else "copy")
