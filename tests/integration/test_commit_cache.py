"""The commit cache's integrity: a corrupted cache repo is rebuilt, and a failed fetch says why.

Real repositories made with the git CLI; the cache is corrupted the ways a process running as the
member can: garbage over a blob in its pack, a pack that no longer matches its index, objects
deleted. The remote is a path, taken away to play a remote that cannot be reached.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gitrun import GIT_ENV, git

from armbench.edge.errors import CommitNotOnRemote, GitError, RemoteUnreachable
from armbench.edge.gitclone import CommitCache, has_commit, make_isolated_clone

UNKNOWN = "1234567890abcdef" * 2 + "12345678"


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


class Upstream:
    """A project repo (the suite's `repo`) with three commits, and a cache filled with its tip."""

    def __init__(self, root: Path) -> None:
        self.repo = root / "upstream"
        git(root, "init", "-q", "-b", "main", str(self.repo))
        for n in range(3):
            self.tip = commit(self.repo, {f"f{n}.txt": f"file {n}\n" * 40}, f"c{n}")
        self.url = str(self.repo)
        self.notes: list[str] = []
        self.cache = CommitCache(root / "cache", notify=self.notes.append)
        self.gitdir = self.cache.source_for(self.url, [self.tip], None)

    def fresh(self) -> CommitCache:
        """A new cache object over the same folder: what the next run makes."""
        return CommitCache(self.gitdir.parent, notify=self.notes.append)

    @property
    def pack(self) -> Path:
        return next((self.gitdir / "objects" / "pack").glob("*.pack"))

    def garble_a_blob(self) -> None:
        """Flip the bytes of one blob in the pack: the commit still reads, a clone does not."""
        index = next((self.gitdir / "objects" / "pack").glob("*.idx"))
        listing = subprocess.run(["git", "verify-pack", "-v", str(index)], cwd=self.gitdir, env=GIT_ENV,
                                 capture_output=True, text=True, check=True).stdout
        sha, _, _, size, offset = next(line.split()[:5] for line in listing.splitlines() if " blob " in line)
        data = bytearray(self.pack.read_bytes())
        for i in range(int(offset) + 3, int(offset) + int(size)):
            data[i] ^= 0x55
        self.pack.chmod(0o644)
        self.pack.write_bytes(bytes(data))

    def garble_the_pack_end(self) -> None:
        """Change the pack's last bytes: it no longer matches its index, and nothing in it reads."""
        data = bytearray(self.pack.read_bytes())
        data[-5] ^= 0xFF
        self.pack.chmod(0o644)
        self.pack.write_bytes(bytes(data))

    def delete_objects(self) -> None:
        for path in (self.gitdir / "objects" / "pack").iterdir():
            path.unlink()

    def take_away(self) -> None:
        shutil.move(self.repo, self.repo.with_name("gone"))


@pytest.fixture
def upstream(tmp_path: Path) -> Upstream:
    return Upstream(tmp_path)


def test_a_garbled_blob_fails_the_clone_and_the_cache_is_rebuilt_for_the_retry(
        upstream: Upstream, tmp_path: Path) -> None:
    upstream.garble_a_blob()
    cache = upstream.fresh()
    source = cache.source_for(upstream.url, [upstream.tip], None)  # the commit itself still reads
    assert source == upstream.gitdir and cache.rebuilt == {}
    with pytest.raises(GitError):
        make_isolated_clone(source, upstream.tip, tmp_path / "clone")

    assert cache.rebuild_if_corrupt(upstream.url, [upstream.tip], None)

    assert list(cache.rebuilt) == [upstream.gitdir]
    assert cache.rebuilt[upstream.gitdir].startswith("git fsck: ")
    assert upstream.notes == [f"The commit cache {upstream.gitdir} failed its integrity check "
                              f"({cache.rebuilt[upstream.gitdir]}); rebuilt it from the checkout "
                              "and the suite's repo."]
    make_isolated_clone(source, upstream.tip, tmp_path / "clone")
    assert (tmp_path / "clone" / "f0.txt").read_text() == "file 0\n" * 40
    assert git(upstream.gitdir, "fsck", "--no-dangling", "--no-progress", check=True) == ""


@pytest.mark.parametrize("corrupt", ["garble_the_pack_end", "delete_objects"])
def test_a_cache_whose_commits_do_not_read_is_rebuilt_before_use(upstream: Upstream, corrupt: str,
                                                                  tmp_path: Path) -> None:
    getattr(upstream, corrupt)()
    cache = upstream.fresh()

    assert cache.source_for(upstream.url, [upstream.tip], None) == upstream.gitdir

    ref = f"refs/armbench/commits/{upstream.tip}"
    assert cache.rebuilt == {upstream.gitdir: f"{ref} names a commit the cache cannot read"}
    assert has_commit(upstream.gitdir, upstream.tip)
    make_isolated_clone(upstream.gitdir, upstream.tip, tmp_path / "clone")


def test_a_sound_cache_is_not_rebuilt_when_a_clone_fails_for_another_reason(upstream: Upstream) -> None:
    cache = upstream.fresh()
    cache.source_for(upstream.url, [upstream.tip], None)
    assert not cache.rebuild_if_corrupt(upstream.url, [upstream.tip], None)
    assert cache.rebuilt == {} and upstream.notes == []


def test_a_corrupted_cache_whose_remote_is_gone_says_it_was_rebuilt_and_the_remote_not_reached(
        upstream: Upstream) -> None:
    upstream.garble_the_pack_end()
    upstream.take_away()
    with pytest.raises(RemoteUnreachable) as raised:
        upstream.fresh().source_for(upstream.url, [upstream.tip], None)
    error = raised.value
    assert error.code == "remote_unreachable" and (error.sha, error.repo) == (upstream.tip, upstream.url)
    assert str(error).startswith(
        f"Expected to fetch commit {upstream.tip} from {upstream.url}, found the commit cache failed "
        f"its integrity check (refs/armbench/commits/{upstream.tip} names a commit the cache cannot "
        f"read) and was rebuilt; then {upstream.url} could not be reached: ")
    assert str(error).endswith(". Check the suite's repo, the network and your git credentials for "
                               "it, or run in a checkout that already has the commit.")


def test_a_commit_the_remote_does_not_have_is_named_as_such(upstream: Upstream) -> None:
    with pytest.raises(CommitNotOnRemote) as raised:
        upstream.fresh().source_for(upstream.url, [upstream.tip, UNKNOWN], None)
    error = raised.value
    assert error.code == "commit_not_on_remote" and (error.sha, error.repo) == (UNKNOWN, upstream.url)
    assert str(error).startswith(
        f"Expected commit {UNKNOWN} in {upstream.url}, found {upstream.url} answered, but has no such "
        "commit (or does not serve it by SHA): exit 128: ")
    assert str(error).endswith(f". Push commit {UNKNOWN} to {upstream.url}, or fix the task's commit.")


def test_a_remote_that_cannot_be_reached_is_named_as_such(tmp_path: Path) -> None:
    url = "https://example.invalid/acme/api.git"
    with pytest.raises(RemoteUnreachable) as raised:
        CommitCache(tmp_path / "cache").source_for(url, [UNKNOWN], None)
    assert str(raised.value).startswith(
        f"Expected to fetch commit {UNKNOWN} from {url}, found {url} could not be reached: ")
    assert "the commit cache" not in str(raised.value)
