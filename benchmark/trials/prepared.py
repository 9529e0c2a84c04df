"""`trial: {setup: once}`: a task's prepared tree, built once per run, that its baseline and
every trial start from a copy of.

The tree is built in one clean clone at the starting commit (`TrialSources.fresh_clone`), setup
run in it in the sandbox as a trial's setup runs, and kept in the run's work folder (which no
sandbox mounts) at `prepared/<key>/`: `tree/` (the work tree setup left, ignored files included),
`git/` (the clone's own `.git`, copied before setup ran: only the commit and its ancestors, no
remotes, hooks off) and `manifest` (`edge.prepared.manifest` of the tree). A trial's clone is a
copy of both (`edge.prepared.copy_tree`: links stay links, never hard links), and it is used only
when the copy shows the manifest the tree was built with; otherwise the tree is rebuilt, once.

The key is what could change the tree: the starting commit, the setup command, and the sandbox
setup runs in (its settings and the environment it passes on). Setup runs before an arm's team is
installed, so no team revision can change it and none is in the key.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from benchmark.trials.workfolder import discard, remove_tree
from benchmark.trials.workspace import TrialSources
from edge import overlay
from edge.errors import EdgeError
from edge.gitclone import safe_git_env
from edge.prepared import copy_method, copy_tree, manifest
from edge.proc import WITHHELD, ProcResult, step_env
from edge.sandbox import Room, Sandbox

__all__ = ["PreparedTreeDamaged", "PreparedTrees", "SetupIn", "prepared_key"]

SetupIn = Callable[[Path], ProcResult | None]
"""Runs the suite's setup in a clone (in its room, in the sandbox); None when there is none."""


class PreparedTreeDamaged(EdgeError):
    """A prepared tree's copy did not show its manifest, even after the tree was rebuilt."""

    code = "prepared_tree_damaged"

    def __init__(self, key: str) -> None:
        super().__init__(expected=f"a copy of the prepared tree {key} that matches its manifest",
                         found="a different tree after it was rebuilt",
                         fix="Stop whatever writes the run's work folder, and resume the run.")


def prepared_key(commit: str, setup: str, sandbox: Sandbox) -> str:
    """The prepared tree's key: sha256 of the starting commit, the setup command, the sandbox's
    settings and the environment setup gets (credentials withheld, as `checks.check_env`)."""
    env = step_env(os.environ, withhold=WITHHELD, extra=safe_git_env())
    digest = hashlib.sha256()
    for part in (commit, setup, repr(sandbox), repr(sorted(env.items()))):
        digest.update(part.encode(errors="surrogateescape") + b"\0")
    return digest.hexdigest()[:24]


@dataclass(frozen=True)
class _Built:
    key: str
    folder: Path
    manifest: str


class PreparedTrees:
    """A run's prepared trees, one per key, each built at most once per run (again only when a
    copy shows it damaged)."""

    def __init__(self, sources: TrialSources) -> None:
        self.sources = sources
        self.folder = sources.root / "prepared"
        self._built: dict[str, _Built] = {}
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self.builds = 0
        """How many trees this process built (setup runs)."""

    def preparation(self) -> Literal["reflink", "copy"]:
        """How `clone` copies a prepared tree here: blocks shared or copied."""
        self.folder.mkdir(parents=True, exist_ok=True)
        return copy_method(self.folder)

    def clone(self, step: str, commit: str, key: str, setup_in: SetupIn, *,
              overlays: bool = False) -> Path | ProcResult:
        """The step's clone: a copy of the task's prepared tree (built first when needed), its
        room made; or setup's result when setup failed in the tree's clone. With `overlays`, an
        overlay over the tree instead (`_overlay`), a copy where none can be mounted."""
        damaged: _Built | None = None
        for _ in range(2):
            built = self._ensure(key, commit, setup_in, damaged)
            if isinstance(built, ProcResult):
                return built
            if overlays:
                try:
                    return self._overlay(step, built)
                except OSError:
                    overlays = False
            dest = self.sources.clone_dir(step)
            try:
                copy_tree(built.folder / "tree", dest)
                copy_tree(built.folder / "git", dest / ".git")
                if manifest(dest) == built.manifest:
                    Room.of(dest).make()
                    return dest
            except (OSError, EdgeError):
                pass
            discard(dest)
            damaged = built
        raise PreparedTreeDamaged(key)

    def _overlay(self, step: str, built: _Built) -> Path:
        """The step's clone as an overlay: the tree, and above it a layer holding only the
        clone's `.git` as setup found it (`git-layer/.git`, copied from `git/` once per tree);
        nothing is copied per trial, so no manifest is compared."""
        layer = built.folder / "git-layer"
        with self._lock:
            lock = self._locks.setdefault(built.key, threading.Lock())
        with lock:
            if not (layer / ".git").is_dir():
                work = Path(tempfile.mkdtemp(prefix=".git-layer-", dir=built.folder))
                try:
                    copy_tree(built.folder / "git", work / ".git")
                    work.rename(layer)
                finally:
                    remove_tree(work)
        merged = overlay.clone_over([layer, built.folder / "tree"], self.sources.clone_dir(step))
        Room.of(merged).make()
        return merged

    def _ensure(self, key: str, commit: str, setup_in: SetupIn,
                damaged: _Built | None) -> _Built | ProcResult:
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            known = self._built.get(key)
            if known is not None and known is not damaged:
                return known
            folder = self.folder / key
            if damaged is None and known is None and (folder / "manifest").is_file():
                found = _Built(key, folder, (folder / "manifest").read_text().strip())
            else:  # a resumed run's tree, or none yet, or a damaged one: build it
                if folder.exists():
                    remove_tree(folder)
                got = self._build(key, commit, setup_in)
                if isinstance(got, ProcResult):
                    return got
                found = got
            self._built[key] = found
            return found

    def _build(self, key: str, commit: str, setup_in: SetupIn) -> _Built | ProcResult:
        """One clean clone, its `.git` kept aside before setup runs, setup, then the tree and its
        manifest put in place whole (renamed, so another process finds all of it or none)."""
        clone = self.sources.fresh_clone(f"prepare:{key}", commit)
        self.folder.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=self.folder))
        try:
            copy_tree(clone / ".git", work / "git")
            self.builds += 1
            proc = setup_in(clone)
            if proc is not None and proc.cause != "ok":
                return proc
            remove_tree(clone / ".git")  # setup could write there: trials get the copy above
            (work / "manifest").write_text(manifest(clone) + "\n")
            clone.rename(work / "tree")
            remove_tree(Room.of(clone).base)
            folder = self.folder / key
            try:
                work.rename(folder)
            except OSError:  # another process put the tree in place first: use that one
                if not (folder / "manifest").is_file():
                    raise
            return _Built(key, folder, (folder / "manifest").read_text().strip())
        finally:
            discard(clone)
            remove_tree(work)
