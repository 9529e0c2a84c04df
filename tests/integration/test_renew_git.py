"""Before a trial's check the clone gets a git dir armbench made (`edge.gitclone.renew_git_dir`):
whatever the tool left at `.git` (a folder with hooks and drivers in its config, a `gitdir:`
file, a link) is moved aside unread, and git still shows the tool's change. Every git setup and
the check start gets `SAFE_GIT_CONFIG` over the repository's own (`safe_git_env`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from gitrun import GIT_ENV, git

from armbench.benchmark.trials.checks import check_env
from armbench.edge.gitclone import (
    SAFE_GIT_CONFIG,
    fetch_commit,
    keep_index,
    make_isolated_clone,
    renew_git_dir,
)
from armbench.edge.sandbox import Launch


@pytest.fixture
def trial(tmp_path: Path) -> tuple[Path, str, Path, Path]:
    """A clone of a two-file repo made from `fetch_commit`'s git dir, its index kept apart."""
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    (source / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (source / "README.md").write_text("# calc\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "start")
    base = git(source, "rev-parse", "HEAD")
    template = tmp_path / "work" / "fetched" / base
    fetch_commit(source / ".git", base, template)
    clone = tmp_path / "work" / "clones" / "c1"
    clone.parent.mkdir(parents=True)
    make_isolated_clone(source / ".git", base, clone, template=template)
    kept = tmp_path / "work" / "indexes" / "c1"
    keep_index(clone, kept)
    return clone, base, template, kept


def plant(clone: Path, gitdir: Path, marker: Path) -> None:
    """Drivers, hooks and an fsmonitor in the tool's git config, named by its attributes."""
    (clone / ".gitattributes").write_text("* filter=evil diff=evil\n")
    with (gitdir / "config").open("a") as config:
        config.write(f'[filter "evil"]\n\tclean = touch {marker}; cat\n'
                     f'[diff "evil"]\n\ttextconv = touch {marker}; cat\n'
                     f'[diff]\n\texternal = touch {marker}\n'
                     f'[core]\n\tfsmonitor = touch {marker}\n')


def run_git(clone: Path, *args: str) -> str:
    """git as the check runs it: the check's environment over a plain one."""
    env = {**GIT_ENV, **check_env(Launch(argv=[], cwd=clone, env={}, clone=str(clone), tmp="/tmp"))}
    return subprocess.run(["git", *args], cwd=clone, env=env, capture_output=True, text=True,
                          check=True).stdout


def tool_edits(clone: Path) -> None:
    (clone / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (clone / "NOTES.md").write_text("fixed add\n")


def test_the_planted_config_runs_without_renewal(trial, tmp_path: Path) -> None:
    """The control: git in the tool's clone runs what the tool planted (so the tests below can fail)."""
    clone, _, _, _ = trial
    marker = tmp_path / "ran"
    plant(clone, clone / ".git", marker)
    tool_edits(clone)
    subprocess.run(["git", "diff"], cwd=clone, env=GIT_ENV, capture_output=True)
    assert marker.exists()


def test_a_renewed_git_dir_runs_nothing_of_the_tools_and_shows_its_change(trial, tmp_path: Path) -> None:
    clone, base, template, kept = trial
    marker = tmp_path / "ran"
    plant(clone, clone / ".git", marker)
    (clone / ".git" / "hooks").mkdir(exist_ok=True)
    tool_edits(clone)
    trash = tmp_path / "work" / "rooms" / "c1" / "tool-git"
    renew_git_dir(clone, base, template=template, index=kept, trash=trash)
    assert run_git(clone, "status", "--porcelain").splitlines() == [
        " M calc.py", "?? .gitattributes", "?? NOTES.md"]
    assert "+    return a + b" in run_git(clone, "diff")
    assert run_git(clone, "rev-parse", "HEAD").strip() == base
    assert run_git(clone, "describe", "--dirty", "--always").strip().endswith("-dirty")
    assert not marker.exists()
    assert "evil" not in (clone / ".git" / "config").read_text()
    assert (trash / "config").read_text().count("evil") == 2  # moved aside, kept for the cleanup
    assert (clone / ".gitattributes").is_file()  # a file of the tree, naming no driver that exists
    assert not (template / "index").exists()  # the template stays as fetched, for the next clone
    assert not (template / "refs" / "heads" / "armbench-trial").exists()


@pytest.mark.parametrize("shape", ["gitdir-file", "link"])
def test_a_git_file_or_link_is_moved_aside_unfollowed(trial, tmp_path: Path, shape: str) -> None:
    clone, base, template, kept = trial
    marker = tmp_path / "ran"
    elsewhere = tmp_path / "elsewhere.git"
    os.rename(clone / ".git", elsewhere if shape == "link" else clone / ".realgit")
    if shape == "link":
        (clone / ".git").symlink_to(elsewhere)
        plant(clone, elsewhere, marker)
    else:
        (clone / ".git").write_text("gitdir: .realgit\n")
        plant(clone, clone / ".realgit", marker)
    before = (elsewhere if shape == "link" else clone / ".realgit").joinpath("config").read_text()
    tool_edits(clone)
    trash = tmp_path / "work" / "rooms" / "c1" / "tool-git"
    renew_git_dir(clone, base, template=template, index=None, trash=trash)
    assert (clone / ".git").is_dir() and not (clone / ".git").is_symlink()
    assert " M calc.py" in run_git(clone, "status", "--porcelain").splitlines()
    run_git(clone, "diff")
    assert not marker.exists()
    assert trash.is_symlink() if shape == "link" else trash.is_file()
    if shape == "link":  # the link's target is neither followed nor touched
        assert (elsewhere / "config").read_text() == before


def test_a_repository_the_tool_made_inside_its_clone_is_moved_aside_too(trial, tmp_path: Path) -> None:
    """A monorepo's check runs git in a package's folder: a `.git` the tool put there (with a
    filter, a textconv and an external diff, none of which an environment variable can turn
    off) would be found first."""
    clone, base, template, kept = trial
    marker = tmp_path / "ran"
    package = clone / "pkg" / "deep"
    package.mkdir(parents=True)
    git(package, "init", "-q")
    (package / "f.txt").write_text("one\n")
    git(package, "add", "f.txt")
    git(package, "commit", "-q", "-m", "x")
    plant(package, package / ".git", marker)
    (package / "f.txt").write_text("two\n")
    (clone / "other").mkdir()
    (clone / "other" / ".git").symlink_to(package / ".git")  # a link named .git: moved, not followed
    subprocess.run(["git", "diff"], cwd=package, env=GIT_ENV, capture_output=True)
    assert marker.exists()  # the control: git in that folder obeys the tool's config
    marker.unlink(missing_ok=True)
    trash = tmp_path / "work" / "rooms" / "c1" / "tool-git"
    renew_git_dir(clone, base, template=template, index=kept, trash=trash)
    for args in (["status"], ["diff"]):
        subprocess.run(["git", *args], cwd=package, env={**GIT_ENV, **check_env(Launch(
            argv=[], cwd=clone, env={}, clone=str(clone), tmp="/tmp"))}, capture_output=True)
    assert not marker.exists()
    assert not (package / ".git").exists() and not (clone / "other" / ".git").is_symlink()
    moved = sorted(p.name for p in trash.parent.iterdir())
    assert moved == ["tool-git", "tool-git-nested-0", "tool-git-nested-1"]
    assert (package / "f.txt").read_text() == "two\n"  # the tool's files stay
    assert "?? pkg/" in run_git(clone, "status", "--porcelain").splitlines()


def test_git_in_a_tools_own_repo_obeys_the_safe_settings(tmp_path: Path) -> None:
    """A repository the check's git finds that armbench did not make (a nested one the tool
    left): its fsmonitor and hooks are overridden by the environment."""
    repo = tmp_path / "nested"
    git(tmp_path, "init", "-q", str(repo))
    marker = tmp_path / "ran"
    (repo / "f").write_text("x\n")
    git(repo, "add", "f")
    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    run_git(repo, "status")
    assert not marker.exists()
    env = check_env(Launch(argv=[], cwd=repo, env={}, clone=str(repo), tmp="/tmp"))
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == os.devnull
    keys = {env[f"GIT_CONFIG_KEY_{n}"]: env[f"GIT_CONFIG_VALUE_{n}"]
            for n in range(int(env["GIT_CONFIG_COUNT"]))}
    assert keys == SAFE_GIT_CONFIG
