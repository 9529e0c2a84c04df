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

With `workflows.setup_cache: true` the trees are kept between runs in `edge.prepared.cache_dir()`
instead, keyed as above plus the host's architecture and armbench's version (`shared` keys). A
tree found there is used only when its tree and its `git/` show the manifests it was built with
(`manifest`, `git.manifest`); one that does not is rebuilt under the key's lock, in a temporary
sibling renamed into place, and every clone is still a checked copy. Each clone says where its
tree came from (`Copy.origin`): `built` in this run, taken from the cache (`cached`), or `rebuilt`
in this run because the one found failed its check.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from armbench.benchmark.trials.workfolder import discard, remove_tree
from armbench.benchmark.trials.workspace import TrialSources
from armbench.edge import overlay
from armbench.edge.errors import EdgeError
from armbench.edge.gitclone import safe_git_env
from armbench.edge.prepared import copy_method, copy_tree, host_facts, locked, manifest
from armbench.edge.proc import WITHHELD, ProcResult, step_env
from armbench.edge.sandbox import Room, Sandbox

__all__ = ["Copy", "Origin", "PreparedTreeDamaged", "PreparedTrees", "SetupIn", "prepared_key"]

Origin = Literal["built", "cached", "rebuilt"]
"""Where a clone's prepared tree came from: built in this run, taken from the cache between runs,
or rebuilt in this run because the tree found failed its check."""
_WHOLE = frozenset[str]()

SetupIn = Callable[[Path], ProcResult | None]
"""Runs the suite's setup in a clone (in its room, in the sandbox); None when there is none."""


class PreparedTreeDamaged(EdgeError):
    """A prepared tree's copy did not show its manifest, even after the tree was rebuilt."""

    code = "prepared_tree_damaged"

    def __init__(self, key: str) -> None:
        super().__init__(expected=f"a copy of the prepared tree {key} that matches its manifest",
                         found="a different tree after it was rebuilt",
                         fix="Stop whatever writes the run's work folder, and resume the run.")


def prepared_key(commit: str, setup: str, sandbox: Sandbox, *, shared: bool = False) -> str:
    """The prepared tree's key: sha256 of the starting commit, the setup command, the sandbox's
    settings and the environment setup gets (credentials withheld, as `checks.check_env`); for a
    tree kept between runs (`shared`), the host's architecture and armbench's version too."""
    env = step_env(os.environ, withhold=WITHHELD, extra=safe_git_env())
    digest = hashlib.sha256()
    for part in (commit, setup, repr(sandbox), repr(sorted(env.items())),
                 *(host_facts() if shared else ())):
        digest.update(part.encode(errors="surrogateescape") + b"\0")
    return digest.hexdigest()[:24]


@dataclass(frozen=True)
class _Built:
    key: str
    folder: Path
    manifest: str
    origin: Origin


@dataclass(frozen=True)
class Copy:
    """A step's clone, made from its task's prepared tree: a copy, or an overlay over it."""

    path: Path
    origin: Origin


class PreparedTrees:
    """A run's prepared trees, one per key, each built at most once per run (again only when a
    copy shows it damaged); with `cache`, the folder they are kept in between runs."""

    def __init__(self, sources: TrialSources, *, cache: Path | None = None,
                 notify: Callable[[str], None] | None = None) -> None:
        self.sources = sources
        self.shared = cache is not None
        self.folder = cache if cache is not None else sources.root / "prepared"
        self.notify = notify
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
              overlays: bool = False) -> Copy | ProcResult:
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
                    if self._unchanged(built):
                        return self._overlay(step, built)
                    damaged = built
                    continue
                except OSError:
                    overlays = False
            dest = self.sources.clone_dir(step)
            try:
                with locked(self._lock_file(key), shared=True):  # never while it is replaced
                    copy_tree(built.folder / "tree", dest)
                    copy_tree(built.folder / "git", dest / ".git")
                if manifest(dest) == built.manifest:
                    Room.of(dest).make()
                    return Copy(dest, built.origin)
            except (OSError, EdgeError):
                pass
            discard(dest)
            damaged = built
        raise PreparedTreeDamaged(key)

    def _overlay(self, step: str, built: _Built) -> Copy:
        """The step's clone as an overlay: the tree, and above it a layer holding only the
        clone's `.git` as setup found it (`git-layer/.git`, copied from `git/` once per tree);
        nothing is copied per trial, so no manifest is compared. Only for a run's own trees: a
        tree kept between runs may be rebuilt by another run while a trial's overlay sits on it."""
        if self.shared:
            raise OSError("a prepared tree kept between runs is copied, never a lower layer")
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
        return Copy(merged, built.origin)

    @staticmethod
    def _unchanged(built: _Built) -> bool:
        """Whether the tree still shows the manifest it was built with (an overlay copies
        nothing, so its lower layer is checked in place before each mount: lstat of every entry,
        no file read)."""
        try:
            return manifest(built.folder / "tree") == built.manifest
        except EdgeError:
            return False

    def _lock_file(self, key: str) -> Path:
        return self.folder / f"{key}.lock"

    def _ensure(self, key: str, commit: str, setup_in: SetupIn,
                damaged: _Built | None) -> _Built | ProcResult:
        with self._lock:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            known = self._built.get(key)
            if known is not None and known is not damaged:
                return known
            folder = self.folder / key
            with locked(self._lock_file(key)):  # one process checks or builds it at a time
                found = self._sound(key, folder, damaged)
                if found is None:  # none yet, or one that fails its check: build it
                    rebuilt = damaged is not None or folder.exists()
                    got = self._build(key, commit, setup_in)
                    if isinstance(got, ProcResult):
                        return got
                    found = replace(got, origin="rebuilt") if rebuilt else got
                    if rebuilt and self.notify is not None:
                        self.notify(f"The prepared tree {key} failed its manifest check; rebuilt "
                                    "it (setup ran again).")
            self._built[key] = found
            return found

    def _sound(self, key: str, folder: Path, damaged: _Built | None) -> _Built | None:
        """The tree in `folder` when its tree and git dir show the manifests it was built with
        (and it is not the one a copy showed damaged); None otherwise."""
        try:
            kept = (folder / "manifest").read_text().strip()
            git = (folder / "git.manifest").read_text().strip()
            if damaged is not None and kept == damaged.manifest:
                return None
            if manifest(folder / "tree") != kept or manifest(folder / "git", skip=_WHOLE) != git:
                return None
        except (OSError, EdgeError):
            return None
        return _Built(key, folder, kept, "cached" if self.shared else "built")

    def _build(self, key: str, commit: str, setup_in: SetupIn) -> _Built | ProcResult:
        """One clean clone, its `.git` kept aside before setup runs, setup, then the tree and its
        manifests put in place whole (renamed, so another process finds all of it or none).
        The caller holds the key's lock."""
        clone = self.sources.fresh_clone(f"prepare:{key}", commit)
        self.folder.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=self.folder))
        old = work.with_name(work.name + "-old")
        try:
            copy_tree(clone / ".git", work / "git")
            (work / "git.manifest").write_text(manifest(work / "git", skip=_WHOLE) + "\n")
            self.builds += 1
            proc = setup_in(clone)
            if proc is not None and proc.cause != "ok":
                return proc
            remove_tree(clone / ".git")  # setup could write there: trials get the copy above
            _move(clone, work / "tree")
            (work / "manifest").write_text(manifest(work / "tree") + "\n")
            remove_tree(Room.of(clone).base)
            folder = self.folder / key
            if folder.exists():  # the tree that failed its check: out of the way first
                if self.shared:
                    folder.rename(old)
                else:  # trials' overlays may still sit on it: kept until the run's folder goes
                    folder.rename(Path(tempfile.mkdtemp(prefix=f".{key}-retired-", dir=self.folder)))
            work.rename(folder)
            return _Built(key, folder, (folder / "manifest").read_text().strip(), "built")
        finally:
            discard(clone)
            remove_tree(work)
            remove_tree(old)


def _move(clone: Path, dest: Path) -> None:
    """Rename the clone to `dest`, or copy it there when they lie on different file systems
    (the run's work folder under $TMPDIR, the cache under armbench's home)."""
    try:
        clone.rename(dest)
    except OSError:
        copy_tree(clone, dest)
        remove_tree(clone)
