"""Isolated clones, the commit cache and reads at a commit, on real git repositories in tmp_path."""

import os
import shutil
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from gitrun import GIT_ENV, git

from armbench.edge.errors import AddPathMissing, CommitUnreachable, GitError
from armbench.edge.fetched import FetchedCommits
from armbench.edge.gitclone import (
    TRIAL_BRANCH,
    CommitCache,
    FileBlob,
    fetch_commit,
    files_matching_at,
    has_commit,
    make_isolated_clone,
    read_files_at,
)

HOOK = '#!/bin/sh\ntouch "$HOOK_MARKER"\n'


def readable(repo: Path, obj: str) -> bool:
    return (
        subprocess.run(["git", "cat-file", "-e", obj], cwd=repo, env=GIT_ENV,
                       capture_output=True).returncode == 0
    )


def state_of(repo: Path) -> str:
    """What a member sees: status, HEAD and every ref."""
    return "\n".join(
        git(repo, *args) for args in (["status", "--porcelain"], ["rev-parse", "HEAD"], ["show-ref"])
    )


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


class Source:
    """A member's checkout: base, start, then a fix on main, and another branch off start."""

    def __init__(self, root: Path) -> None:
        self.repo = root / "checkout"
        git(root, "init", "-q", "-b", "main", str(self.repo))
        self.base = commit(self.repo, {"src/app.py": "print(1)\n", "test/test_app.py": "old\n"}, "base")
        self.start = commit(self.repo, {"src/app.py": "print(2)\n"}, "start")
        self.fix = commit(self.repo, {"test/test_fix.py": "SECRET fix test\n"}, "fix")
        self.fix_blob = git(self.repo, "rev-parse", f"{self.fix}:test/test_fix.py")
        git(self.repo, "checkout", "-q", "-b", "other", self.start)
        self.other = commit(self.repo, {"other.txt": "other branch\n"}, "other")
        git(self.repo, "checkout", "-q", "main")
        hook = self.repo / ".git" / "hooks" / "pre-commit"
        hook.parent.mkdir(exist_ok=True)
        hook.write_text(HOOK)
        hook.chmod(0o755)
        self.gitdir = self.repo / ".git"


@pytest.fixture
def source(tmp_path: Path) -> Source:
    return Source(tmp_path)


Make = Callable[[Path, str, Path], None]


@pytest.fixture(params=["fetched", "from-template", "from-an-ancestors-template"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Make:
    """A clone made with its own fetch, or copied from the git dir `fetch_commit` made once, or
    from one `edge.fetched` made from the first commit's."""
    if request.param == "fetched":
        return make_isolated_clone
    if request.param == "from-an-ancestors-template":
        store = FetchedCommits(tmp_path / "store")

        def from_ancestor(gitdir: Path, sha: str, dest: Path) -> None:
            first = git(gitdir, "rev-list", "--max-parents=0", sha)
            store.template(gitdir, first)
            make_isolated_clone(gitdir, sha, dest, template=store.template(gitdir, sha))
        return from_ancestor

    def from_template(gitdir: Path, sha: str, dest: Path) -> None:
        template = tmp_path / "fetched" / sha
        if not template.exists():
            fetch_commit(gitdir, sha, template)
        make_isolated_clone(gitdir, sha, dest, template=template)
    return from_template


def test_the_clone_holds_only_the_commit_and_its_ancestors(source: Source, tmp_path: Path,
                                                           make: Make) -> None:
    clone = tmp_path / "clone"
    make(source.gitdir, source.start, clone)
    assert readable(clone, f"{source.start}:src/app.py")
    assert not readable(clone, source.fix_blob)
    assert git(clone, "log", "--all", "--format=%H").split() == [source.start, source.base]
    assert not has_commit(clone / ".git", source.other)


def test_the_clone_has_no_remotes_alternates_hardlinks_or_hooks(source: Source, tmp_path: Path,
                                                               make: Make) -> None:
    clone = tmp_path / "clone"
    make(source.gitdir, source.start, clone)
    assert git(clone, "remote") == ""
    assert not (clone / ".git" / "objects" / "info" / "alternates").exists()
    assert not (clone / ".git" / "hooks" / "pre-commit").exists()
    assert git(clone, "config", "core.hooksPath") == "/dev/null"
    objects = [p for p in (clone / ".git" / "objects").rglob("*") if p.is_file()]
    assert objects and all(p.stat().st_nlink == 1 for p in objects)
    marker = tmp_path / "hook-ran"
    (clone / "new.txt").write_text("x")
    git(clone, "add", "new.txt")
    git(clone, "commit", "-q", "-m", "agent", env={**GIT_ENV, "HOOK_MARKER": str(marker)})
    assert not marker.exists()


def test_the_clone_is_checked_out_on_the_trial_branch(source: Source, tmp_path: Path,
                                                     make: Make) -> None:
    clone = tmp_path / "clone"
    make(source.gitdir, source.start, clone)
    assert git(clone, "rev-parse", "HEAD") == source.start
    assert git(clone, "symbolic-ref", "--short", "HEAD") == TRIAL_BRANCH
    assert git(clone, "status", "--porcelain") == ""
    assert (clone / "src" / "app.py").read_text() == "print(2)\n"
    assert not (clone / "test" / "test_fix.py").exists()


def test_cloning_leaves_the_members_checkout_unchanged(source: Source, tmp_path: Path) -> None:
    (source.repo / "src" / "app.py").write_text("member's edit\n")
    (source.repo / "notes.txt").write_text("staged\n")
    git(source.repo, "add", "notes.txt")
    (source.repo / "scratch.txt").write_text("untracked\n")
    before = state_of(source.repo)
    make_isolated_clone(source.gitdir, source.start, tmp_path / "clone")
    assert state_of(source.repo) == before
    assert " M src/app.py" in before and "A  notes.txt" in before and "?? scratch.txt" in before


def test_the_callers_git_variables_do_not_leak_into_the_clone(
    source: Source, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", str(source.gitdir))
    monkeypatch.setenv("GIT_WORK_TREE", str(source.repo))
    refs = git(source.repo, "show-ref")
    make_isolated_clone(source.gitdir, source.start, tmp_path / "clone")
    assert git(tmp_path / "clone", "rev-parse", "HEAD") == source.start
    assert git(source.repo, "show-ref") == refs


def test_an_unknown_commit_is_refused_before_anything_is_made(source: Source, tmp_path: Path) -> None:
    with pytest.raises(CommitUnreachable, match="0{40}"):
        make_isolated_clone(source.gitdir, "0" * 40, tmp_path / "clone")
    assert not (tmp_path / "clone").exists()
    with pytest.raises(CommitUnreachable, match="0{40}"):
        fetch_commit(source.gitdir, "0" * 40, tmp_path / "fetched")
    assert list(tmp_path.glob("*fetched*")) == []


def test_clones_from_one_fetch_are_independent_of_it_and_of_each_other(source: Source,
                                                                       tmp_path: Path) -> None:
    template = tmp_path / "fetched"
    fetch_commit(source.gitdir, source.start, template)
    shutil.rmtree(source.repo)  # the source is no longer read: only the fetched git dir is
    first, second = tmp_path / "one", tmp_path / "two"
    make_isolated_clone(Path("/nonexistent"), source.start, first, template=template)
    make_isolated_clone(Path("/nonexistent"), source.start, second, template=template)
    objects = [p for p in (first / ".git" / "objects").rglob("*") if p.is_file()]
    for p in objects:  # what a tool may do to its own clone's objects
        p.chmod(0o644)
        p.write_bytes(b"garbage")
    assert objects and subprocess.run(["git", "fsck"], cwd=first, env=GIT_ENV,
                                      capture_output=True).returncode != 0
    assert git(second, "fsck", "--no-dangling") == "" and readable(second, f"{source.start}:src/app.py")
    assert git(template, "cat-file", "-t", source.start) == "commit"
    assert not readable(template, source.fix_blob)


def test_a_template_that_is_not_there_is_a_git_error_and_leaves_nothing(source: Source,
                                                                        tmp_path: Path) -> None:
    with pytest.raises(GitError, match="no such git dir"):
        make_isolated_clone(source.gitdir, source.start, tmp_path / "clone",
                            template=tmp_path / "missing")
    assert not (tmp_path / "clone").exists()


def test_two_fetches_of_one_commit_at_once_leave_one_whole_git_dir(source: Source,
                                                                   tmp_path: Path) -> None:
    template = tmp_path / "fetched"
    errors: list[BaseException] = []

    def fetch() -> None:
        try:
            fetch_commit(source.gitdir, source.start, template)
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)
    threads = [threading.Thread(target=fetch) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkout", "fetched"]
    make_isolated_clone(source.gitdir, source.start, tmp_path / "clone", template=template)
    assert git(tmp_path / "clone", "rev-parse", "HEAD") == source.start


def test_has_commit_needs_a_full_commit_id(source: Source) -> None:
    assert has_commit(source.gitdir, source.start)
    assert not has_commit(source.gitdir, source.start[:12])
    assert not has_commit(source.gitdir, source.fix_blob)


class Remote:
    """A team repo ("remote") with start and fix, and a checkout that has only start plus a local commit."""

    def __init__(self, root: Path) -> None:
        self.source = Source(root)
        self.url = str(self.source.repo)
        self.checkout = root / "member"
        git(root, "init", "-q", "-b", "main", str(self.checkout))
        git(self.checkout, "fetch", "-q", self.url, self.source.start)
        git(self.checkout, "checkout", "-q", "-b", "main", self.source.start)
        self.local = commit(self.checkout, {"local.txt": "not pushed\n"}, "local")


@pytest.fixture
def remote(tmp_path: Path) -> Remote:
    return Remote(tmp_path)


def test_the_cache_is_the_checkout_when_it_has_every_commit(remote: Remote, tmp_path: Path) -> None:
    cache = CommitCache(tmp_path / "cache")
    found = cache.source_for(remote.url, [remote.source.start, remote.local], remote.checkout)
    assert found.resolve() == (remote.checkout / ".git").resolve()
    assert not (tmp_path / "cache").exists()


def test_a_commit_missing_from_the_checkout_is_fetched_by_sha(remote: Remote, tmp_path: Path) -> None:
    cache = CommitCache(tmp_path / "cache")
    shas = [remote.local, remote.source.fix]
    found = cache.source_for(remote.url, shas, remote.checkout)
    assert found == cache.path_for(remote.url) and found.is_relative_to(tmp_path / "cache")
    assert all(has_commit(found, sha) for sha in shas)
    assert "count: 0" in git(found, "count-objects", "-v").splitlines()
    make_isolated_clone(found, remote.source.start, tmp_path / "clone")
    assert not readable(tmp_path / "clone", remote.source.fix)


def test_a_cached_commit_is_not_fetched_again(remote: Remote, tmp_path: Path) -> None:
    cache = CommitCache(tmp_path / "cache")
    first = cache.source_for(remote.url, [remote.source.fix], None)
    os.rename(remote.source.repo, tmp_path / "gone")
    assert cache.source_for(remote.url, [remote.source.fix], None) == first


def test_an_unknown_sha_is_unreachable_and_named(remote: Remote, tmp_path: Path) -> None:
    unknown = "1234567890abcdef" * 2 + "12345678"
    with pytest.raises(CommitUnreachable) as raised:
        CommitCache(tmp_path / "cache").source_for(remote.url, [remote.source.fix, unknown], remote.checkout)
    assert unknown in str(raised.value) and remote.url in str(raised.value)
    assert (raised.value.sha, raised.value.repo) == (unknown, remote.url)


def test_trials_preparing_at_once_share_one_cache(remote: Remote, tmp_path: Path) -> None:
    cache = CommitCache(tmp_path / "cache")
    results: list[Path | BaseException] = []

    def prepare() -> None:
        try:
            results.append(cache.source_for(remote.url, [remote.source.fix, remote.source.other], None))
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            results.append(error)

    threads = [threading.Thread(target=prepare) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [cache.path_for(remote.url)] * 6


def test_read_files_at_reads_bytes_and_modes(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "-q", str(repo))
    (repo / "bin").mkdir()
    (repo / "bin" / "run").write_text("#!/bin/sh\n")
    (repo / "bin" / "run").chmod(0o755)
    (repo / "link").symlink_to("bin/run")
    sha = commit(repo, {"a.txt": "a\n"}, "one")
    assert read_files_at(repo / ".git", sha, ["a.txt", "bin/run", "link"]) == {
        "a.txt": FileBlob(data=b"a\n", mode=0o100644),
        "bin/run": FileBlob(data=b"#!/bin/sh\n", mode=0o100755),
        "link": FileBlob(data=b"bin/run", mode=0o120000),
    }
    with pytest.raises(AddPathMissing, match=f"bin/missing is not a file at {sha}"):
        read_files_at(repo / ".git", sha, ["bin/missing"])
    with pytest.raises(AddPathMissing, match="found a directory") as raised:
        read_files_at(repo / ".git", sha, ["bin"])
    assert (raised.value.path, raised.value.commit) == ("bin", sha)


def test_files_matching_at_selects_by_pathspec(source: Source) -> None:
    found = files_matching_at(source.gitdir, source.fix, ["test/**", "src/*.py"])
    assert sorted(found) == ["src/app.py", "test/test_app.py", "test/test_fix.py"]
    assert found["test/test_fix.py"] == FileBlob(data=b"SECRET fix test\n", mode=0o100644)
    assert files_matching_at(source.gitdir, source.start, ["test/test_fix.py"]) == {}


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_files_matching_at_reads_every_matching_file_of_a_large_tree(tmp_path: Path) -> None:
    """Correctness only: the speed is measured in perf/bench_clone.py, not asserted here."""
    repo = pygit2.init_repository(str(tmp_path / "big"), bare=True)
    index = pygit2.Index()
    for n in range(2000):
        blob = repo.create_blob(f"file {n}\n".encode())
        index.add(pygit2.IndexEntry(f"{'test' if n % 2 else 'src'}/d{n % 40}/f{n}.py", blob, 0o100644))
    tree = index.write_tree(repo)
    sig = pygit2.Signature("t", "t@example.com")
    sha = str(repo.create_commit("refs/heads/main", sig, sig, "big", tree, []))
    found = files_matching_at(Path(repo.path), sha, ["test/**", "**/f2.py"])
    assert len(found) == 1001
    assert found["src/d2/f2.py"].data == b"file 2\n"


def test_credentials_in_the_repo_url_stay_out_of_the_error(tmp_path: Path) -> None:
    url = "nosuchscheme://member:s3cret-token@example.invalid/acme/api.git"
    with pytest.raises(CommitUnreachable) as raised:
        CommitCache(tmp_path / "cache").source_for(url, ["ab" * 20], None)
    messages = f"{raised.value} {raised.value.__cause__}"
    assert "s3cret-token" not in messages and "ab" * 20 in messages and "example.invalid" in messages
