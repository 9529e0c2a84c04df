"""Where a trial's clones come from and go: the commit source, the work folder, hidden bytes.

`run` and `try` prepare a trial's sources here, the same way: only where a `{from, to}` entry of
check.add is read differs (a run reads the suite's folder in the team mirror at the revision the
plan froze; try reads it on disk, as written)."""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import tempfile
import threading
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import TypeVar

import msgspec

from armbench.benchmark.trials.workfolder import discard, remove_tree, settle_discards, work_root
from armbench.edge import overlay
from armbench.edge.change import Change, apply_change, ignored_by, read_change, read_upper
from armbench.edge.errors import AddPathMissing, EdgeError, GitError
from armbench.edge.fetched import FetchedCommits
from armbench.edge.gitclone import (
    GIT_READ_ERRORS,
    CommitCache,
    FileBlob,
    Settled,
    attributes_along,
    blobs_at,
    changed_files,
    files_matching_at,
    keep_index,
    make_isolated_clone,
    paths_at,
    read_files_at,
    renew_git_dir,
    root_names_at,
    settled_changes,
    work_diff,
)
from armbench.edge.keptindex import Stamp as KeptStamp
from armbench.edge.prepared import copy_tree
from armbench.edge.protect import Stamp, stamp_files
from armbench.edge.sandbox import Room, Sandbox
from armbench.edge.team import files_at
from armbench.ledger.events import PlanFrozen, PlannedTask

__all__ = ["SuiteFile", "TrialSources", "discard", "overlays_for", "remove_tree", "settle_discards",
           "setup_tree", "team_suite_file", "work_root"]


def setup_tree(clone: Path) -> Path:
    """Where a trial's tree as setup left it is kept (`TrialSources.keep_setup_tree`): in its
    room, beside the home and /tmp its steps get, never mounted itself; removed with the room.
    For an overlay clone, the room's folder as the host names it (never through the holder)."""
    into = overlay.entered(clone)
    return Room.of(into.inner(clone) if into is not None else clone).base / "setup-tree"


def overlays_for(sandbox: Sandbox) -> bool:
    """The switch: whether this run's trial clones are overlays over their task's pristine
    tree (`edge.overlay`) rather than checked out or copied. Only under bubblewrap (a declared
    step would run on the host, where the merged tree cannot be reached by its path) and where
    this process can mount one; then, by default, only where a folder of the lower layer
    renames as in a clone (`edge.overlay.renames_folders`: armbench running as root).
    `ARMBENCH_OVERLAYS=1` takes any overlay that mounts (an unprivileged one too: renaming a
    lower folder fails with EXDEV there, which `git mv` of a folder does not survive), and
    `ARMBENCH_OVERLAYS=0` none."""
    chosen = os.environ.get("ARMBENCH_OVERLAYS", "")
    if chosen == "0" or sandbox.isolation != "bubblewrap":
        return False
    if chosen == "1":
        return overlay.available()
    return overlay.renames_folders()


def _upper_of(clone: Path) -> Path | None:
    """The upper layer of an overlay clone this process reaches (None for any other clone)."""
    into = overlay.entered(clone)
    if into is None:
        return None
    upper = overlay.layers_of(into.inner(clone)) / "upper"
    return upper if upper.is_dir() else None


T = TypeVar("T")
SuiteFile = Callable[[str], FileBlob]
"""A file of the suite's folder, by its path there (a `{from, to}` entry's `from`); raises
`AddPathMissing` when the folder has none."""


def team_suite_file(plan: PlanFrozen, team_mirror: Path | None) -> SuiteFile:
    """A run's suite folder: the team mirror's, at the revision the plan froze."""
    def read(source: str) -> FileBlob:
        if team_mirror is None or plan.suite_dir is None or plan.suite_revision is None:
            raise AddPathMissing(source, "the suite folder",
                                 "no team repo to read the suite's files from")
        path = f"{plan.suite_dir}/{source}"
        data = files_at(team_mirror, plan.suite_revision, path).get(path)
        if data is None:
            raise AddPathMissing(path, plan.suite_revision)
        return FileBlob(data=data, mode=0o100644)
    return read


class TrialSources:
    """The commits a trial's clones are made from, and the bytes its checks need."""

    def __init__(self, repo: str, tasks: Sequence[PlannedTask], cache: CommitCache,
                 checkout: Path | None, root: Path, suite_file: SuiteFile, *,
                 fetched: FetchedCommits | None = None) -> None:
        self.repo, self.root, self._suite_file = repo, root, suite_file
        self._cache, self._checkout = cache, checkout
        self._fetched = fetched if fetched is not None else FetchedCommits(root / "fetched")
        self._shas = [t.starting_commit for t in tasks] + [t.fix for t in tasks if t.fix]
        self.gitdir = cache.source_for(repo, self._shas, checkout)
        self._protected: dict[str, dict[str, FileBlob]] = {}
        self._root_names: dict[str, frozenset[str]] = {}
        self._tracked: dict[str, frozenset[str]] = {}
        self._added: dict[str, dict[str, FileBlob]] = {}
        self._exact: dict[str, bool] = {}
        self._stamps: dict[Path, dict[str, Stamp]] = {}
        self._diffs: dict[tuple[Path, str], bytes] = {}
        self._lock = threading.Lock()
        self._fetching: dict[str, threading.Lock] = {}

    def clone_dir(self, step: str) -> Path:
        """The step's clone folder, cleared (with its room and its layers, an overlay's mount
        released) of whatever an earlier try left."""
        dest = self.root / "clones" / hashlib.sha1(step.encode()).hexdigest()[:16]
        holder = overlay.current()
        names = {dest, *([holder.seen(dest)] if holder is not None else [])}
        for name in names:  # an overlay of an earlier try is unmounted, its layers removed
            self._stamps.pop(name, None)
            overlay.release(name)
        with self._lock:
            self._diffs = {k: v for k, v in self._diffs.items() if k[0] not in names}
        self._index_of(dest).unlink(missing_ok=True)
        self._settled_of(dest).unlink(missing_ok=True)
        for stale in (dest, Room.of(dest).base, overlay.layers_of(dest)):
            if stale.exists():
                remove_tree(stale)
        dest.parent.mkdir(parents=True, exist_ok=True)
        return dest

    def overlay_clone(self, step: str, commit: str) -> Path:
        """A new clone at the commit, for one step, as an overlay over the commit's pristine
        tree (`_pristine`): returns the merged tree as armbench's code reaches it. OSError when
        the overlay could not be mounted."""
        lower = self._pristine(commit)
        dest = self.clone_dir(step)
        merged = overlay.clone_over([lower], dest)
        Room.of(merged).make()
        return merged

    def _pristine(self, commit: str) -> Path:
        """The tree every overlay clone of `commit` in this run has below it: one clean clone
        (with its `.git`), made once per run and never written again (the work folder, which no
        sandbox mounts)."""
        tree = self.root / "pristine" / commit
        with self._lock:
            making = self._fetching.setdefault(f"pristine:{commit}", threading.Lock())
        with making:
            if not (tree / ".git" / "HEAD").is_file():
                tree.parent.mkdir(parents=True, exist_ok=True)
                work = Path(tempfile.mkdtemp(prefix=f".{commit}-", dir=tree.parent))
                try:
                    template = self._template(commit)
                    self._from_source(lambda: make_isolated_clone(self.gitdir, commit, work / "t",
                                                                  template=template))
                    (work / "t").rename(tree)
                finally:
                    remove_tree(work)
        return tree

    def fresh_clone(self, step: str, commit: str) -> Path:
        """A new isolated clone at the commit, for one step."""
        dest = self.clone_dir(step)
        template = self._template(commit)
        try:
            make_isolated_clone(self.gitdir, commit, dest, template=template)
        except GitError:  # the fetched git dir would not check out: fetch for this clone, and
            shutil.rmtree(template, ignore_errors=True)  # again for the next
            self._from_source(lambda: make_isolated_clone(self.gitdir, commit, dest))
        Room.of(dest).make()
        return dest

    def _template(self, commit: str) -> Path:
        """The git dir every clone of `commit` is copied from: the commit and its ancestors,
        made once (`edge.fetched`: fetched from the commit source, or an earlier commit's git dir
        and the objects it lacks) in a work folder no sandbox mounts; its run's, or one shared by
        a harvest's tries."""
        return self._from_source(lambda: self._fetched.template(self.gitdir, commit))

    def _from_source(self, read: Callable[[], T]) -> T:
        """A clone or read from the commit source; when the commit cache fails it and turns out
        corrupted, the cache is rebuilt and it is tried once more."""
        try:
            return read()
        except GIT_READ_ERRORS:
            if self.gitdir != self._cache.path_for(self.repo) or not self._cache.rebuild_if_corrupt(
                    self.repo, self._shas, self._checkout):
                raise
        return read()

    def blobs_at(self, commit: str, paths: Collection[str]) -> dict[str, bytes | None]:
        """Each path's bytes at `commit` (None where it is no regular file there)."""
        return self._from_source(lambda: blobs_at(self.gitdir, commit, paths))

    def changed(self, old: str, new: str) -> dict[str, tuple[bytes | None, bytes | None]]:
        """The regular files that differ between two commits, with their bytes at each."""
        return self._from_source(lambda: changed_files(self.gitdir, old, new))

    def protected_at(self, commit: str, task: PlannedTask) -> dict[str, FileBlob]:
        """The protected files as a commit has them (read every time)."""
        return self._from_source(lambda: files_matching_at(self.gitdir, commit, task.protect))

    def root_names(self, commit: str) -> frozenset[str]:
        """The names at the root of `commit`'s tree (read once per commit)."""
        with self._lock:
            if commit not in self._root_names:
                self._root_names[commit] = self._from_source(lambda: root_names_at(self.gitdir, commit))
            return self._root_names[commit]

    def protected(self, task: PlannedTask) -> dict[str, FileBlob]:
        """The protected files as the starting commit has them."""
        with self._lock:
            if task.id not in self._protected:
                self._protected[task.id] = self._from_source(
                    lambda: files_matching_at(self.gitdir, task.starting_commit, task.protect))
            return self._protected[task.id]

    def stamp_protected(self, clone: Path, task: PlannedTask) -> None:
        """Stamp the protected files of a trial's clone just made, before anything has run in
        it, so its check's restore reads only the files someone touched (`edge.protect`). Only
        where the checkout wrote the blobs' own bytes: no `.gitattributes` above a protected
        path at the starting commit. Stamps live in this process: a resumed run reads all."""
        try:
            protected = self.protected(task)
            if not protected:
                return
            with self._lock:
                if task.id not in self._exact:
                    self._exact[task.id] = not self._from_source(lambda: attributes_along(
                        self.gitdir, task.starting_commit, list(protected)))
                exact = self._exact[task.id]
            if exact:
                self._stamps[clone] = stamp_files(clone, protected)
        except (OSError, EdgeError):
            return  # no stamps: the restore reads every protected file, as it always may

    def keep_index(self, clone: Path) -> None:
        """Keep a copy of a trial clone's index as armbench made it, in the work folder (which no
        sandbox mounts), so `diff` later rehashes only the files the tool touched."""
        try:
            keep_index(clone, self._index_of(clone))
        except OSError:
            pass  # `diff` then hashes every file

    def settle(self, clone: Path) -> None:
        """Once setup has run in a trial's clone (or the clone was made from its prepared tree)
        and before the tool starts: keep what setup changed (`settled_changes`) beside the kept
        index, so the trial's diff leaves setup's work out. Nothing kept where it cannot be read
        in process: the diff then shows setup's work as the tool's, as it always may."""
        kept = self._index_of(clone)
        place = self._settled_of(clone)
        place.unlink(missing_ok=True)
        if not kept.exists():
            return
        changes = settled_changes(clone, source=self.gitdir, index=kept)
        if changes:
            place.write_bytes(msgspec.msgpack.encode(
                [(os.fsencode(path), stamp, tracked) for path, (stamp, tracked) in changes.items()]))

    def keep_setup_tree(self, clone: Path) -> None:
        """With `setup: each`, once setup has run in a trial's clone and before the tool starts:
        a copy of the clone as setup left it (`.git` and ignored files included), in the trial's
        room beside its home and /tmp, a folder no step mounts (`setup_tree`). Its check's tree
        is made from it (`graded_tree`)."""
        kept = setup_tree(clone)
        if kept.exists():
            remove_tree(kept)
        copy_tree(clone, kept)

    def tree_from_setup(self, step: str, clone: Path, *, overlays: bool) -> Path:
        """A new tree for the step (a trial's check or judge) made from the trial's setup tree
        (`keep_setup_tree`): an overlay over it, or a copy of it where overlays are not used or
        cannot be mounted; its room made."""
        kept = setup_tree(clone)
        if not (kept / ".git").is_dir():
            raise GitError(expected=f"the tree setup left for this trial at {kept}",
                           found="none (the work folder was cleared)",
                           fix="Run the trial again (`armbench resume` retries it).")
        dest = self.clone_dir(step)
        if overlays:
            try:
                merged = overlay.clone_over([kept], dest)
                Room.of(merged).make()
                return merged
            except OSError:
                dest = self.clone_dir(step)
        copy_tree(kept, dest)
        Room.of(dest).make()
        return dest

    def grade_onto(self, clone: Path, tree: Path, base: str, *, setup: bool) -> Change:
        """Write the tool's change (`edge.change`) from its `clone` onto `tree`, a tree armbench
        made from what the trial started from (`base` and, with `setup`, what setup made there),
        the tool never saw: what setup made is read from `tree` itself before anything is
        written (its own status against `base`), and never graded; untracked files are graded
        unless `tree`'s ignore rules ignore them. Returns the change as written. Raises
        ChangeUnreadable, and OSError when writing fails (a full disk)."""
        made: frozenset[str] = frozenset()
        if setup:
            own = tree / ".git" / "index"
            before = read_change(tree, base, source=self.gitdir,
                                 index=own if own.is_file() else None, copied=True)
            made = before.paths | frozenset(before.left_out)
        kept = self._index_of(clone)
        upper = None if setup else _upper_of(clone)
        if upper is not None:  # the layer holds what the tool wrote, and nothing else
            change = read_upper(upper, clone, tree, self.tracked(base))
        else:
            change = read_change(clone, base, source=self.gitdir,
                                 index=kept if kept.exists() else None,
                                 settled=made | frozenset(self._settled(clone)))
        return apply_change(ignored_by(tree, change), clone, tree)

    def tracked(self, commit: str) -> frozenset[str]:
        """Every path `commit` tracks (read once per commit)."""
        with self._lock:
            if commit not in self._tracked:
                self._tracked[commit] = self._from_source(lambda: paths_at(self.gitdir, commit))
            return self._tracked[commit]

    def _settled(self, clone: Path) -> Settled:
        try:
            data = self._settled_of(clone).read_bytes()
        except OSError:
            return {}
        return {os.fsdecode(path): (stamp, tracked) for path, stamp, tracked in
                msgspec.msgpack.decode(data, type=list[tuple[bytes, KeptStamp | None, bool]])}

    def renew_git(self, clone: Path, commit: str) -> None:
        """Before a trial's judge and its check: the clone's `.git` (the tool's to write, and
        whatever git runs there would obey it) replaced by one made from the run's fetched copy
        of `commit`, its index the one kept when the clone was made; the old one goes to the
        trial's room, removed with it."""
        trash = Room.of(clone).base / f"tool-git-{secrets.token_hex(6)}"
        kept = self._index_of(clone)
        renew_git_dir(clone, commit, template=self._template(commit),
                      index=kept if kept.exists() else None, trash=trash)

    def diff(self, clone: Path, base: str, *, remember: bool = False,
             only: Change | None = None) -> bytes:
        """The trial's change from `base`, read without any git data of the clone's own; `only`
        the paths of a graded change (`grade_onto`), so the diff shows what was graded. With
        `remember` (a judged trial that keeps evidence) the diff is kept for `diff_once`, so the
        trial's evidence is the diff its judge read, not a second reading."""
        kept = self._index_of(clone)
        diff = work_diff(clone, base, source=self.gitdir, index=kept if kept.exists() else None,
                         settled=self._settled(clone) if only is None else None,
                         only=None if only is None else only.shown)
        if remember:
            with self._lock:
                self._diffs[(clone, base)] = diff
        return diff

    def diff_once(self, clone: Path, base: str, only: Change | None = None) -> bytes:
        """The diff `diff(..., remember=True)` read for this clone (then forgotten), or a new
        reading."""
        with self._lock:
            remembered = self._diffs.pop((clone, base), None)
        return self.diff(clone, base, only=only) if remembered is None else remembered

    def _index_of(self, clone: Path) -> Path:
        return self.root / "indexes" / clone.name

    def _settled_of(self, clone: Path) -> Path:
        return self.root / "indexes" / f"{clone.name}.settled"

    def stamps_of(self, clone: Path) -> dict[str, Stamp] | None:
        """The stamps `stamp_protected` took of this clone, if any (taken once: a second check
        of the same clone reads every file)."""
        return self._stamps.pop(clone, None)

    def added(self, task: PlannedTask) -> dict[str, FileBlob]:
        """check.add's files: from source.fix (read from the commit source, never a clone), and
        `{from, to}` entries from the suite's folder."""
        with self._lock:
            if task.id not in self._added:
                if task.add and task.fix is None:  # validation refuses this; never guess
                    raise AddPathMissing(task.add[0], "source.fix", "a task without source.fix")
                fix = task.fix
                found = self._from_source(lambda: read_files_at(self.gitdir, fix, task.add)) if fix else {}
                from_suite = {to: self._suite_file(source) for to, source in task.add_from.items()}
                self._added[task.id] = {**found, **from_suite}
            return self._added[task.id]
