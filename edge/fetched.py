"""The git dirs clones start from, one per commit (`edge.gitclone.fetch_commit`'s), each made
from an earlier one where it can: a run's or a harvest's commits are mostly one history.

A local `git fetch` starts half a dozen processes (upload-pack, pack-objects, index-pack, the
connectivity check) whatever it brings, about 65 ms on a 2-core machine; a harvest makes two git
dirs a candidate, each of a descendant of the one before. So a git dir is fetched whole (a base)
only when no recent one is of an ancestor; otherwise it is that ancestor's git dir copied plus one
pack of the objects the commit reaches that the ancestor's lacks, read from the source by libgit2
(which checks every object's hash as it reads it) and written in process. A chain of such git
dirs is at most `DEPTH` packs deep; the next one is fetched whole. Each git dir still holds its
commit and its ancestors and nothing else, exactly the objects `fetch_commit` would have fetched
(`tests/integration/test_fetched.py`)."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pygit2

from armbench.edge.gitclone import fetch_commit, has_commit

__all__ = ["DEPTH", "FetchedCommits", "WALK_LIMIT", "extend_fetched"]

WALK_LIMIT = 2000
"""Commits between an earlier git dir's commit and the new one beyond which the new one is
fetched whole instead: the walk is Python's, the fetch git's."""
DEPTH = 16
"""The most packs a git dir made from earlier ones adds to its base's."""
_TRIED = 4
"""The most recent git dirs looked at for one of an ancestor of a new commit."""
_SUBMODULE = 0o160000


class FetchedCommits:
    """The fetched git dir of each commit, in `root` (a work folder no sandbox mounts); safe
    from several threads, each commit made once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._guard = threading.Lock()
        self._making: dict[str, threading.Lock] = {}
        self._made: list[tuple[str, int]] = []
        """Each git dir made by this instance, oldest first, with its depth (0: fetched whole)."""

    def path_of(self, commit: str) -> Path:
        """Where the git dir of `commit` is (made or not)."""
        return self.root / commit

    def template(self, source_gitdir: Path, commit: str) -> Path:
        """The git dir of `commit`, made now from `source_gitdir` unless it is there."""
        dest = self.path_of(commit)
        with self._guard:
            making = self._making.setdefault(commit, threading.Lock())
        with making:
            if not (dest / "HEAD").is_file():
                self._make(source_gitdir, commit, dest)
        return dest

    def _make(self, source_gitdir: Path, commit: str, dest: Path) -> None:
        with self._guard:
            earlier = self._made[-_TRIED:]
        depth = 0
        for base, base_depth in reversed(earlier):  # the newest first; a chain DEPTH deep ends
            if base_depth >= DEPTH:
                break
            if extend_fetched(self.path_of(base), base, source_gitdir, commit, dest):
                depth = base_depth + 1
                break
        if depth == 0:
            fetch_commit(source_gitdir, commit, dest)
        with self._guard:
            self._made.append((commit, depth))


def extend_fetched(base_dir: Path, base: str, source_gitdir: Path, commit: str, dest: Path, *,
                   limit: int = WALK_LIMIT) -> bool:
    """Make `dest` the git dir of `commit` from `base_dir`, the git dir of its ancestor `base`:
    copied, plus one pack of what `commit` reaches that `base` does not, read from
    `source_gitdir`. False (nothing made) when `base` is not an ancestor, its git dir is gone,
    more than `limit` commits lie between them, or the source cannot be read: fetch it then."""
    if not (base_dir / "HEAD").is_file() or not has_commit(source_gitdir, commit):
        return False
    source = pygit2.Repository(str(source_gitdir))
    try:
        if commit != base and not source.descendant_of(commit, base):
            return False
        held = pygit2.Repository(str(base_dir)).odb
        beyond = _objects_beyond(source, held, commit, base, limit)
    except (KeyError, ValueError, pygit2.GitError):
        return False
    if beyond is None:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{dest.name}-", dir=dest.parent))
    try:
        gitdir = work / "git"
        shutil.copytree(base_dir, gitdir, copy_function=_link_or_copy)
        if beyond:
            pack = pygit2.PackBuilder(source)
            for oid in beyond:
                pack.add(oid)
            pack.write(str(gitdir / "objects" / "pack"))
        if not has_commit(gitdir, commit):
            return False
        try:
            gitdir.rename(dest)
        except OSError:
            if not (dest / "HEAD").is_file():
                raise
        return True
    except (OSError, KeyError, ValueError, pygit2.GitError):  # the base went, or the source failed
        return False
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _link_or_copy(source: str, dest: str) -> None:
    """A base's file in a new git dir: linked (both are armbench's, in its work folder, and no
    git writes either: clones copy them), copied where a link cannot be made."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copy2(source, dest)


def _objects_beyond(source: pygit2.Repository, held: pygit2.Odb, commit: str, base: str,
                    limit: int) -> list[pygit2.Oid] | None:
    """Every object `commit` reaches that is not in `held` (the closed git dir of its ancestor
    `base`): the commits `base` does not reach, and the trees and blobs they bring, a tree in
    `held` skipped whole. None past `limit` commits."""
    walker = source.walk(commit)
    walker.hide(base)
    commits = list(itertools.islice(walker, limit + 1))  # the commits first: cheap to count
    if len(commits) > limit:
        return None
    found: list[pygit2.Oid] = []
    seen: set[pygit2.Oid] = set()
    for one in commits:
        found.append(one.id)
        trees = [one.tree_id]
        while trees:
            oid = trees.pop()
            if oid in seen or oid in held:
                continue
            seen.add(oid)
            found.append(oid)
            tree = source[oid]
            if not isinstance(tree, pygit2.Tree):
                raise ValueError(f"{oid} is not a tree")
            for entry in tree:
                if entry.filemode == _SUBMODULE:
                    continue
                if entry.type_str == "tree":
                    trees.append(entry.id)
                elif entry.id not in seen and entry.id not in held:
                    seen.add(entry.id)
                    found.append(entry.id)
    return found
