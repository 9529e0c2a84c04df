"""Restoring protected paths in an agent's clone: no git in the clone, never through a link."""

import os
import subprocess
from pathlib import Path

import pytest
from gitrun import GIT_ENV

from armbench.edge import protect
from armbench.edge.errors import EdgeError
from armbench.edge.gitclone import FileBlob, attributes_along, files_matching_at, make_isolated_clone
from armbench.edge.protect import restore_protected, stamp_files, verify_files, write_files

PATTERNS = ["test/**", "scripts/check.sh"]
TEST = FileBlob(data=b"def test_app(): assert app() == 2\n", mode=0o100644)
HELPER = FileBlob(data=b"def helper(): pass\n", mode=0o100644)
CHECK = FileBlob(data=b"#!/bin/sh\npytest\n", mode=0o100755)
LINK = FileBlob(data=b"test_app.py", mode=0o120000)
EXPECTED = {
    "test/test_app.py": TEST,
    "test/unit/helper.py": HELPER,
    "scripts/check.sh": CHECK,
    "test/alias.py": LINK,
}


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A clone as the starting commit has it, plus an unprotected source file."""
    root = tmp_path / "clone"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    write_files(root, EXPECTED)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def app(): return 2\n")
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory beyond the clone, which a planted link points at."""
    root = tmp_path / "outside"
    root.mkdir()
    (root / "test_app.py").write_bytes(TEST.data)
    (root / "secret.txt").write_text("do not touch\n")
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_fixture_starts_as_expected(clone: Path) -> None:
    assert verify_files(clone, EXPECTED) == []
    assert os.readlink(clone / "test" / "alias.py") == "test_app.py"


def test_an_edited_protected_file_is_restored_and_agent_edits_elsewhere_kept(clone: Path) -> None:
    (clone / "test" / "test_app.py").write_text("def test_app(): pass\n")
    (clone / "src" / "app.py").write_text("def app(): return 3\n")
    assert verify_files(clone, EXPECTED) == ["test/test_app.py"]
    restore_protected(clone, PATTERNS, EXPECTED)
    assert verify_files(clone, EXPECTED) == []
    assert (clone / "src" / "app.py").read_text() == "def app(): return 3\n"


def test_files_added_under_protected_paths_are_removed(clone: Path) -> None:
    (clone / "test" / "conftest.py").write_text("import pytest\n")
    (clone / "test" / "deep" / "er").mkdir(parents=True)
    (clone / "test" / "deep" / "er" / "fake.py").write_text("x\n")
    (clone / "scripts" / "other.sh").write_text("echo unprotected\n")
    (clone / "src" / "new.py").write_text("new\n")
    restore_protected(clone, PATTERNS, EXPECTED)
    assert (
        not (clone / "test" / "conftest.py").exists()
        and not (clone / "test" / "deep" / "er" / "fake.py").exists()
    )
    assert (clone / "scripts" / "other.sh").exists() and (clone / "src" / "new.py").exists()
    assert verify_files(clone, EXPECTED) == []


def test_a_protected_directory_replaced_by_a_link_is_never_written_through(
    clone: Path, outside: Path
) -> None:
    before = snapshot(outside)
    os.rename(clone / "test", clone / "moved")
    (clone / "test").symlink_to(outside)
    assert verify_files(clone, EXPECTED) == ["test/alias.py", "test/test_app.py", "test/unit/helper.py"]
    restore_protected(clone, PATTERNS, EXPECTED)
    assert snapshot(outside) == before and sorted(os.listdir(outside)) == ["secret.txt", "test_app.py"]
    assert not (clone / "test").is_symlink() and (clone / "test").is_dir()
    assert verify_files(clone, EXPECTED) == []


def test_a_protected_file_replaced_by_a_link_is_restored_as_a_file(clone: Path, outside: Path) -> None:
    before = snapshot(outside)
    (clone / "test" / "test_app.py").unlink()
    (clone / "test" / "test_app.py").symlink_to(outside / "secret.txt")
    restore_protected(clone, PATTERNS, EXPECTED)
    assert snapshot(outside) == before
    assert not (clone / "test" / "test_app.py").is_symlink()
    assert verify_files(clone, EXPECTED) == []


def test_a_protected_file_hardlinked_outside_is_replaced_not_written_into(clone: Path, outside: Path) -> None:
    (clone / "test" / "test_app.py").unlink()
    os.link(outside / "secret.txt", clone / "test" / "test_app.py")
    restore_protected(clone, PATTERNS, EXPECTED)
    assert (outside / "secret.txt").read_text() == "do not touch\n"
    assert verify_files(clone, EXPECTED) == []


def test_a_link_to_a_directory_under_protect_is_removed_not_descended(clone: Path, outside: Path) -> None:
    before = snapshot(outside)
    (clone / "test" / "more").symlink_to(outside, target_is_directory=True)
    restore_protected(clone, PATTERNS, EXPECTED)
    assert not os.path.lexists(clone / "test" / "more")
    assert snapshot(outside) == before


def test_a_link_at_a_protected_directory_goes_even_when_nothing_is_expected_there(
    clone: Path, outside: Path
) -> None:
    (clone / "spec").symlink_to(outside, target_is_directory=True)
    restore_protected(clone, [*PATTERNS, "spec/**/*.py"], EXPECTED)
    assert not os.path.lexists(clone / "spec") and (outside / "secret.txt").exists()


def test_a_protected_file_replaced_by_a_directory_is_restored(clone: Path) -> None:
    (clone / "scripts" / "check.sh").unlink()
    (clone / "scripts" / "check.sh" / "inner").mkdir(parents=True)
    (clone / "scripts" / "check.sh" / "inner" / "x").write_text("x\n")
    restore_protected(clone, PATTERNS, EXPECTED)
    assert verify_files(clone, EXPECTED) == []


@pytest.mark.parametrize(("path", "mode"), [("scripts/check.sh", 0o644), ("test/test_app.py", 0o755)])
def test_the_executable_bit_is_restored(clone: Path, path: str, mode: int) -> None:
    (clone / path).chmod(mode)
    assert verify_files(clone, EXPECTED) == [path]
    restore_protected(clone, PATTERNS, EXPECTED)
    assert verify_files(clone, EXPECTED) == []
    assert os.access(clone / "scripts" / "check.sh", os.X_OK) and not os.access(
        clone / "test" / "test_app.py", os.X_OK
    )


def test_verify_does_not_follow_a_parent_link_to_identical_bytes(clone: Path, outside: Path) -> None:
    os.rename(clone / "test", clone / "moved")
    (clone / "test").symlink_to(outside)
    assert "test/test_app.py" in verify_files(clone, {"test/test_app.py": TEST})


def test_verify_reports_a_link_in_place_of_a_file_and_a_missing_file(clone: Path) -> None:
    (clone / "scripts" / "check.sh").unlink()
    (clone / "test" / "alias.py").unlink()
    (clone / "test" / "alias.py").write_bytes(b"test_app.py")
    assert verify_files(clone, EXPECTED) == ["scripts/check.sh", "test/alias.py"]


def test_write_files_creates_check_add_files_under_a_real_directory(clone: Path, outside: Path) -> None:
    before = snapshot(outside)
    os.rename(clone / "test", clone / "moved")
    (clone / "test").symlink_to(outside)
    added = {"test/test_fix.py": FileBlob(data=b"hidden test\n", mode=0o100644)}
    write_files(clone, added)
    assert snapshot(outside) == before and verify_files(clone, added) == []


def test_the_git_dir_is_left_alone(clone: Path) -> None:
    before = snapshot(clone / ".git")
    restore_protected(clone, ["**"], EXPECTED)
    assert snapshot(clone / ".git") == before
    assert not (clone / "src" / "app.py").exists()


@pytest.mark.parametrize("path", ["../escape.py", ".git/hooks/pre-commit", "test//a.py", "test/./a.py",
                                  "sub/.GIT/config", "test/a.py/", "/abs.py", "", "a\0b", "sub/..",
                                  "sub/.Git"])
def test_paths_that_leave_the_work_tree_are_refused(clone: Path, path: str) -> None:
    with pytest.raises(EdgeError, match="a repo-relative file path"):
        write_files(clone, {path: TEST})
    assert not (clone.parent / "escape.py").exists() and not (clone / ".git" / "hooks").exists()


def git(cwd: Path, *args: str) -> str:
    """Git's stdout as it printed it (these tests compare `status --porcelain` lines whole)."""
    return subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True
    ).stdout


@pytest.fixture
def trial(tmp_path: Path) -> tuple[Path, Path, str]:
    """A source repo with a test and a script, and an isolated clone of it at its commit."""
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    write_files(source, EXPECTED)
    (source / "src").mkdir()
    (source / "src" / "app.py").write_text("def app(): return 2\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "start")
    start = git(source, "rev-parse", "HEAD").strip()
    make_isolated_clone(source / ".git", start, tmp_path / "clone")
    return source / ".git", tmp_path / "clone", start


def test_a_real_clone_is_restored_from_the_commit(trial: tuple[Path, Path, str]) -> None:
    gitdir, clone, start = trial
    (clone / "test" / "test_app.py").write_text("def test_app(): pass\n")
    (clone / "test" / "conftest.py").write_text("planted\n")
    (clone / "scripts" / "check.sh").chmod(0o644)
    (clone / "src" / "app.py").write_text("def app(): return 3\n")
    expected = files_matching_at(gitdir, start, PATTERNS)
    assert expected == EXPECTED
    restore_protected(clone, PATTERNS, expected)
    assert git(clone, "status", "--porcelain") == " M src/app.py\n"


def test_restoring_runs_nothing_the_agent_planted_in_the_clone(
    trial: tuple[Path, Path, str], tmp_path: Path
) -> None:
    gitdir, clone, start = trial
    marker = tmp_path / "planted-ran"
    script = clone / "planted.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    with (clone / ".git" / "config").open("a") as config:
        config.write(f"[core]\n\tfsmonitor = {script}\n\thooksPath = {clone}\n")
    for hook in ("post-checkout", "post-index-change", "reference-transaction"):
        (clone / hook).symlink_to(script)
    (clone / "test" / "test_app.py").write_text("edited\n")
    restore_protected(clone, PATTERNS, files_matching_at(gitdir, start, PATTERNS))
    assert verify_files(clone, EXPECTED) == [] and not marker.exists()


# Stamps: a restore skips reading a protected file whose lstat still equals the stamp taken
# before the tool ran; every way of changing a file must still be caught.

def _tampered(clone: Path, outside: Path) -> dict[str, str]:
    """Each protected path changed a different way, keeping size and mtime where it can."""
    app = clone / "test" / "test_app.py"
    seen = os.stat(app)
    app.write_bytes(b"def test_app(): assert True or 2\n"[: len(TEST.data)].ljust(len(TEST.data)))
    os.utime(app, ns=(seen.st_atime_ns, seen.st_mtime_ns))  # mtime set back: only ctime moved
    helper = clone / "test" / "unit" / "helper.py"
    helper.unlink()
    helper.write_bytes(b"def helper(): 1\n".ljust(len(HELPER.data)))  # a new inode
    check = clone / "scripts" / "check.sh"
    check.chmod(0o644)
    alias = clone / "test" / "alias.py"
    alias.unlink()
    alias.symlink_to(outside / "test_app.py")
    return {"test/test_app.py": "rewritten in place", "test/unit/helper.py": "replaced",
            "scripts/check.sh": "chmod", "test/alias.py": "relinked"}


def _next_tick(clone: Path) -> None:
    """Wait (a few milliseconds at most) until a new file's ctime is later than every file's in
    the clone, so stamps can be taken of all of them."""
    newest = max(p.lstat().st_ctime_ns for p in clone.rglob("*"))
    probe = clone / ".git" / "tick"
    while True:
        probe.write_bytes(b"")
        if probe.stat().st_ctime_ns > newest:
            probe.unlink()
            return


def test_with_stamps_every_change_is_still_restored(clone: Path, outside: Path) -> None:
    _next_tick(clone)
    stamps = stamp_files(clone, EXPECTED)
    assert sorted(stamps) == sorted(EXPECTED)
    changed = _tampered(clone, outside)
    assert restore_protected(clone, PATTERNS, EXPECTED, stamps) == sorted(changed)
    assert verify_files(clone, EXPECTED) == []


def test_a_rename_onto_a_stamped_path_is_caught(clone: Path) -> None:
    _next_tick(clone)
    stamps = stamp_files(clone, EXPECTED)
    (clone / "test" / "test_app.py").unlink()
    os.rename(clone / "test" / "unit" / "helper.py", clone / "test" / "test_app.py")
    got = restore_protected(clone, PATTERNS, EXPECTED, stamps)
    assert got == ["test/test_app.py", "test/unit/helper.py"]
    assert verify_files(clone, EXPECTED) == []


def test_stamped_files_nobody_touched_are_not_read(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _next_tick(clone)
    stamps = stamp_files(clone, EXPECTED)
    read: list[str] = []
    real = protect._same_or_absent
    monkeypatch.setattr(protect, "_same_or_absent",
                        lambda parent, name, blob: read.append(name) or real(parent, name, blob))
    (clone / "test" / "unit" / "helper.py").write_bytes(b"changed\n")
    assert restore_protected(clone, PATTERNS, EXPECTED, stamps) == ["test/unit/helper.py"]
    assert read == ["helper.py"]


def test_files_changed_in_the_clocks_current_tick_are_not_stamped(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the probe's ctime stands for "now": a file whose ctime is not older could still be
    # changed without its ctime moving, so it gets no stamp and is read at restore
    newest = max((clone / p).lstat().st_ctime_ns for p in EXPECTED)
    monkeypatch.setattr(protect, "_tick", lambda root: newest)
    stamps = stamp_files(clone, EXPECTED)
    assert all((clone / p).lstat().st_ctime_ns < newest for p in stamps)
    assert len(stamps) < len(EXPECTED)


def test_gitattributes_above_a_protected_path_is_found(tmp_path: Path) -> None:
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    write_files(source, EXPECTED)
    (source / "docs").mkdir()
    (source / "docs" / ".gitattributes").write_text("* text eol=crlf\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "beside")
    beside = git(source, "rev-parse", "HEAD").strip()
    (source / "test" / "unit" / ".gitattributes").write_text("*.py ident\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "above")
    above = git(source, "rev-parse", "HEAD").strip()
    gitdir = source / ".git"
    assert not attributes_along(gitdir, beside, list(EXPECTED))
    assert attributes_along(gitdir, above, list(EXPECTED))
    assert not attributes_along(gitdir, above, ["test/test_app.py", "scripts/check.sh"])


def test_a_trial_clone_ignores_the_members_own_attributes_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "xdg"
    (config / "git").mkdir(parents=True)
    (config / "git" / "attributes").write_text("* text eol=crlf\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    write_files(source, EXPECTED)
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "start")
    start = git(source, "rev-parse", "HEAD").strip()
    make_isolated_clone(source / ".git", start, tmp_path / "clone")
    assert verify_files(tmp_path / "clone", EXPECTED) == []
