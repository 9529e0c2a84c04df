"""The change a check grades (`edge.change`), read from a real clone by real git and written onto
a second clone the tool never touched: tracked edits, removals, new files, links and modes go
across; ignored files (by the starting tree's rules, whatever the tool's `.gitignore` says),
setup's paths and what git would not keep do not."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from armbench.edge.change import Change, ChangeUnreadable, apply_change, ignored_by, read_change
from armbench.edge.gitclone import keep_index, make_isolated_clone
from tests.gitrun import git


@pytest.fixture
def start(tmp_path: Path) -> tuple[Path, str]:
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    (source / "src").mkdir()
    (source / "src" / "pricing.py").write_text("def total(x):\n    return x\n")
    (source / "src" / "old.py").write_text("OLD = 1\n")
    (source / "run.sh").write_text("echo run\n")
    (source / ".gitignore").write_text("__pycache__/\n.venv/\n*.log\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "start")
    return source / ".git", git(source, "rev-parse", "HEAD")


def _clone(gitdir: Path, base: str, dest: Path, kept: Path) -> Path:
    make_isolated_clone(gitdir, base, dest)
    keep_index(dest, kept)
    return dest


def test_a_change_is_carried_onto_an_untouched_tree_and_nothing_else(tmp_path: Path,
                                                                     start: tuple[Path, str]) -> None:
    gitdir, base = start
    kept = tmp_path / "kept-index"
    clone = _clone(gitdir, base, tmp_path / "clone", kept)
    fresh = _clone(gitdir, base, tmp_path / "fresh", tmp_path / "unused")
    (clone / "src" / "pricing.py").write_text("def total(x):\n    return x * 2\n")
    (clone / "src" / "old.py").unlink()
    (clone / "src" / "new.py").write_text("NEW = 2\n")
    (clone / "run.sh").chmod(0o755)
    os.symlink("pricing.py", clone / "src" / "alias.py")
    (clone / "src" / "__pycache__").mkdir()
    (clone / "src" / "__pycache__" / "pricing.cpython-311.pyc").write_bytes(b"planted")
    (clone / "debug.log").write_text("ignored\n")
    # the tool un-ignores what the starting tree ignores: the starting tree's rules decide
    (clone / ".gitignore").write_text("!__pycache__/\n!*.log\n")
    (clone / "src" / "__pycache__" / "other.pyc").write_bytes(b"unignored by the tool")
    os.mkfifo(clone / "pipe")

    read = read_change(clone, base, source=gitdir, index=kept)
    change = apply_change(ignored_by(fresh, read), clone, fresh)

    assert set(change.written) == {"src/pricing.py", "src/new.py", "run.sh", "src/alias.py",
                                   ".gitignore"}
    assert change.removed == ("src/old.py",)
    assert {"debug.log", "src/__pycache__/pricing.cpython-311.pyc"} <= set(change.left_out)
    assert (fresh / "src" / "pricing.py").read_text().endswith("x * 2\n")
    assert not (fresh / "src" / "old.py").exists()
    assert os.readlink(fresh / "src" / "alias.py") == "pricing.py"
    assert os.stat(fresh / "run.sh").st_mode & stat.S_IXUSR
    assert not (fresh / "src" / "__pycache__").exists()
    assert not (fresh / "debug.log").exists() and not (fresh / "pipe").exists()
    assert git(fresh, "status", "--porcelain", "--untracked-files=all", "--ignored=no") != ""


def test_setup_paths_are_never_graded_and_a_folder_becomes_a_file(tmp_path: Path,
                                                                  start: tuple[Path, str]) -> None:
    gitdir, base = start
    kept = tmp_path / "kept-index"
    clone = _clone(gitdir, base, tmp_path / "clone", kept)
    fresh = _clone(gitdir, base, tmp_path / "fresh", tmp_path / "unused")
    (clone / "generated.py").write_text("tool's edit of setup's file\n")  # setup made it
    (clone / "run.sh").write_text("tool's edit of a file setup changed\n")
    for tree in (clone, fresh):
        (tree / ".venv" / "lib").mkdir(parents=True)
        (tree / ".venv" / "lib" / "evil.pth").write_text("")
    (clone / ".venv" / "lib" / "evil.pth").write_text("import os; os._exit(0)\n")
    for path in (clone / "src" / "old.py", clone / "src" / "pricing.py"):
        path.unlink()
    (clone / "src").rmdir()
    (clone / "src").write_text("a file where the folder was\n")

    change = ignored_by(fresh, read_change(clone, base, source=gitdir, index=kept,
                                           settled=["generated.py", "run.sh"]))
    change = apply_change(change, clone, fresh)

    assert set(change.removed) == {"src/old.py", "src/pricing.py"}
    assert change.written == ("src",)
    assert (fresh / "src").read_text() == "a file where the folder was\n"
    assert (fresh / ".venv" / "lib" / "evil.pth").read_text() == ""
    assert (fresh / "run.sh").read_text() == "echo run\n"
    assert not (fresh / "generated.py").exists()


def test_a_link_on_the_way_is_never_followed_into_the_host(tmp_path: Path,
                                                           start: tuple[Path, str]) -> None:
    gitdir, base = start
    kept = tmp_path / "kept-index"
    clone = _clone(gitdir, base, tmp_path / "clone", kept)
    fresh = _clone(gitdir, base, tmp_path / "fresh", tmp_path / "unused")
    outside = tmp_path / "outside"
    outside.mkdir()
    (fresh / "src").rename(tmp_path / "src-away")
    os.symlink(outside, fresh / "src")  # as if a path on the way were a link in the new tree
    (clone / "src" / "pricing.py").write_text("changed\n")

    apply_change(Change(written=("src/pricing.py",)), clone, fresh)

    assert list(outside.iterdir()) == []
    assert (fresh / "src").is_dir() and not (fresh / "src").is_symlink()
    assert (fresh / "src" / "pricing.py").read_text() == "changed\n"


def test_a_tree_git_cannot_read_is_unreadable_not_an_empty_change(tmp_path: Path,
                                                                  start: tuple[Path, str]) -> None:
    gitdir, base = start
    with pytest.raises(ChangeUnreadable):
        read_change(tmp_path / "no-such-clone", base, source=gitdir, index=None)


def test_libgit2s_walk_and_gits_status_read_the_same_change(tmp_path: Path,
                                                            start: tuple[Path, str]) -> None:
    gitdir, base = start
    kept = tmp_path / "kept-index"
    clone = _clone(gitdir, base, tmp_path / "clone", kept)
    (clone / "src" / "pricing.py").write_text("changed\n")
    (clone / "src" / "old.py").unlink()
    (clone / "src" / "deep" / "er").mkdir(parents=True)
    (clone / "src" / "deep" / "er" / "new.py").write_text("NEW = 2\n")
    (clone / "run.sh").chmod(0o755)
    (clone / "debug.log").write_text("ignored by the tool's own rules too\n")

    walked = read_change(clone, base, source=gitdir, index=kept, settled=["run.sh"])
    by_git = read_change(clone, base, source=gitdir, index=None, settled=["run.sh"])

    assert walked.written == by_git.written == ("src/deep/er/new.py", "src/pricing.py")
    assert walked.removed == by_git.removed == ("src/old.py",)


def test_the_diff_of_a_graded_change_shows_its_paths_alone_read_either_way(
        tmp_path: Path, start: tuple[Path, str]) -> None:
    from armbench.edge.gitclone import work_diff

    gitdir, base = start
    kept = tmp_path / "kept-index"
    clone = _clone(gitdir, base, tmp_path / "clone", kept)
    fresh = _clone(gitdir, base, tmp_path / "fresh", tmp_path / "unused")
    (clone / "src" / "pricing.py").write_text("def total(x):\n    return x * 2\n")
    (clone / "src" / "old.py").unlink()
    (clone / "src" / "new.py").write_text("NEW = 2\n")
    (clone / ".gitignore").write_text("!*.log\n")
    (clone / "debug.log").write_text("un-ignored by the tool, ignored at the start\n")
    change = apply_change(ignored_by(fresh, read_change(clone, base, source=gitdir, index=kept)),
                          clone, fresh)

    in_process = work_diff(clone, base, source=gitdir, index=kept, only=change.paths)
    by_git = work_diff(clone, base, source=gitdir, index=None, only=change.paths)

    assert in_process == by_git
    text = in_process.decode()
    for path in ("src/pricing.py", "src/old.py", "src/new.py", ".gitignore"):
        assert f"diff --git a/{path} b/{path}" in text, text
    assert "debug.log" not in text
    assert work_diff(clone, base, source=gitdir, index=kept, only=frozenset()) == b""


def test_a_huge_file_is_not_written_onto_the_check_tree_and_is_named(tmp_path: Path,
                                                                     start: tuple[Path, str]) -> None:
    from armbench.edge.change import GRADED_FILE_LIMIT

    gitdir, base = start
    kept = tmp_path / "kept-index"
    clone = _clone(gitdir, base, tmp_path / "clone", kept)
    fresh = _clone(gitdir, base, tmp_path / "fresh", tmp_path / "unused")
    with (clone / "big.bin").open("wb") as f:
        f.truncate(GRADED_FILE_LIMIT + 1)  # sparse: nothing is written
    (clone / "src" / "pricing.py").write_text("changed\n")

    change = apply_change(ignored_by(fresh, read_change(clone, base, source=gitdir, index=kept)),
                          clone, fresh)

    assert change.written == ("src/pricing.py",)
    assert change.oversized == ("big.bin",) and "big.bin" in change.left_out
    assert not (fresh / "big.bin").exists()
    assert change.shown == {"src/pricing.py", "big.bin"}
