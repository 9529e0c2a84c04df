"""Isolated clones at a commit, the commit cache they come from, and files read at a commit."""

from __future__ import annotations

import errno
import fcntl
import functools
import hashlib
import os
import re
import select
import shutil
import stat as stat_module
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import msgspec
import pygit2

from armbench.edge.errors import (
    AddPathMissing,
    CommitNotOnRemote,
    CommitUnreachable,
    GitError,
    RemoteUnreachable,
)
from armbench.edge.keptindex import KeptIndex, Stamp, read_kept, stamp_of
from armbench.edge.overlay import entered, joined
from armbench.edge.tree import large_files, lstats, remove_tree
from armbench.suites.pathspec import could_match_inside, matches_any

__all__ = [
    "DIFF_BUDGET",
    "DIFF_FILE_LIMIT",
    "DIFF_TIMEOUT_S",
    "GIT_READ_ERRORS",
    "DiffLimits",
    "SAFE_GIT_CONFIG",
    "apply_diff",
    "blobs_at",
    "changed_files",
    "paths_at",
    "keep_index",
    "attributes_along",
    "head_commit",
    "work_diff",
    "TRIAL_BRANCH",
    "CommitCache",
    "FileBlob",
    "fetch_commit",
    "files_matching_at",
    "git_env",
    "has_commit",
    "inside",
    "make_isolated_clone",
    "read_files_at",
    "renew_git_dir",
    "root_names_at",
    "safe_git_env",
    "settled_changes",
    "Settled",
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


SAFE_GIT_CONFIG: dict[str, str] = {
    "core.fsmonitor": "false",
    "core.hooksPath": os.devnull,
    "core.attributesFile": os.devnull,
}
"""Settings given to every git armbench, setup and the check start, over any repository's own:
no fsmonitor hook, no hooks, no attributes file of the member's. (`diff.external` and filter or
textconv drivers have no value that turns them off: an empty `diff.external` makes `git diff`
fail. They stay off because the only config git reads is armbench's: no system or global file,
and a trial's check runs on a git dir armbench made, `renew_git_dir`.)"""


def safe_git_env() -> dict[str, str]:
    """The variables that give every git a process starts `SAFE_GIT_CONFIG` (as command-line
    config, which outranks every file), with no system or global config file."""
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
           "GIT_CONFIG_COUNT": str(len(SAFE_GIT_CONFIG))}
    for n, (key, value) in enumerate(SAFE_GIT_CONFIG.items()):
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = key, value
    return env


def git_env(*, network: bool = False) -> dict[str, str]:
    """The caller's environment without its `GIT_*` variables, no system config, no prompts, and
    `SAFE_GIT_CONFIG` over every repository's own."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GIT_") or (network and k in _TRANSPORT_VARS)
    }
    env.update(safe_git_env())
    env.update(GIT_TERMINAL_PROMPT="0")
    if network:  # a fetch from the suite's repo may need the member's ~/.gitconfig (credentials,
        del env["GIT_CONFIG_GLOBAL"]  # proxy); a local clone needs none of it
    return env


def inside(worktree: Path) -> tuple[list[str], Path | None, Path]:
    """How a git process reaches `worktree`: the command line prefix, the folder it starts in
    on the host, and the path it names the work tree by. A clone that is an overlay
    (`edge.overlay`) is reached only inside its holder's namespaces: git, like libgit2, resolves
    a work tree's path, and `/proc/<pid>/root` resolves to the host's `/`."""
    into = entered(worktree)
    if into is None:
        return [], worktree, worktree
    # nsenter opens --wd's path before it enters: the host's path, through the holder's root
    return [*into.enter[:-1], f"--wd={worktree}", "--"], None, into.inner(worktree)


def _git(*args: str, cwd: Path | None = None, network: bool = False) -> None:
    prefix, start, _ = inside(cwd) if cwd is not None else ([], None, None)
    command = ["git", "-c", "core.hooksPath=/dev/null", *args]
    env = git_env(network=network)
    done = subprocess.run([*prefix, *command], cwd=start, env=env, capture_output=True,
                          stdin=subprocess.DEVNULL)
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


def head_commit(worktree: Path) -> str:
    """The commit a clone's HEAD points at."""
    prefix, start, named = inside(worktree)
    if not prefix:
        return str(pygit2.Repository(str(worktree)).head.target)
    threads = joined(worktree)  # an overlay this process may reach by its path: libgit2 there
    if threads is not None:
        return threads.run(worktree, lambda path: str(pygit2.Repository(str(path)).head.target))
    done = subprocess.run([*prefix, "git", "-c", "core.hooksPath=/dev/null", "rev-parse", "--verify",
                           "HEAD^{commit}"], cwd=start, env=git_env(), capture_output=True,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise pygit2.GitError(f"no HEAD in {named}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode().strip()


GIT_READ_ERRORS: tuple[type[Exception], ...] = (GitError, CommitUnreachable, pygit2.GitError)
"""What a clone or read from a commit source raises when the source is broken."""


def has_commit(gitdir: Path, sha: str) -> bool:
    """Whether the repository at `gitdir` holds the commit with the full id `sha`."""
    if _FULL_SHA.fullmatch(sha) is None:
        return False
    try:
        repo = pygit2.Repository(str(gitdir))
    except pygit2.GitError:
        return False
    try:
        return isinstance(repo.get(sha), pygit2.Commit)
    except pygit2.GitError:  # a corrupted object database: the commit does not read
        return False


def make_isolated_clone(source_gitdir: Path, commit: str, dest: Path, *,
                        template: Path | None = None) -> None:
    """Make `dest` a new repository holding only `commit` and its ancestors, checked out, hooks off.

    `template`: the git dir `fetch_commit` made for this commit, copied (never linked) in place
    of the init and the fetch, which then run once per commit rather than once per clone."""
    if template is None and not has_commit(source_gitdir, commit):
        raise CommitUnreachable(commit, str(source_gitdir))
    existed = dest.exists()
    if existed and any(dest.iterdir()):
        raise GitError(
            expected=f"an empty or missing {dest}", found="files in it", fix="Pick a new directory."
        )
    try:
        if template is None:
            _init_and_fetch(source_gitdir, commit, dest)
        else:
            _copy_template(template, dest / ".git")
        # no attributes but the commit's own: the member's ~/.config/git/attributes (read even
        # without a global config) never changes a trial's bytes
        _git("-c", "advice.detachedHead=false", "-c", f"core.attributesFile={os.devnull}",
             "checkout", "-q", "-B", TRIAL_BRANCH, commit, cwd=dest)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        if existed:
            dest.mkdir()
        raise


def renew_git_dir(worktree: Path, commit: str, *, template: Path, index: Path | None,
                  trash: Path) -> None:
    """Give a clone a git dir armbench made, in place of whatever is at `worktree/.git` now (a
    folder, a `gitdir:` file, a link: a tool could have written any of them, with hooks, an
    fsmonitor, filters or an external diff in its config): `template` (`fetch_commit`'s git dir
    of `commit`) copied, the trial branch at `commit`, and the index `index` (the clone's as
    armbench made it, `keep_index`), else read from `commit`. The work tree is not touched: git
    compares it with that index, so `git status` and `git diff` show what the tool changed.

    The old `.git` is moved, never followed, to `trash` (a path that must not exist yet, on the
    same file system, outside every sandbox), for whoever removes the trial's folders; so is
    every `.git` below the top (a repository the tool made inside its clone, which a git run
    from that folder would find first), each to `trash-nested-<n>`."""
    gitdir = worktree / ".git"
    trash.parent.mkdir(parents=True, exist_ok=True)
    try:
        _put_away(gitdir, trash)  # a link or a file is moved as itself
    except FileNotFoundError:
        pass
    for n, nested in enumerate(_nested_git(worktree)):
        _put_away(Path(nested), trash.with_name(f"{trash.name}-nested-{n}"))
    _copy_template(template, gitdir)
    heads = gitdir / "refs" / "heads"
    heads.mkdir(parents=True, exist_ok=True)
    (heads / TRIAL_BRANCH).write_text(f"{commit}\n")
    (gitdir / "HEAD").write_text(f"ref: refs/heads/{TRIAL_BRANCH}\n")
    if index is not None:
        try:
            shutil.copyfile(index, gitdir / "index")
            return
        except OSError:
            pass
    _git("read-tree", commit, cwd=worktree)


def _put_away(old: Path, trash: Path) -> None:
    """Move `old` to `trash`; where they are on two file systems (a clone that is an overlay
    is a file system of its own), remove it instead, following no link."""
    try:
        os.rename(old, trash)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        remove_tree(old)


def _nested_git(worktree: Path) -> list[str]:
    """Every entry named `.git` below the work tree's top (a folder, a file or a link), found
    by a walk that follows no link and keeps no recursion (a folder it cannot read is one git
    cannot read either)."""
    found: list[str] = []
    folders = [str(worktree)]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.name == ".git":
                        found.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
        except OSError:
            continue
    return found


def fetch_commit(source_gitdir: Path, commit: str, dest: Path) -> None:
    """Make `dest` the git dir that clones of `commit` start from (`make_isolated_clone`'s
    `template`): a new repository, hooks off, with `commit` and its ancestors fetched from
    `source_gitdir` and nothing else, as the init and the fetch of a clone leave it (git's own
    fetch: every object's hash checked, the history's connectivity too). Made beside `dest` and
    renamed into place, so it is found whole or not at all; when two make it at once, the first
    one's stays."""
    if not has_commit(source_gitdir, commit):
        raise CommitUnreachable(commit, str(source_gitdir))
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        _init_and_fetch(source_gitdir, commit, work)
        try:
            (work / ".git").rename(dest)
        except OSError:
            if not (dest / "HEAD").is_file():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _init_and_fetch(source_gitdir: Path, commit: str, worktree: Path) -> None:
    """A new repository at `worktree`, hooks off, holding `commit` and its ancestors (no refs)."""
    _git("init", "--template=", "-q", "-b", TRIAL_BRANCH, str(worktree))
    with (worktree / ".git" / "config").open("a") as config:
        config.write("[core]\n\thooksPath = /dev/null\n")
    _git("-c", "protocol.version=2", *_FETCH, str(source_gitdir), commit, cwd=worktree)


def _copy_template(template: Path, gitdir: Path) -> None:
    """Copy a `fetch_commit` git dir (its files copied, never linked: a clone's objects are its
    own); one that is not there is a GitError, as a failed fetch would be."""
    if not (template / "HEAD").is_file():
        raise GitError(expected=f"the git dir made for the clone at {template}",
                       found="no such git dir", fix="Make it again with fetch_commit.")
    shutil.copytree(template, gitdir)


class CommitCache:
    """Finds a git dir holding given commits: the member's checkout, else a packed bare cache repo.

    A cache repo is checked before its first use by this instance (once per run): it must open,
    and every commit it was asked for before (its `refs/armbench/commits/<sha>`) must read. A clone
    or read from it that fails later gets `git fsck` (`rebuild_if_corrupt`). A cache that fails
    either check is removed and refetched, never trusted again.
    """

    def __init__(self, root: Path, *, notify: Callable[[str], None] | None = None) -> None:
        self._root = root
        self._notify = notify
        self._locks: dict[Path, threading.Lock] = {}
        self._guard = threading.Lock()
        self._checked: set[Path] = set()
        self.rebuilt: dict[Path, str] = {}
        """Cache repo -> the problem it was rebuilt for, by this instance."""

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
            if cache not in self._checked:
                self._checked.add(cache)
                problem = _quick_problem(cache, shas)
                if problem is not None:
                    self._rebuild(cache, problem)
            self._fill(cache, repo_url, shas, local)
        return cache

    def rebuild_if_corrupt(self, repo_url: str, shas: Sequence[str], checkout: Path | None) -> bool:
        """After a clone or read from the cache failed: whether to try again, because `git fsck`
        found the cache corrupted and it was rebuilt now, or it was rebuilt since this instance
        first used it. False means the cache is sound: the failure was not its."""
        cache = self.path_for(repo_url)
        local = _usable_gitdir(checkout) if checkout is not None else None
        with self._lock(cache):
            problem = _fsck_problem(cache)
            if problem is None:
                return cache in self.rebuilt
            self._rebuild(cache, problem)
            self._fill(cache, repo_url, shas, local)
        return True

    def _fill(self, cache: Path, repo_url: str, shas: Sequence[str], local: Path | None) -> None:
        """Fetch the shas the cache lacks; a failed fetch first asks whether the cache is to blame."""
        missing = [sha for sha in shas if not has_commit(cache, sha)]
        for sha in missing:
            try:
                _fetch_by_sha(cache, sha, repo_url, local, self.rebuilt.get(cache))
            except CommitUnreachable:
                problem = None if cache in self.rebuilt else _fsck_problem(cache)
                if problem is None:
                    raise
                self._rebuild(cache, problem)
                return self._fill(cache, repo_url, shas, local)
        if missing:
            _git("repack", "-adq", cwd=cache)

    def _rebuild(self, cache: Path, problem: str) -> None:
        """Remove a corrupted cache repo and make it anew, empty; the caller refetches."""
        shutil.rmtree(cache, ignore_errors=True)
        _init_cache(cache)
        self.rebuilt[cache] = problem
        if self._notify is not None:
            self._notify(f"The commit cache {cache} failed its integrity check ({problem}); "
                         "rebuilt it from the checkout and the suite's repo.")

    @contextmanager
    def _lock(self, cache: Path) -> Iterator[None]:
        """One thread and one process at a time per cache repo; the repo is made on first use."""
        with self._guard:
            lock = self._locks.setdefault(cache, threading.Lock())
        cache.parent.mkdir(parents=True, exist_ok=True)
        with lock, open(cache.with_suffix(".lock"), "w") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            if not (cache / "HEAD").exists():
                _init_cache(cache)
            yield


def _init_cache(cache: Path) -> None:
    _git("init", "--bare", "--template=", "-q", str(cache))
    _git("config", "gc.auto", "0", cwd=cache)


def _quick_problem(cache: Path, shas: Sequence[str]) -> str | None:
    """What is wrong with a cache repo, found cheaply: it does not open, or a commit it once
    fetched (it keeps a ref for each) does not read. None when nothing is."""
    try:
        repo = pygit2.Repository(str(cache))
        kept = set(repo.references)
    except pygit2.GitError as error:
        return f"it does not open as a git repository: {error}"
    for sha in shas:
        ref = f"refs/armbench/commits/{sha}"
        if ref in kept and not has_commit(cache, sha):
            return f"{ref} names a commit the cache cannot read"
    return None


def _fsck_problem(cache: Path) -> str | None:
    """What `git fsck` finds wrong with a cache repo (every object read), or None."""
    command = ["git", "fsck", "--no-dangling", "--no-progress"]
    done = subprocess.run(command, cwd=cache, env=git_env(), capture_output=True, stdin=subprocess.DEVNULL)
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.decode(errors="replace").splitlines()
             if line.strip() and not line.startswith("notice:")]
    return "git fsck: " + (" / ".join(lines[:2]) or f"exit {done.returncode}")


def _fetch_by_sha(cache: Path, sha: str, repo_url: str, local: Path | None, rebuilt: str | None) -> None:
    """Fetch one commit under a ref of its own (so repack keeps it), offline when the checkout has it;
    a failure says whether the repo could not be reached or does not have the commit."""
    refspec = f"+{sha}:refs/armbench/commits/{sha}"
    if local is not None and has_commit(local, sha):
        return _git(*_FETCH, str(local), refspec, cwd=cache)
    try:
        _git(*_FETCH, repo_url, refspec, cwd=cache, network=True)
    except GitError as error:
        unreachable = _unreachable(repo_url, cache)
        if unreachable is not None:
            raise RemoteUnreachable(sha, _redact(repo_url), detail=unreachable, rebuilt=rebuilt) from error
        raise CommitNotOnRemote(sha, _redact(repo_url), detail=error.found, rebuilt=rebuilt) from error


def _unreachable(repo_url: str, cwd: Path) -> str | None:
    """Why `git ls-remote` cannot reach the repo (git's last lines, redacted), or None if it can."""
    done = subprocess.run(["git", "ls-remote", repo_url, "HEAD"], cwd=cwd, env=git_env(network=True),
                          capture_output=True, stdin=subprocess.DEVNULL)
    if done.returncode == 0:
        return None
    lines = done.stderr.decode(errors="replace").strip().splitlines()
    said = [line for line in lines if line.startswith(("fatal:", "error:"))][:2] or lines[-2:]
    return _redact(" / ".join(said).rstrip(".") or f"git ls-remote exit {done.returncode}")


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


def blobs_at(gitdir: Path, commit: str, paths: Collection[str]) -> dict[str, bytes | None]:
    """Each path's bytes at `commit`, None where it is no regular file there."""
    tree = _tree_at(gitdir, commit)
    found: dict[str, bytes | None] = {}
    for path in paths:
        try:
            entry = tree[path]
        except (KeyError, ValueError):
            entry = None
        found[path] = entry.data if isinstance(entry, pygit2.Blob) and entry.filemode in (
            0o100644, 0o100755) else None
    return found


def changed_files(gitdir: Path, old: str, new: str) -> dict[str, tuple[bytes | None, bytes | None]]:
    """Each regular file that differs between two commits, with its bytes at each (None: not
    there); links and submodules left out, renames read as a removal and an addition."""
    repo = pygit2.Repository(str(gitdir))
    diff = _tree_at(gitdir, old).diff_to_tree(_tree_at(gitdir, new))
    found: dict[str, tuple[bytes | None, bytes | None]] = {}

    def data(side: pygit2.DiffFile) -> bytes | None:
        if side.id == pygit2.Oid(hex="0" * 40) or side.mode not in (0o100644, 0o100755):
            return None
        blob = repo[side.id]
        return blob.data if isinstance(blob, pygit2.Blob) else None

    for delta in diff.deltas:
        if {delta.old_file.mode, delta.new_file.mode} - {0, 0o100644, 0o100755}:
            continue  # a link or a submodule on either side
        if delta.old_file.path != delta.new_file.path:
            found[delta.old_file.path] = (data(delta.old_file), None)
            found[delta.new_file.path] = (None, data(delta.new_file))
        else:
            found[delta.new_file.path] = (data(delta.old_file), data(delta.new_file))
    return found


def root_names_at(gitdir: Path, commit: str) -> frozenset[str]:
    """The names of the entries of `commit`'s root tree (files, folders, links, submodules)."""
    return frozenset(entry.name or "" for entry in _tree_at(gitdir, commit))


def paths_at(gitdir: Path, commit: str) -> frozenset[str]:
    """Every path `commit` tracks (files, links and submodules), as the file system names it."""
    index = pygit2.Index()
    index.read_tree(_tree_at(gitdir, commit))
    return frozenset(entry.path for entry in index)


def attributes_along(gitdir: Path, commit: str, paths: Sequence[str]) -> bool:
    """Whether the commit has a `.gitattributes` in its root or in a folder above any of `paths`:
    only then can a checkout (made by `make_isolated_clone`, with no config and no attributes
    of the member's) write bytes other than the blob's at those paths (eol, ident, filters)."""
    tree = _tree_at(gitdir, commit)
    folders = {""}
    for path in paths:
        parts = path.split("/")[:-1]
        folders.update("/".join(parts[:n]) + "/" for n in range(1, len(parts) + 1))
    for folder in folders:
        try:
            tree[folder + ".gitattributes"]
        except (KeyError, ValueError):
            continue
        return True
    return False


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


DIFF_BUDGET = 2 * 1024 * 1024
"""The most bytes of a trial's diff kept (for its judge and its evidence); the rest is cut."""
DIFF_FILE_LIMIT = 1024 * 1024
"""A file over this many bytes is left out of the diff, never read (named in a note)."""
DIFF_TIMEOUT_S = 60.0
"""The most seconds reading a trial's diff may take; past it, the diff is a note saying so."""


@dataclass(frozen=True)
class DiffLimits:
    """What reading a trial's diff may cost: bytes kept, the size of a file read, seconds."""

    budget: int = DIFF_BUDGET
    file_limit: int = DIFF_FILE_LIMIT
    timeout_s: float = DIFF_TIMEOUT_S


def work_diff(worktree: Path, base: str, *, source: Path, index: Path | None = None,
              limits: DiffLimits = DiffLimits(), settled: Settled | None = None,
              only: Collection[str] | None = None) -> bytes:
    """The worktree's change from `base` (commits a tool made included: the files as they are
    now), untracked files added (not ignored ones), as a diff.

    No git data of the worktree is used: its `.git` (config, hooks, filters, its index) is the
    tool's to write, and a filter or a textconv there would run on this machine, outside the
    sandbox. Git reads a throwaway repository whose objects borrow `source`'s (the trusted commit
    source the clone was made from; new blobs go to the throwaway), with no config, no
    attributes file and no textconv or external diff. `index`, a copy of the clone's index taken
    when armbench made it (`keep_index`), lets git rehash only the files whose stat changed;
    without it every file is hashed. A worktree git cannot read gives the error's text instead.
    libgit2 reads it in this process (`_diff_from_kept`: one walk of the clone, a few ms),
    byte for byte what git prints; git's own `add -A` and `diff --cached` read it where libgit2
    could print otherwise or could not be stopped in time (`_diff_by_git`).

    Whatever the tool left, the cost is bounded (`limits`): files over `file_limit` bytes are
    left out unread (a 20 GB sparse file included) and named in a note at the top; the diff is
    cut at `budget` bytes, the cut said at the end; past `timeout_s` git is stopped and the note
    says so.

    `settled` (`settled_changes`, taken when setup had run and before the tool started) leaves
    setup's work out: a file setup made, changed or removed that is still as setup left it is
    not in the diff (a file setup made and the tool changed is, whole, as added).

    `only` (the paths of the change a check graded, `edge.change`) limits the diff to those paths:
    then it shows what was graded, and nothing else."""
    deadline = time.monotonic() + limits.timeout_s
    settled = settled or {}
    if only is not None and not only:
        return b""
    limit_to = None if only is None else frozenset(only)

    def from_kept(gitdir: Path, kept: KeptIndex, path: Path) -> tuple[list[tuple[str, int]], bytes] | None:
        if limit_to is not None:  # the graded paths are known: only they are read, no walk
            return _diff_of_paths(gitdir, kept, path, base, limits, deadline, limit_to)
        return _diff_from_kept(gitdir, kept, path, base, limits, deadline, settled, limit_to)
    found = _over_kept(worktree, source, index, limits.file_limit, from_kept)
    if found is not None:
        return _left_out(found[0], limits.file_limit) + found[1]
    threads = joined(worktree)
    reachable = entered(worktree) is None or threads is not None
    below = [0]
    large, whole = large_files(worktree, limits.file_limit,
                               deadline=lambda: time.monotonic() > deadline, below=below)
    if not whole:
        return _stopped(limits)
    left = _still_settled(worktree, settled)
    large = [(path, size) for path, size in large
             if path not in left and (limit_to is None or path in limit_to)]
    header = _left_out(large, limits.file_limit)
    kept = _read_kept(index, limits.file_limit)
    # with no kept index libgit2's add_all hashes every file an index read from `base` has (it
    # knows no sizes), a large one whole: it reads only a tree with none
    in_process = (kept is None and not large and not settled and below[0] <= _IN_PROCESS_BYTES
                  and reachable and limit_to is None)
    with _throwaway(source, in_memory=in_process) as gitdir:
        body: bytes | None = None
        if in_process:
            def from_tree(path: Path) -> bytes | None:
                return _diff_from_tree(gitdir, path, base, limits, deadline)
            body = from_tree(worktree) if threads is None else threads.run(worktree, from_tree)
        if body is None:
            index_file = gitdir.parent / "index"
            copied = _copied(index, index_file)
            body = _diff_by_git(gitdir, index_file, copied, worktree, base, large, limits, deadline,
                                left={path: settled[path][1] for path in left}, only=limit_to)
        return header + body


Settled = Mapping[str, tuple[Stamp | None, bool]]
"""What a clone's setup changed against the index kept when it was made: by path (as the file
system names it), the file's stamp once setup had run (None: setup removed it), and whether the
kept index has the path (setup changed or removed a tracked file, else it made the file)."""


def settled_changes(worktree: Path, *, source: Path, index: Path,
                    limit: int = DIFF_FILE_LIMIT) -> dict[str, tuple[Stamp | None, bool]] | None:
    """What setup changed in a clone (`Settled`), read in process by one walk of libgit2 over
    the kept index `index`, files ignored by the worktree's rules left out; None where it cannot
    be read so (the trial's diff then shows setup's work as the tool's). Nothing is hashed but
    what libgit2's walk hashes, the guard of `work_diff` holding (no large file read)."""
    def read(gitdir: Path, kept: KeptIndex, path: Path) -> dict[str, tuple[Stamp | None, bool]] | None:
        repo, _ = _repository(gitdir, path)
        changes: dict[str, tuple[Stamp | None, bool]] = {}
        with lstats(path) as lstat:
            if _watched_large(kept, lstat) is None:
                return None
            for delta in repo.index.diff_to_workdir(_ADD_ALL_FLAGS).deltas:
                if not delta.new_file.flags & pygit2.enums.DiffFlag.EXISTS:
                    changes[os.fsdecode(delta.old_file.raw_path)] = (None, True)
                    continue
                name = os.fsdecode(delta.new_file.raw_path)
                info = lstat(name)
                if info is not None:  # a folder with its own .git has none: it is not settled
                    changes[name] = (stamp_of(info), delta.status != pygit2.enums.DeltaStatus.UNTRACKED)
        return changes
    try:
        return _over_kept(worktree, source, index, limit, read)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None


def ignored_in(tree: Path, paths: Sequence[str]) -> frozenset[str] | None:
    """Which of `paths` the ignore rules of `tree` (its `.gitignore` files; no config, no
    global excludes file of the member's) ignore, read by libgit2 in this process (from threads
    in an overlay's namespace); None where the tree cannot be reached so."""
    threads = joined(tree)
    if entered(tree) is not None and threads is None:
        return None

    def read(path: Path) -> frozenset[str] | None:
        with _throwaway(path / ".git", in_memory=True) as gitdir:
            try:
                repo, _ = _repository(gitdir, path)
                return frozenset(p for p in paths if repo.path_is_ignored(p))
            except (pygit2.GitError, KeyError, ValueError, OSError):
                return None
    return read(tree) if threads is None else threads.run(tree, read)


_T = TypeVar("_T")


def _over_kept(worktree: Path, source: Path, index: Path | None, limit: int,
               read: Callable[[Path, KeptIndex, Path], _T | None]) -> _T | None:
    """`read(gitdir, kept, worktree)` with the kept index at `gitdir/index` of a throwaway
    repository in memory, run where libgit2 reaches the worktree (from threads in an overlay's
    namespace); None where the kept index cannot be read (`keptindex`), is past
    `_IN_PROCESS_BYTES` or the worktree cannot be reached in process."""
    threads = joined(worktree)  # an overlay libgit2 reaches from threads in its namespace
    if entered(worktree) is not None and threads is None:
        return None
    kept = _read_kept(index, limit)
    if kept is None or kept.small_bytes > _IN_PROCESS_BYTES:
        return None
    with _throwaway(source, in_memory=True) as gitdir:
        (gitdir / "index").write_bytes(kept.data)

        def run(path: Path) -> _T | None:
            return read(gitdir, kept, path)
        return run(worktree) if threads is None else threads.run(worktree, run)


def _still_settled(worktree: Path, settled: Settled) -> set[str]:
    """The paths of `settled` still as setup left them."""
    if not settled:
        return set()
    left: set[str] = set()
    try:
        with lstats(worktree) as lstat:
            for path, (stamp, _) in settled.items():
                info = lstat(path)
                if (stamp is None and info is None) or (
                        stamp is not None and info is not None and stamp_of(info) == stamp):
                    left.add(path)
    except OSError:
        return set()  # the diff then shows setup's work as the tool's
    return left


def _watched_large(kept: KeptIndex,
                   lstat: Callable[[str], os.stat_result | None]) -> dict[str, int] | None:
    """The kept index's watched files now over its limit, by path with their sizes; None where
    libgit2's walk over the index would hash one of them: one it says was empty, or one whose
    size is the index's and whose stat is not."""
    large: dict[str, int] = {}
    for path, stamp in kept.watched:
        info = lstat(path)
        if info is None or not stat_module.S_ISREG(info.st_mode) or info.st_size <= kept.limit:
            continue
        if stamp[5] == 0 or (stamp_of(info) != stamp and info.st_size & 0xFFFFFFFF == stamp[5]):
            return None
        large[path] = info.st_size
    return large


def _read_kept(index: Path | None, limit: int) -> KeptIndex | None:
    if index is None:
        return None
    try:
        return read_kept(index.read_bytes(), limit)
    except OSError:
        return None


@contextmanager
def _throwaway(source: Path, *, in_memory: bool) -> Iterator[Path]:
    """An empty repository (`<tmp>/git`) whose objects borrow `source`'s, in a temporary folder
    removed after the block; in memory when asked and possible."""
    scratch = _MEMORY if in_memory and os.access(_MEMORY, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="armbench-diff-", dir=scratch) as tmp:
        gitdir = Path(tmp) / "git"
        (gitdir / "objects" / "info").mkdir(parents=True)
        (gitdir / "refs").mkdir()
        (gitdir / "HEAD").write_text("ref: refs/heads/armbench-diff\n")
        (gitdir / "objects" / "info" / "alternates").write_text(f"{(source / 'objects').resolve()}\n")
        yield gitdir


def _copied(index: Path | None, dest: Path) -> bool:
    """Whether the kept index (if any) was copied to `dest`."""
    if index is None:
        return False
    try:
        shutil.copyfile(index, dest)
    except OSError:
        return False
    return True


_IN_PROCESS_BYTES = 64 * 1024 * 1024
"""`work_diff` reads in process only when the files libgit2 may read add up to at most this:
libgit2 cannot be stopped at the time limit as git can."""
_MEMORY = Path("/dev/shm")
"""Where the throwaway repository of an in-process diff goes when it can (a few KiB, at most
`_IN_PROCESS_BYTES` of new blobs): on a disk, removing its seven folders costs more than the
diff (about 0.7 ms each on ext4)."""
_IN_PROCESS_RENAMES = 200
"""Past this many added or removed files, git's rename detection (its `diff.renameLimit`) and
libgit2's differ: git's path reads such a diff."""
_NO_CONFIG_LEVELS = ("SYSTEM", "XDG", "GLOBAL", "PROGRAMDATA")
_ADD_ALL_FLAGS = (pygit2.enums.DiffOption.INCLUDE_TYPECHANGE | pygit2.enums.DiffOption.INCLUDE_UNTRACKED
                  | pygit2.enums.DiffOption.RECURSE_UNTRACKED_DIRS)
"""How libgit2's `add_all` compares the index with the work tree."""
_WORKDIR_FLAGS = (_ADD_ALL_FLAGS | pygit2.enums.DiffOption.INCLUDE_IGNORED
                  | pygit2.enums.DiffOption.RECURSE_IGNORED_DIRS)
"""`add_all`'s, and ignored files listed too, only to name those over the limit (as git's path
does)."""


def _repository(gitdir: Path, worktree: Path) -> tuple[pygit2.Repository, int]:
    """The throwaway repository opened on the work tree, reading no config (libgit2's system,
    XDG and global search paths are emptied for the process: armbench's own reads never want
    the member's), and the short id length git would print."""
    for level in _NO_CONFIG_LEVELS:
        pygit2.settings.search_path[getattr(pygit2.enums.ConfigLevel, level)] = ""
    abbrev = _abbrev(gitdir)
    if abbrev > 7:
        (gitdir / "config").write_text(f"[core]\n\tabbrev = {abbrev}\n")
    repo = pygit2.Repository(str(gitdir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    repo.workdir = str(worktree)
    return repo, abbrev


def _diff_from_kept(gitdir: Path, kept: KeptIndex, worktree: Path, base: str, limits: DiffLimits,
                    deadline: float, settled: Settled, only: frozenset[str] | None = None
                    ) -> tuple[list[tuple[str, int]], bytes] | None:
    """`git add -A` and `git diff --cached` done by libgit2 in this process from the kept index
    (at `gitdir/index`), byte for byte what git prints, with the files over the limit left out
    and named; or None where that is not sure (git's path then reads it). It is `add_all`'s own
    work (libgit2's diff of the index against the work tree, then each changed file added or
    removed) with the large files skipped, so the clone is walked once. Before that walk, the
    kept index's watched entries (`keptindex`) are looked at: where libgit2's walk would read one
    of them whole, a large one, git's path reads the diff instead. Also None: more bytes to read
    than `_IN_PROCESS_BYTES`, added and removed files that git might pair as a changed rename, a
    short id that is not unique, any error (a nested repository's folder, which libgit2 cannot
    add). No attributes file of the member's is read; the worktree's own `.gitattributes` and
    `.gitignore` are read as git reads them (libgit2 runs no filter or textconv command)."""
    try:
        repo, abbrev = _repository(gitdir, worktree)
        tree = repo.revparse_single(base).peel(pygit2.Tree)
        read = kept.small_bytes
        with lstats(worktree) as lstat:
            large = _watched_large(kept, lstat)
            if large is None:
                return None  # libgit2 would hash it: emptied and grown, or rewritten in place
            idx = repo.index
            added = removed = 0
            for delta in idx.diff_to_workdir(_WORKDIR_FLAGS).deltas:
                if time.monotonic() > deadline:
                    return [], _stopped(limits)
                new = delta.new_file
                if only is not None and os.fsdecode(
                        (new if new.flags & pygit2.enums.DiffFlag.EXISTS else delta.old_file).raw_path
                        ) not in only:
                    continue  # not graded: not the diff's either
                if not new.flags & pygit2.enums.DiffFlag.EXISTS:
                    gone = os.fsdecode(delta.old_file.raw_path)
                    if gone in settled and settled[gone][0] is None:
                        continue  # setup removed it
                    removed += 1
                    if removed > _IN_PROCESS_RENAMES:
                        return None  # as `_printed` would say, before any file is hashed
                    idx.remove(gone)
                    continue
                path = os.fsdecode(new.raw_path)
                info = lstat(path)
                if info is None:
                    return None  # a folder with its own .git (libgit2 cannot add it)
                if path in settled and stamp_of(info) == settled[path][0]:
                    large.pop(path, None)
                    continue  # as setup left it
                size = info.st_size if stat_module.S_ISREG(info.st_mode) else 0
                if size > kept.limit:
                    large[path] = size
                    continue
                if delta.status == pygit2.enums.DeltaStatus.IGNORED:
                    continue
                if delta.status == pygit2.enums.DeltaStatus.UNTRACKED:
                    added += 1
                    if added > _IN_PROCESS_RENAMES:
                        return None
                read += size
                if read > _IN_PROCESS_BYTES:
                    return None
                idx.add(path)
        body = _printed(repo, idx, tree, abbrev, limits, deadline)
        shown = sorted((path, size) for path, size in large.items() if only is None or path in only)
        return None if body is None else (shown, body)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None


def _diff_of_paths(gitdir: Path, kept: KeptIndex, worktree: Path, base: str, limits: DiffLimits,
                   deadline: float, only: frozenset[str]) -> tuple[list[tuple[str, int]], bytes] | None:
    """As `_diff_from_kept`, for a change whose paths are known (`edge.change`): each path is
    added to the kept index or removed from it, and nothing else of the clone is looked at. A
    file over the limit is left out and named; None where it is not sure (git's path then
    reads it)."""
    try:
        repo, abbrev = _repository(gitdir, worktree)
        tree = repo.revparse_single(base).peel(pygit2.Tree)
        idx = repo.index
        large: list[tuple[str, int]] = []
        read = 0
        added = 0
        with lstats(worktree) as lstat:
            for path in sorted(only):
                info = lstat(path)
                if info is None:
                    if path in idx:
                        idx.remove(path)
                    continue
                size = info.st_size if stat_module.S_ISREG(info.st_mode) else 0
                if size > kept.limit:
                    large.append((path, size))
                    continue
                read += size
                added += path not in idx
                if read > _IN_PROCESS_BYTES or added > _IN_PROCESS_RENAMES:
                    return None
                idx.add(path)
        body = _printed(repo, idx, tree, abbrev, limits, deadline)
        return None if body is None else (large, body)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None


def _diff_from_tree(gitdir: Path, worktree: Path, base: str, limits: DiffLimits,
                    deadline: float) -> bytes | None:
    """As `_diff_from_kept`, with no kept index: libgit2's `add_all` over an index read from
    `base`, which hashes every file (the caller makes sure none is large)."""
    try:
        repo, abbrev = _repository(gitdir, worktree)
        tree = repo.revparse_single(base).peel(pygit2.Tree)
        idx = repo.index
        idx.read_tree(tree)
        idx.add_all()
        return _printed(repo, idx, tree, abbrev, limits, deadline)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None


def _printed(repo: pygit2.Repository, idx: pygit2.Index, tree: pygit2.Tree, abbrev: int,
             limits: DiffLimits, deadline: float) -> bytes | None:
    """`git diff --cached` of the staged index against `tree`, cut at the budget, or None where
    libgit2 might print otherwise than git."""
    diff = idx.diff_to_tree(tree)
    added = sum(d.status == pygit2.enums.DeltaStatus.ADDED for d in diff.deltas)
    removed = sum(d.status == pygit2.enums.DeltaStatus.DELETED for d in diff.deltas)
    if added > _IN_PROCESS_RENAMES or removed > _IN_PROCESS_RENAMES:
        return None
    diff.find_similar(pygit2.enums.DiffFind.FIND_RENAMES, rename_limit=1000)
    if any(d.status == pygit2.enums.DeltaStatus.RENAMED and d.similarity < 100
           for d in diff.deltas):
        return None  # git's and libgit2's similarity scores differ
    chunks: list[bytes] = []
    kept = 0
    for patch in diff:
        if time.monotonic() > deadline:
            return _stopped(limits)
        if patch is None:
            continue
        for oid in (patch.delta.old_file.id, patch.delta.new_file.id):
            if any(oid.raw) and not _unique(repo, str(oid)[:abbrev]):
                return None
        data = patch.data
        chunks.append(data[:limits.budget - kept])
        kept += len(chunks[-1])
        if kept >= limits.budget:
            return b"".join(chunks) + _cut(limits)
    return b"".join(chunks)


def _abbrev(gitdir: Path) -> int:
    """The short id length git picks (`core.abbrev` unset): from the packed objects it sees."""
    count = 0
    for objects in [gitdir / "objects", *(Path(line) for line in
                    (gitdir / "objects" / "info" / "alternates").read_text().splitlines())]:
        try:  # as glob("*.idx") did: a pack folder that cannot be listed has no packs
            with os.scandir(objects / "pack") as found:
                names = [e for e in found if e.name.endswith(".idx") and not e.name.startswith(".")]
        except OSError:
            continue
        for idx in names:
            found_stat = idx.stat()
            count += _pack_objects(idx.path, found_stat.st_mtime_ns, found_stat.st_size,
                                   found_stat.st_ino)
    return max(7, (count.bit_length() + 1) // 2)


@functools.lru_cache(maxsize=256)
def _pack_objects(path: str, mtime_ns: int, size: int, inode: int) -> int:
    """How many objects a pack index holds (its fan-out's last entry), read once per version
    of the file (its path, mtime, size and inode): every trial's diff sees the same packs. An
    index that cannot be read is an OSError (never cached)."""
    with open(path, "rb") as f:
        head = f.read(8 + 256 * 4)
    return int.from_bytes(head[-4:], "big") if head[:4] == b"\xfftOc" else 0


def _unique(repo: pygit2.Repository, prefix: str) -> bool:
    try:
        repo.revparse_single(prefix)
    except (KeyError, ValueError):
        return False
    return True


def _cut(limits: DiffLimits) -> bytes:
    return (f"\n(armbench: the diff was cut here, at {limits.budget} bytes; the rest of it "
            "was not read)\n").encode()


_IGNORE_SPECIAL = re.compile(rb"([\\*?\[\]!# ])")


def _ignore_rule(path: str) -> bytes:
    """A gitignore line that matches `path` (from the top) and nothing else: every character
    the rules give a meaning escaped with a backslash."""
    return b"/" + _IGNORE_SPECIAL.sub(rb"\\\1", os.fsencode(path)) + b"\n"


def _diff_by_git(gitdir: Path, index_file: Path, kept: bool, worktree: Path, base: str,
                 large: Sequence[tuple[str, int]], limits: DiffLimits, deadline: float,
                 left: Mapping[str, bool] | None = None, only: frozenset[str] | None = None) -> bytes:
    """`git add -A` and `git diff --cached` as two git processes, killed at the deadline or
    once the budget is full. `left`: setup's work still as setup left it, by path (True where
    the kept index has it), kept out: a tracked file by an excluding pathspec, a file setup
    made by an ignore rule naming it alone (so git's walk skips it as cheaply as any ignored
    file). `only`: the paths of a graded change, named one by one instead of the whole tree."""
    left = left or {}
    steps: list[list[str]] = [] if kept else [["read-tree", base]]
    pathspecs = index_file.parent / "pathspecs"
    specs = [b":(literal)" + os.fsencode(p) for p in sorted(only)] if only is not None else [b"."]
    pathspecs.write_bytes(b"\0".join([*specs, *(b":(exclude,literal)" + os.fsencode(path)
                                               for path in [*(p for p, _ in large),
                                                            *(p for p, tracked in left.items()
                                                              if tracked)])]))
    excludes = index_file.parent / "excludes"
    excludes.write_bytes(b"".join(_ignore_rule(path) for path, tracked in left.items()
                                  if not tracked))
    prefix, start, named = inside(worktree)
    env = {**git_env(), "GIT_DIR": str(gitdir), "GIT_WORK_TREE": str(named),
           "GIT_INDEX_FILE": str(index_file)}
    base_cmd = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                "-c", f"core.attributesFile={os.devnull}", "-c", f"core.excludesFile={excludes}",
                "-c", "core.untrackedCache=false"]
    add = ["add", "-A", f"--pathspec-from-file={pathspecs}", "--pathspec-file-nul"]
    diff = ["diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", base]
    out = b""
    cut = False
    for args in [*steps, add, diff]:
        done = _capped_git([*prefix, *base_cmd, *args], start, env, limits.budget, deadline)
        if done is None:
            return _stopped(limits)
        code, out, err, cut = done
        if code != 0 and not cut:
            return (f"(the diff could not be read: git {args[0]} exited {code}: "
                    f"{err.decode(errors='replace').strip()[:300]})").encode()
    return out + _cut(limits) if cut else out


def _left_out(large: Sequence[tuple[str, int]], limit: int) -> bytes:
    """The note naming the files left out of a diff (at most 50, then how many more)."""
    if not large:
        return b""
    named = ", ".join(f"{_shown(path)} ({size} bytes)" for path, size in large[:50])
    more = f", and {len(large) - 50} more" if len(large) > 50 else ""
    return (f"(armbench: left out of this diff, unread, each over {limit} bytes: {named}{more})"
            "\n").encode()


def _shown(path: str) -> str:
    """A path as the file system named it, with each byte that is not UTF-8 as `\\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _stopped(limits: DiffLimits) -> bytes:
    return (f"(armbench: reading the diff took over {limits.timeout_s:g} s and was stopped; "
            "nothing of it is shown)\n").encode()


def _capped_git(argv: list[str], cwd: Path | None, env: dict[str, str], budget: int,
                deadline: float) -> tuple[int, bytes, bytes, bool] | None:
    """Run git; (exit code, at most `budget` bytes of stdout, stderr, whether stdout was cut),
    or None when the deadline passed first (git is killed). A cut stops git at once."""
    with tempfile.TemporaryFile() as err, subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=err) as proc:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        poll = select.poll()  # not select(): a descriptor past 1024 is fine
        poll.register(fd, select.POLLIN)
        chunks: list[bytes] = []
        kept = 0
        cut = False
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not poll.poll(left * 1000):
                proc.kill()
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk[:budget - kept])
            kept += len(chunks[-1])
            if kept >= budget:
                cut = True
                proc.kill()
                break
        try:
            code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            return None
        err.seek(0)
        return code, b"".join(chunks), err.read(4096), cut


def keep_index(worktree: Path, dest: Path) -> None:
    """Copy a clone's index, just after armbench made it and before anything ran in it, to
    `dest` (outside every sandbox), for `work_diff`."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(worktree / ".git" / "index", dest)


def apply_diff(worktree: Path, diff: bytes) -> bool:
    """Apply a diff `work_diff` gave to a clone at its base; False when it did not apply (the
    judge then still reads the diff in its prompt)."""
    if not diff.strip():
        return True
    prefix, start, _ = inside(worktree)
    done = subprocess.run([*prefix, "git", "-c", "core.hooksPath=/dev/null", "apply",
                           "--whitespace=nowarn", "-"], cwd=start, env=git_env(), input=diff,
                          capture_output=True)
    return done.returncode == 0
