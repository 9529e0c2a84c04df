"""edge.prepared on real folders: the copy keeps links as links and modes, shows the manifest it
was copied from, shares nothing writable, and special files refuse the tree."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from edge.prepared import SpecialFileInTree, copy_method, copy_tree, manifest


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


def test_copy_method_says_what_cp_reflink_auto_does_here(tmp_path: Path) -> None:
    reflinks = subprocess.run(["cp", "--reflink=always", __file__, str(tmp_path / "x")],
                              capture_output=True).returncode == 0
    assert copy_method(tmp_path) == ("reflink" if reflinks else "copy")
