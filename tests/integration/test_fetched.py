"""The git dirs clones start from, made from one another (`edge.fetched`): each holds exactly the
objects `fetch_commit` would have fetched, on real repositories with merges, links, executables,
a submodule entry and a tree that comes back."""

import shutil
import subprocess
from pathlib import Path

import pytest
from gitrun import GIT_ENV, git

from armbench.edge.fetched import DEPTH, FetchedCommits, extend_fetched
from armbench.edge.gitclone import fetch_commit, make_isolated_clone


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def objects(gitdir: Path) -> list[str]:
    """Every object the git dir holds, by id and type."""
    return sorted(git(gitdir, "cat-file", "--batch-all-objects", "--batch-check").splitlines())


class History:
    """main: a start, a package, a side branch merged back, a link and an executable, a
    submodule entry, a file deleted then the old tree restored; `side`: a branch main never
    merges."""

    def __init__(self, root: Path) -> None:
        self.repo = root / "checkout"
        git(root, "init", "-q", "-b", "main", str(self.repo))
        self.main = [commit(self.repo, {"README.md": "start\n"}, "start")]
        self.main.append(commit(self.repo, {"pkg/a.py": "a = 1\n", "pkg/sub/b.py": "b = 1\n"}, "pkg"))
        git(self.repo, "checkout", "-q", "-b", "feature")
        feature = commit(self.repo, {"pkg/sub/c.py": "c = 1\n"}, "feature")
        git(self.repo, "checkout", "-q", "main")
        self.main.append(commit(self.repo, {"pkg/a.py": "a = 2\n"}, "on main"))
        git(self.repo, "merge", "-q", "--no-ff", "-m", "merge feature", feature)
        self.main.append(git(self.repo, "rev-parse", "HEAD"))
        (self.repo / "tool.sh").write_text("#!/bin/sh\n")
        (self.repo / "tool.sh").chmod(0o755)
        (self.repo / "link").symlink_to("pkg/a.py")
        self.main.append(commit(self.repo, {}, "link and tool"))
        module = "160000,0123456789012345678901234567890123456789,vendored"
        git(self.repo, "update-index", "--add", "--cacheinfo", module)
        git(self.repo, "commit", "-q", "-m", "a submodule entry")
        self.main.append(git(self.repo, "rev-parse", "HEAD"))
        self.main.append(commit(self.repo, {"pkg/sub/b.py": None}, "drop b"))
        self.main.append(commit(self.repo, {"pkg/sub/b.py": "b = 1\n"}, "b back"))
        git(self.repo, "checkout", "-q", "-b", "side", self.main[1])
        self.side = commit(self.repo, {"side.txt": "SIDE ONLY\n"}, "side")
        git(self.repo, "checkout", "-q", "main")
        self.gitdir = self.repo / ".git"


@pytest.fixture
def history(tmp_path: Path) -> History:
    return History(tmp_path)


def test_each_git_dir_holds_what_a_fetch_of_its_commit_would(history: History, tmp_path: Path) -> None:
    store = FetchedCommits(tmp_path / "store")
    for sha in [*history.main, history.side]:
        made = store.template(history.gitdir, sha)
        fetched = tmp_path / "fetched" / sha
        fetch_commit(history.gitdir, sha, fetched)
        assert objects(made) == objects(fetched), sha
        git(made, "fsck", "--strict", "--no-dangling", sha)


def test_a_git_dir_made_from_an_earlier_one_adds_one_pack(history: History, tmp_path: Path) -> None:
    store = FetchedCommits(tmp_path / "store")
    first = store.template(history.gitdir, history.main[0])
    later = store.template(history.gitdir, history.main[-1])
    packs = sorted(p.name for p in (later / "objects" / "pack").glob("*.pack"))
    assert len(packs) == len(list((first / "objects" / "pack").glob("*.pack"))) + 1
    assert "SIDE ONLY" not in git(later, "log", "--all", "-p", history.main[-1])


def test_the_start_of_a_fix_never_holds_the_fix(history: History, tmp_path: Path) -> None:
    store = FetchedCommits(tmp_path / "store")
    store.template(history.gitdir, history.side)  # a later commit's git dir first
    start = store.template(history.gitdir, history.main[1])
    side_blob = git(history.repo, "rev-parse", f"{history.side}:side.txt")
    assert subprocess.run(["git", "cat-file", "-e", side_blob], cwd=start, env=GIT_ENV).returncode != 0


def test_a_clone_from_a_made_git_dir_checks_out(history: History, tmp_path: Path) -> None:
    store = FetchedCommits(tmp_path / "store")
    store.template(history.gitdir, history.main[0])
    sha = history.main[-1]
    clone = tmp_path / "clone"
    make_isolated_clone(history.gitdir, sha, clone, template=store.template(history.gitdir, sha))
    assert git(clone, "rev-parse", "HEAD") == sha
    assert git(clone, "status", "--porcelain") == ""
    assert (clone / "link").is_symlink() and (clone / "tool.sh").stat().st_mode & 0o100


def test_no_git_dir_is_made_from_one_that_is_not_its_ancestors(history: History, tmp_path: Path) -> None:
    side = tmp_path / "side"
    fetch_commit(history.gitdir, history.side, side)
    assert not extend_fetched(side, history.side, history.gitdir, history.main[-1], tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_too_many_commits_between_and_a_missing_base_are_fetched_instead(history: History,
                                                                         tmp_path: Path) -> None:
    base = tmp_path / "base"
    fetch_commit(history.gitdir, history.main[0], base)
    assert not extend_fetched(base, history.main[0], history.gitdir, history.main[-1], tmp_path / "x",
                              limit=2)
    assert not extend_fetched(tmp_path / "gone", history.main[0], history.gitdir, history.main[-1],
                              tmp_path / "x")
    assert not (tmp_path / "x").exists()
    assert extend_fetched(base, history.main[0], history.gitdir, history.main[-1], tmp_path / "x")


def test_a_chain_is_at_most_depth_packs_deep(tmp_path: Path) -> None:
    repo = tmp_path / "long"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    shas = [commit(repo, {"n.txt": f"{n}\n"}, f"c{n}") for n in range(DEPTH + 3)]
    store = FetchedCommits(tmp_path / "store")
    packs = [len(list((store.template(repo / ".git", sha) / "objects" / "pack").glob("*.pack")))
             for sha in shas]
    assert packs == [*range(0, DEPTH + 1), 0, 1]  # a small fetch's objects are loose: no pack


def test_a_git_dir_whose_base_was_removed_is_fetched_whole(history: History, tmp_path: Path) -> None:
    store = FetchedCommits(tmp_path / "store")
    shutil.rmtree(store.template(history.gitdir, history.main[0]))  # as a clone that failed does
    made = store.template(history.gitdir, history.main[-1])
    fetched = tmp_path / "fetched"
    fetch_commit(history.gitdir, history.main[-1], fetched)
    assert objects(made) == objects(fetched)
