"""Isolated clones at a commit, the commit cache they come from, and files read at a commit."""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import msgspec
import pygit2

from edge.errors import AddPathMissing, CommitUnreachable, GitError
from suites.pathspec import could_match_inside, matches_any

__all__ = [
    "TRIAL_BRANCH",
    "CommitCache",
    "FileBlob",
    "files_matching_at",
    "git_env",
    "has_commit",
    "make_isolated_clone",
    "read_files_at",
]

TRIAL_BRANCH = "armbench-trial"
_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_LINK, _EXECUTABLE, _REGULAR = 0o120000, 0o100755, 0o100644
_CREDENTIALS = re.compile(r"([a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)
_TRANSPORT_VARS = ("GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_PROXY_COMMAND")
_FETCH = [
    "fetch",
    "--no-tags",
    "--no-write-fetch-head",
    "--no-recurse-submodules",
    "--no-auto-maintenance",
    "-q",
]


class FileBlob(msgspec.Struct, frozen=True, kw_only=True):
    """A file's bytes and git mode at a commit."""

    data: bytes
    """The file's bytes, or a link's target."""
    mode: int
    """0o100644, 0o100755, or 0o120000 for a symbolic link."""


def git_env(*, network: bool = False) -> dict[str, str]:
    """The caller's environment without its `GIT_*` variables, no system config and no prompts."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GIT_") or (network and k in _TRANSPORT_VARS)
    }
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    if not network:  # a local clone needs no credentials: the member's ~/.gitconfig stays out of it too
        env["GIT_CONFIG_GLOBAL"] = os.devnull
    return env


def _git(*args: str, cwd: Path | None = None, network: bool = False) -> None:
    command = ["git", "-c", "core.hooksPath=/dev/null", *args]
    env = git_env(network=network)
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        detail = " / ".join(done.stderr.decode(errors="replace").strip().splitlines()[-3:]) or "no message"
        raise GitError(
            expected=_redact(f"`{' '.join(command)}` to succeed in {cwd or Path.cwd()}"),
            found=_redact(f"exit {done.returncode}: {detail}"),
            fix="Check that git 2.29 or later is installed and the repository is readable.",
        )


def _redact(text: str) -> str:
    """Messages may be recorded: drop credentials written into a URL."""
    return _CREDENTIALS.sub(r"\1***@", text)


def has_commit(gitdir: Path, sha: str) -> bool:
    """Whether the repository at `gitdir` holds the commit with the full id `sha`."""
    if _FULL_SHA.fullmatch(sha) is None:
        return False
    try:
        repo = pygit2.Repository(str(gitdir))
    except pygit2.GitError:
        return False
    return isinstance(repo.get(sha), pygit2.Commit)


def make_isolated_clone(source_gitdir: Path, commit: str, dest: Path) -> None:
    """Make `dest` a new repository holding only `commit` and its ancestors, checked out, hooks off."""
    if not has_commit(source_gitdir, commit):
        raise CommitUnreachable(commit, str(source_gitdir))
    existed = dest.exists()
    if existed and any(dest.iterdir()):
        raise GitError(
            expected=f"an empty or missing {dest}", found="files in it", fix="Pick a new directory."
        )
    try:
        _git("init", "--template=", "-q", "-b", TRIAL_BRANCH, str(dest))
        with (dest / ".git" / "config").open("a") as config:
            config.write("[core]\n\thooksPath = /dev/null\n")
        _git("-c", "protocol.version=2", *_FETCH, str(source_gitdir), commit, cwd=dest)
        _git("-c", "advice.detachedHead=false", "checkout", "-q", "-B", TRIAL_BRANCH, commit, cwd=dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        if existed:
            dest.mkdir()
        raise


class CommitCache:
    """Finds a git dir holding given commits: the member's checkout, else a packed bare cache repo."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._locks: dict[Path, threading.Lock] = {}
        self._guard = threading.Lock()

    def path_for(self, repo_url: str) -> Path:
        """The cache repo for `repo_url`, named by a hash of the URL."""
        return self._root / f"{hashlib.sha256(repo_url.encode()).hexdigest()[:24]}.git"

    def source_for(self, repo_url: str, shas: Sequence[str], checkout: Path | None) -> Path:
        """A git dir holding every sha: the checkout's if it has them all, else the cache, fetched by SHA."""
        local = _usable_gitdir(checkout) if checkout is not None else None
        if local is not None and all(has_commit(local, sha) for sha in shas):
            return local
        cache = self.path_for(repo_url)
        with self._lock(cache):
            missing = [sha for sha in shas if not has_commit(cache, sha)]
            for sha in missing:
                _fetch_by_sha(cache, sha, repo_url, local)
            if missing:
                _git("repack", "-adq", cwd=cache)
        return cache

    @contextmanager
    def _lock(self, cache: Path) -> Iterator[None]:
        """One thread and one process at a time per cache repo; the repo is made on first use."""
        with self._guard:
            lock = self._locks.setdefault(cache, threading.Lock())
        cache.parent.mkdir(parents=True, exist_ok=True)
        with lock, open(cache.with_suffix(".lock"), "w") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            if not (cache / "HEAD").exists():
                _git("init", "--bare", "--template=", "-q", str(cache))
                _git("config", "gc.auto", "0", cwd=cache)
            yield


def _fetch_by_sha(cache: Path, sha: str, repo_url: str, local: Path | None) -> None:
    """Fetch one commit under a ref of its own (so repack keeps it), offline when the checkout has it."""
    refspec = f"+{sha}:refs/armbench/commits/{sha}"
    if local is not None and has_commit(local, sha):
        return _git(*_FETCH, str(local), refspec, cwd=cache)
    try:
        _git(*_FETCH, repo_url, refspec, cwd=cache, network=True)
    except GitError as error:
        raise CommitUnreachable(sha, _redact(repo_url)) from error


def _usable_gitdir(checkout: Path) -> Path | None:
    """The checkout's git dir, unless it is shallow or partial (its ancestors may be missing)."""
    found = pygit2.discover_repository(str(checkout))
    if found is None:
        return None
    repo = pygit2.Repository(found)
    return None if repo.is_shallow or "extensions.partialclone" in repo.config else Path(found)


def read_files_at(gitdir: Path, commit: str, paths: Sequence[str]) -> dict[str, FileBlob]:
    """The bytes and mode of each path at `commit`; `AddPathMissing` when one is not a file there."""
    tree = _tree_at(gitdir, commit)
    return {path: _file_at(tree, path, commit) for path in paths}


def files_matching_at(gitdir: Path, commit: str, patterns: Sequence[str]) -> dict[str, FileBlob]:
    """Every file at `commit` whose path matches one of the `:(glob)` pathspec `patterns`."""
    tree = _tree_at(gitdir, commit)
    found: dict[str, FileBlob] = {}
    _collect(tree, "", tuple(patterns), found)
    return found


def _collect(tree: pygit2.Tree, prefix: str, patterns: tuple[str, ...], found: dict[str, FileBlob]) -> None:
    """Walk the tree, skipping subtrees no pattern reaches; submodules are not files."""
    for entry in tree:
        path = prefix + (entry.name or "")
        if isinstance(entry, pygit2.Tree):
            if could_match_inside(patterns, path):
                _collect(entry, path + "/", patterns, found)
        elif isinstance(entry, pygit2.Blob) and matches_any(patterns, path):
            found[path] = FileBlob(data=entry.data, mode=_mode(entry.filemode))


def _tree_at(gitdir: Path, commit: str) -> pygit2.Tree:
    try:
        repo = pygit2.Repository(str(gitdir))
    except pygit2.GitError as error:
        raise GitError(
            expected=f"a git repository at {gitdir}", found=str(error), fix="Pass a git dir."
        ) from None
    found = repo.get(commit) if _FULL_SHA.fullmatch(commit) else None
    if not isinstance(found, pygit2.Commit):
        raise CommitUnreachable(commit, str(gitdir))
    return found.tree


def _file_at(tree: pygit2.Tree, path: str, commit: str) -> FileBlob:
    try:
        entry = tree[path]
    except (KeyError, ValueError):
        raise AddPathMissing(path, commit) from None
    if not isinstance(entry, pygit2.Blob):
        kind = "a directory" if isinstance(entry, pygit2.Tree) else "a submodule"
        raise AddPathMissing(path, commit, found=kind)
    return FileBlob(data=entry.data, mode=_mode(entry.filemode))


def _mode(filemode: int) -> int:
    """Git's three file modes; a legacy group-writable mode reads as 0o100644."""
    if filemode == _LINK:
        return _LINK
    return _EXECUTABLE if filemode & 0o111 else _REGULAR
