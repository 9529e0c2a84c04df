"""One try of a task's check in a fresh clone, prepared in a run's order, from a temporary commit cache.

The order is the run's (`benchmark.trials.checks`): clone at the commit, setup, restore protect (at the
fix only), write add, run the check. The sources are a run's (`benchmark.trials.workspace.TrialSources`):
protected bytes come from startingCommit and added bytes from source.fix, both read from the
commit source, never from a clone; `{from, to}` entries come from the suite's folder as written
on disk, next to the task file. Setup and the check run without
the withheld variables, in the same sandbox a run's would (`edge.sandbox`). Nothing is written to
the checkout, its `.armbench/` or `~/.armbench`.
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from armbench.benchmark.trials.checks import check_in_clone, check_result, no_test_ran, run_setup
from armbench.benchmark.trials.workspace import TrialSources, remove_tree
from armbench.benchmark.tryout.files import TaskFiles, TryStopped
from armbench.benchmark.tryout.words import add_missing, setup_failed, suite_file_missing
from armbench.edge import nofollow
from armbench.edge.errors import AddPathMissing, CommitUnreachable
from armbench.edge.fetched import FetchedCommits
from armbench.edge.gitclone import CommitCache, FileBlob
from armbench.edge.proc import ProcResult
from armbench.edge.sandbox import Room, Sandbox
from armbench.ledger.events import PlannedTask
from armbench.suites.model import Check
from armbench.suites.plan import plan_task
from armbench.suites.validate import TaskEntry

__all__ = ["Attempt", "SharedCommits", "TryBench", "disk_suite_file"]

SUITE_FOLDER = "the suite folder on disk"


@dataclass(frozen=True)
class Attempt:
    """What the check did once: passed, failed, or could_not_run with its cause."""

    outcome: str
    """`passed`, `failed` or `could_not_run`."""
    exit_code: int | None
    """The check's exit code, when it exited."""
    cause: str
    """How it ended, in edge.proc's words (`ok`, `exit`, `not_found`, `timeout`, ...)."""
    output: str = ""
    """The tails of what the check printed (stdout, then stderr)."""
    duration_ms: int | None = None
    """How long the check ran."""


@dataclass(frozen=True)
class SharedCommits:
    """What the tries of one harvest share: the commit cache and the git dirs clones are copied
    from (`edge.fetched`), in a folder of the caller's, which it removes."""

    cache: CommitCache
    fetched: FetchedCommits

    @classmethod
    def under(cls, root: Path) -> SharedCommits:
        """Both in `root`, a work folder no sandbox mounts."""
        return cls(cache=CommitCache(root / "commits"), fetched=FetchedCommits(root / "fetched"))


def disk_suite_file(suite_dir: Path) -> Callable[[str], FileBlob]:
    """The suite's folder as written on disk (try runs on the files as written; a run reads the
    team mirror at the revision its plan froze, `benchmark.trials.workspace.team_suite_file`)."""
    def read(source: str) -> FileBlob:
        path = suite_dir / source
        try:
            return FileBlob(data=path.read_bytes(), mode=0o100644)
        except OSError:
            raise AddPathMissing(str(path), SUITE_FOLDER) from None
    return read


def _mode_of(path: Path) -> int:
    """The file's permission bits to keep (an executable stays one), 0o644 for a new file."""
    try:
        return 0o755 if os.lstat(path).st_mode & 0o111 else 0o644
    except OSError:
        return 0o644


class TryBench:
    """A try's temporary place: a trial's sources (the run's `TrialSources`) over a temporary
    commit cache, and the clones."""

    def __init__(self, files: TaskFiles, checkout: Path, progress: Callable[[str], None],
                 sandbox: Sandbox, suite_dir: Path, shared: SharedCommits | None = None) -> None:
        if files.task.check is None:
            raise ValueError("a task judged by successCriteria has no check to try")
        self.files, self.progress, self.sandbox = files, progress, sandbox
        self.check: Check = files.task.check
        self.task: PlannedTask = plan_task(TaskEntry(id=files.task_id, file="", task=files.task), "")
        self.start = self.task.starting_commit
        self.fix = self.task.fix
        self.root = Path(tempfile.mkdtemp(prefix="armbench-try-"))
        self._clones = itertools.count(1)
        try:
            cache = shared.cache if shared is not None else CommitCache(self.root / "commits")
            self.sources = TrialSources(files.suite.repo, [self.task], cache, checkout, self.root,
                                        disk_suite_file(suite_dir),
                                        fetched=shared.fetched if shared is not None else None)
            self.protected = self.sources.protected(self.task)
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
        return self.sources.protected_at(self.fix, self.task)

    def attempt(self, commit: str, *, restore: bool, write: Mapping[str, bytes | None] | None = None,
                timeout_s: float | None = None) -> Attempt:
        """Clone at `commit`, setup, restore protect (when `restore`), write add, run the check;
        with `write`, those files (None: removed) are written after setup, before the check (a
        mutant of the fix), and the check gets `timeout_s` where it is shorter than its own."""
        where = self.start[:7] if commit == self.start else f"the fix {commit[:7]}"
        clone = self.sources.fresh_clone(f"try-{next(self._clones)}", commit)
        limit = self.check.timeout_seconds if timeout_s is None else min(
            timeout_s, self.check.timeout_seconds)
        try:
            self._setup(clone, where)
            for rel, data in (write or {}).items():
                if data is None:
                    nofollow.remove(clone, rel)
                else:
                    nofollow.write_file(clone, rel, data, _mode_of(clone / rel), replace=True)
            _, wrong, proc = check_in_clone(
                clone, command=self.check.run, timeout_s=limit,
                added=self._add(), sandbox=self.sandbox, protect=self.check.protect,
                protected=self.protected if restore else None)
            if proc is None:
                raise TryStopped(f'Task "{self.files.task_id}" could not be tried at {where}: the '
                                 f"protected or added paths differ after writing them: {', '.join(wrong)}.")
        finally:
            remove_tree(clone)
            remove_tree(Room.of(clone).base)
        outcome, cause = check_result(proc), str(proc.cause)
        if outcome == "could_not_run" and write is None:
            self._tail(proc)
        elif outcome == "passed" and no_test_ran(proc) is not None:
            outcome, cause = "could_not_run", "no_tests_ran"  # exit 0 on no test decides nothing
        output = (proc.stdout_tail + b"\n" + proc.stderr_tail).decode(errors="replace").strip()
        return Attempt(outcome=outcome, exit_code=proc.exit_code, cause=cause, output=output,
                       duration_ms=proc.duration_ms)

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
        """check.add's files, as a run writes them (read once, after the first setup)."""
        if not (self.task.add or self.task.add_from):
            return {}
        try:
            return self.sources.added(self.task)
        except AddPathMissing as error:
            if error.commit == SUITE_FOLDER:
                raise TryStopped(suite_file_missing(self.files.task_id, self.start, error.path)) from None
            raise TryStopped(add_missing(self.files.task_id, self.start, error.path,
                                         error.commit)) from None

    def _tail(self, proc: ProcResult) -> None:
        text = (proc.stderr_tail or proc.stdout_tail).decode(errors="replace").strip()
        for line in text.splitlines()[-5:]:
            self.progress(f"  | {line}")
