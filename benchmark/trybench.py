"""One try of a task's check in a fresh clone, prepared in a run's order, from a temporary commit cache.

The order is the run's (`benchmark.checks`): clone at the commit, setup, restore protect (at the
fix only), write add, run the check. Protected bytes come from startingCommit and added bytes from
source.fix, both read from the commit source, never from a clone. Setup and the check run without
the withheld variables, in the same sandbox a run's would (`edge.sandbox`). Nothing is written to
the checkout, its `.armbench/` or `~/.armbench`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmark.checks import check_in_clone, check_result, run_setup
from benchmark.tryfiles import TaskFiles, TryStopped
from benchmark.trywords import add_missing, setup_failed
from benchmark.workspace import remove_tree
from edge.errors import AddPathMissing, CommitUnreachable
from edge.gitclone import CommitCache, FileBlob, files_matching_at, make_isolated_clone, read_files_at
from edge.proc import ProcResult
from edge.sandbox import Room, Sandbox
from suites.model import Check

__all__ = ["Attempt", "TryBench"]


@dataclass(frozen=True)
class Attempt:
    """What the check did once: passed, failed, or could_not_run with its cause."""

    outcome: str
    """`passed`, `failed` or `could_not_run`."""
    exit_code: int | None
    """The check's exit code, when it exited."""
    cause: str
    """How it ended, in edge.proc's words (`ok`, `exit`, `not_found`, `timeout`, ...)."""


class TryBench:
    """A try's temporary place: the commit source, clones, and the bytes protect and add need."""

    def __init__(self, files: TaskFiles, checkout: Path, progress: Callable[[str], None],
                 sandbox: Sandbox) -> None:
        if files.task.check is None:
            raise ValueError("a task judged by successCriteria has no check to try")
        self.files, self.progress, self.sandbox = files, progress, sandbox
        self.check: Check = files.task.check
        self.start = files.task.starting_commit
        self.fix = files.task.source.fix if files.task.source else None
        self.root = Path(tempfile.mkdtemp(prefix="armbench-try-"))
        self._clones = 0
        self._added: dict[str, FileBlob] | None = None
        try:
            shas = [self.start, *([self.fix] if self.fix else [])]
            cache = CommitCache(self.root / "commits")
            self.gitdir = cache.source_for(files.suite.repo, shas, checkout)
            self.protected = files_matching_at(self.gitdir, self.start, self.check.protect)
        except CommitUnreachable as error:
            self.close()
            key = "startingCommit" if error.sha == self.start else "source.fix"
            raise TryStopped(f'Task "{files.task_id}" could not be tried: its {key} {error.sha} is in '
                             f"neither this checkout nor {error.repo}. Run armbench try in a checkout "
                             f"of the suite's repo, push the commit there, or fix {key}.") from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Remove the clones and the temporary commit cache."""
        remove_tree(self.root)

    def at_fix_protected(self) -> dict[str, FileBlob]:
        """The protected paths as source.fix has them."""
        assert self.fix is not None
        return files_matching_at(self.gitdir, self.fix, self.check.protect)

    def attempt(self, commit: str, *, restore: bool) -> Attempt:
        """Clone at `commit`, setup, restore protect (when `restore`), write add, run the check."""
        where = self.start[:7] if commit == self.start else f"the fix {commit[:7]}"
        self._clones += 1
        clone = self.root / "clones" / str(self._clones)
        clone.parent.mkdir(parents=True, exist_ok=True)
        make_isolated_clone(self.gitdir, commit, clone)
        room = Room.of(clone).make()
        try:
            self._setup(clone, where)
            _, wrong, proc = check_in_clone(
                clone, command=self.check.run, timeout_s=self.check.timeout_seconds,
                added=self._add(), sandbox=self.sandbox, protect=self.check.protect,
                protected=self.protected if restore else None)
            if proc is None:
                raise TryStopped(f'Task "{self.files.task_id}" could not be tried at {where}: the '
                                 f"protected or added paths differ after writing them: {', '.join(wrong)}.")
        finally:
            remove_tree(clone)
            remove_tree(room.base)
        outcome = check_result(proc)
        if outcome == "could_not_run":
            self._tail(proc)
        return Attempt(outcome=outcome, exit_code=proc.exit_code, cause=proc.cause)

    def _setup(self, clone: Path, where: str) -> None:
        setup = self.files.suite.setup
        if not setup:
            return
        proc = run_setup(setup, clone, self.files.suite.timeout_seconds, self.sandbox)
        assert proc is not None
        if proc.cause != "ok":
            self._tail(proc)
            cause = f"exit {proc.exit_code}" if proc.cause == "exit" else proc.cause
            raise TryStopped(setup_failed(self.files.task_id, setup, where, cause))

    def _add(self) -> dict[str, FileBlob]:
        """check.add's files as source.fix has them (read once, after the first setup)."""
        if self._added is None:
            paths = [entry for entry in self.check.add if isinstance(entry, str)]
            try:
                self._added = read_files_at(self.gitdir, self.fix, paths) if paths and self.fix else {}
            except AddPathMissing as error:
                raise TryStopped(add_missing(self.files.task_id, self.start, error.path,
                                             error.commit)) from None
        return self._added

    def _tail(self, proc: ProcResult) -> None:
        text = (proc.stderr_tail or proc.stdout_tail).decode(errors="replace").strip()
        for line in text.splitlines()[-5:]:
            self.progress(f"  | {line}")
