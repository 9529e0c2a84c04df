"""A trial's diff (for the judge and for `judge calibrate`) is read without any git data of the
clone's own: the tool writes the clone's `.git`, and a filter or a textconv it defines there
would otherwise run on the host, outside the sandbox, when armbench reads the diff."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from armbench.edge.gitclone import keep_index, make_isolated_clone, work_diff

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def trial(tmp_path: Path) -> tuple[Path, Path, str, Path]:
    """A source repo of 300 files, a clone at its commit, the clone's index kept apart."""
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    for n in range(300):
        (source / "src" / f"m{n // 50}").mkdir(parents=True, exist_ok=True)
        (source / "src" / f"m{n // 50}" / f"f{n}.py").write_text(f"VALUE = {n}\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "start")
    base = git(source, "rev-parse", "HEAD").strip()
    clone = tmp_path / "clone"
    make_isolated_clone(source / ".git", base, clone)
    kept = tmp_path / "work" / "indexes" / "clone"
    keep_index(clone, kept)
    return source / ".git", clone, base, kept


def plant(clone: Path, marker: Path) -> None:
    """What a tool can write in its clone: attributes naming drivers its repo config defines."""
    (clone / ".gitattributes").write_text("* filter=evil diff=evil\n")
    with (clone / ".git" / "config").open("a") as config:
        # git runs a driver's command with the shell, the file's name appended for textconv
        config.write(f'[filter "evil"]\n\tclean = touch {marker}; cat\n'
                     f'\tsmudge = touch {marker}; cat\n'
                     f'[diff "evil"]\n\ttextconv = touch {marker}; cat\n'
                     f'[core]\n\tfsmonitor = touch {marker}\n')


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_the_planted_drivers_do_run_under_plain_git(trial, tmp_path: Path) -> None:
    """The control: in the clone, git runs what the tool planted (so the test below can fail)."""
    _, clone, base, _ = trial
    marker = tmp_path / "ran-under-plain-git"
    plant(clone, marker)
    (clone / "src" / "m0" / "f1.py").write_text("VALUE = 'changed'\n")
    subprocess.run(["git", "add", "-A"], cwd=clone, env=ENV, capture_output=True)
    assert marker.exists()


@pytest.mark.parametrize("with_index", [True, False], ids=["kept index", "no index"])
def test_the_diff_runs_nothing_the_tool_planted_and_shows_its_change(
        trial, tmp_path: Path, with_index: bool) -> None:
    gitdir, clone, base, kept = trial
    marker = tmp_path / "escaped"
    plant(clone, marker)
    (clone / "src" / "m0" / "f1.py").write_text("VALUE = 'changed'\n")
    (clone / "src" / "new.py").write_text("NEW = 1\n")
    (clone / "src" / "m5" / "f299.py").unlink()
    git(clone, "-c", "core.fsmonitor=false", "-c", "filter.evil.clean=cat", "commit", "-qam",
        "the tool's own commit")  # commits a tool makes are part of its change
    diff = work_diff(clone, base, source=gitdir, index=kept if with_index else None).decode()
    assert not marker.exists()
    assert "+VALUE = 'changed'" in diff and "+NEW = 1" in diff and "-VALUE = 299" in diff
    assert "+* filter=evil diff=evil" in diff  # the planted attributes are shown, not obeyed
    assert git(gitdir.parent, "status", "--porcelain") == ""  # the source is untouched


def test_an_unchanged_clone_has_an_empty_diff(trial) -> None:
    gitdir, clone, base, kept = trial
    assert work_diff(clone, base, source=gitdir, index=kept) == b""
    assert work_diff(clone, base, source=gitdir) == b""
