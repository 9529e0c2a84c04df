"""A run's trial clones: the commit is fetched from the commit source once per run, and every
clone of it is copied from that fetch, on real git repositories in tmp_path."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gitrun import git

from armbench.benchmark.trials.workspace import TrialSources
from armbench.edge.errors import AddPathMissing
from armbench.edge.gitclone import CommitCache, FileBlob
from armbench.ledger.events import PlannedTask


def no_suite_file(source: str) -> FileBlob:
    raise AddPathMissing(source, "the suite folder")


class Project:
    """A checkout with a starting commit and a fix after it, and a run's sources over it."""

    def __init__(self, root: Path) -> None:
        self.repo = root / "checkout"
        git(root, "init", "-q", "-b", "main", str(self.repo))
        (self.repo / "app.py").write_text("print(1)\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", "start")
        self.start = git(self.repo, "rev-parse", "HEAD")
        (self.repo / "fix.py").write_text("SECRET\n")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-qm", "fix")
        self.fix = git(self.repo, "rev-parse", "HEAD")
        task = PlannedTask(id="t", title="t", source_hash="0", starting_commit=self.start,
                           prompt="p", fix=self.fix)
        self.root = root / "work"
        self.sources = TrialSources(str(self.repo), [task], CommitCache(root / "cache"),
                                    self.repo, self.root, no_suite_file)

    def fetched(self) -> Path:
        return self.root / "fetched" / self.start


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def test_the_commit_is_fetched_once_and_each_clone_copied_from_it(project: Project) -> None:
    first = project.sources.fresh_clone("a", project.start)
    assert project.fetched().is_dir()
    gitdir = project.sources.gitdir
    gitdir.rename(gitdir.with_name("away"))  # the commit source can no longer be read
    try:
        second = project.sources.fresh_clone("b", project.start)
    finally:
        gitdir.with_name("away").rename(gitdir)
    for clone in (first, second):
        assert git(clone, "rev-parse", "HEAD") == project.start
        assert git(clone, "log", "--all", "--format=%H") == project.start
        assert git(clone, "status", "--porcelain") == ""
    assert first != second and not (second / "fix.py").exists()


def test_a_fetched_git_dir_that_no_longer_checks_out_is_fetched_again(project: Project) -> None:
    project.sources.fresh_clone("a", project.start)
    for p in (project.fetched() / "objects").rglob("*"):
        if p.is_file():
            p.chmod(0o644)
            p.write_bytes(b"garbage")
    clone = project.sources.fresh_clone("b", project.start)
    assert git(clone, "rev-parse", "HEAD") == project.start
    assert (clone / "app.py").read_text() == "print(1)\n"
    assert git(clone, "fsck", "--no-dangling") == ""
    third = project.sources.fresh_clone("c", project.start)  # from the fetch made anew
    assert project.fetched().is_dir() and git(third, "fsck", "--no-dangling") == ""


def test_a_fetched_git_dir_that_is_gone_is_fetched_again(project: Project) -> None:
    project.sources.fresh_clone("a", project.start)
    shutil.rmtree(project.fetched())
    clone = project.sources.fresh_clone("b", project.start)
    assert git(clone, "rev-parse", "HEAD") == project.start
    assert project.fetched().is_dir()


def test_a_judged_trials_diff_is_read_once_for_its_judge_and_its_evidence(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    import armbench.benchmark.trials.workspace as workspace
    reads: list[Path] = []
    real = workspace.work_diff

    def counted(clone: Path, base: str, **kwargs):  # type: ignore[no-untyped-def]
        reads.append(clone)
        return real(clone, base, **kwargs)
    monkeypatch.setattr(workspace, "work_diff", counted)
    clone = project.sources.fresh_clone("a", project.start)
    (clone / "app.py").write_text("print(2)\n")
    judged = project.sources.diff(clone, project.start, remember=True)  # the judge's reading
    assert b"+print(2)" in judged
    assert project.sources.diff_once(clone, project.start) == judged  # the evidence's
    assert len(reads) == 1
    assert project.sources.diff_once(clone, project.start) == judged  # forgotten: read anew
    assert len(reads) == 2
    project.sources.diff(clone, project.start, remember=True)
    again = project.sources.fresh_clone("a", project.start)  # a new try of the step forgets it
    assert b"print(2)" not in project.sources.diff_once(again, project.start)
