"""The kept index's reader (`edge/keptindex.py`) against indexes git itself wrote, and the
link-safe lstat `work_diff` looks at the clone with (`edge/tree.lstats`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from armbench.edge.keptindex import read_kept, stamp_of
from armbench.edge.tree import lstats

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True)


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(repo))
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "mod.py").write_text("x = 1\n" * 10)
    (repo / "data.bin").write_bytes(b"d" * 3000)
    (repo / os.fsdecode(b"caf\xe9")).write_bytes(b"")
    os.symlink("pkg/mod.py", repo / "link")
    git(repo, "add", "-A")
    return repo


def test_it_watches_the_empty_and_the_large_entries_and_sums_the_rest(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    kept = read_kept((repo / ".git" / "index").read_bytes(), 1000)
    assert kept is not None
    assert [path for path, _ in kept.watched] == ["caf\udce9", "data.bin", "pkg/__init__.py"]
    assert kept.small_bytes == len("pkg/mod.py") + 60  # the link's target, then mod.py
    with lstats(repo) as lstat:
        for path, stamp in kept.watched:
            info = lstat(path)
            assert info is not None and stamp_of(info) == stamp  # as git stamped it


def test_an_index_it_does_not_take_is_none(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    git(repo, "update-index", "--skip-worktree", "pkg/mod.py")  # an extended flag
    assert read_kept((repo / ".git" / "index").read_bytes(), 1000) is None
    git(repo, "update-index", "--no-skip-worktree", "pkg/mod.py")
    assert read_kept((repo / ".git" / "index").read_bytes(), 1000) is not None
    git(repo, "update-index", "--index-version", "4")
    assert read_kept((repo / ".git" / "index").read_bytes(), 1000) is None
    assert read_kept(b"DIRC", 1000) is None
    data = bytearray((tmp_path / "repo" / ".git" / "index").read_bytes())
    data[4:8] = (2).to_bytes(4, "big")
    assert read_kept(bytes(data[:40]), 1000) is None  # cut short


def test_lstats_follows_no_link_even_on_the_way(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "real" / "f").write_text("x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s")
    os.symlink(tmp_path / "outside", root / "planted")
    with lstats(root) as lstat:
        assert lstat("real/f") is not None and lstat("real/f").st_size == 1
        assert lstat("planted") is not None  # the link itself
        assert lstat("planted/secret") is None
        assert lstat("real/../planted/secret") is None and lstat("missing/f") is None


def test_a_name_of_4095_bytes_or_more_is_read_to_its_nul(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    long = "/".join(["d" * 200] * 25)  # 5024 bytes: the entry's length field says 0xFFF
    git(repo, "update-index", "--add", "--cacheinfo",
        f"100644,e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,{long}")
    kept = read_kept((repo / ".git" / "index").read_bytes(), 1000)
    assert kept is not None
    assert [path for path, _ in kept.watched] == ["caf\udce9", "data.bin", long, "pkg/__init__.py"]
    assert kept.small_bytes == len("pkg/mod.py") + 60


def test_lstats_keeps_few_folders_open_and_raises_what_is_not_a_missing_file(tmp_path: Path) -> None:
    root = tmp_path / "root"
    for n in range(300):
        (root / f"d{n}").mkdir(parents=True)
        (root / f"d{n}" / "f").write_text("x")
    before = len(os.listdir("/proc/self/fd"))
    with lstats(root) as lstat:
        assert all(lstat(f"d{n}/f") is not None for n in range(300))
        assert len(os.listdir("/proc/self/fd")) - before <= 70
        with pytest.raises(OSError):
            lstat("x" * 300)  # a name too long: not "missing"
    assert len(os.listdir("/proc/self/fd")) == before
