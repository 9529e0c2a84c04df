"""A task's check, on a clean baseline clone or after a trial, in the spec's one order:
clone at the commit, setup, restore protect (a trial's check only), write add, run the check."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from armbench.benchmark.trials.workspace import TrialSources, discard
from armbench.edge.change import Change
from armbench.edge.errors import AddPathMissing, EdgeError
from armbench.edge.gitclone import FileBlob, safe_git_env
from armbench.edge.proc import WITHHELD, ProcResult, run_step, step_env
from armbench.edge.protect import Stamp, restore_protected, verify_files, write_files
from armbench.edge.sandbox import Launch, Room, Sandbox
from armbench.edge.shadowing import added_shadowing
from armbench.ledger.events import CheckRan, PlannedTask
from armbench.suites.runsummary import NoTestRan
from armbench.suites.runsummary import no_test_ran as find_no_test_ran

__all__ = ["Graded", "check_env", "check_in_clone", "check_result", "no_test_ran", "no_test_words",
           "run_baseline", "run_setup", "run_trial_check"]


def check_env(launch: Launch, withhold: Sequence[str] = WITHHELD) -> dict[str, str]:
    """The environment of setup and the check: armbench's own, credentials withheld (`withhold`;
    a best-effort run's setup withholds none), the sandbox's home, temp folder (and, for a
    check, PATH and the variables of CHECK_ENV), and for every git they start no system or
    global config and `SAFE_GIT_CONFIG` over the repository's own."""
    return step_env(os.environ, withhold=withhold, extra={**launch.env, **safe_git_env()})


Seen = Callable[[Literal["setup", "check"], ProcResult], None]
"""Told each setup (`"setup"`) and check (`"check"`) that ran, with how it ended and what it
printed: how the host keeps their output as evidence."""


def _run(command: str, launch: Launch, timeout_s: float | None,
         cancel: threading.Event | None, withhold: Sequence[str] = WITHHELD) -> ProcResult:
    return run_step(command, cwd=launch.cwd, env=check_env(launch, withhold), timeout_s=timeout_s,
                    cancel=cancel, sandbox=launch.argv, merge_stderr=True, limits=launch.limits,
                    enter=launch.enter)


def check_result(proc: ProcResult) -> str:
    """passed (exit 0), failed (ran to the end and failed), or could_not_run."""
    return {"ok": "passed", "exit": "failed"}.get(proc.cause, "could_not_run")


def no_test_ran(proc: ProcResult) -> NoTestRan | None:
    """A check that exited 0 whose test runner's summary counts no test that ran (every test
    skipped or deselected, none found): it decided nothing (`suites.runsummary`)."""
    if proc.cause != "ok":
        return None
    return find_no_test_ran((proc.stdout_tail + b"\n" + proc.stderr_tail).decode(errors="replace"))


def no_test_words(found: NoTestRan) -> str:
    """The sentence a check that ran no test gets."""
    return (f"The check exited 0 but ran no test: {found.runner} said \"{found.said}\" (every test "
            "skipped or deselected, or none found), so it decided nothing.")


def check_in_clone(clone: Path, *, command: str, timeout_s: float | None,
                   added: Mapping[str, FileBlob], sandbox: Sandbox, protect: Sequence[str] = (),
                   protected: Mapping[str, FileBlob] | None = None,
                   stamps: Mapping[str, Stamp] | None = None,
                   cancel: threading.Event | None = None
                   ) -> tuple[list[str], list[str], ProcResult | None]:
    """Restore protect (when `protected` is given), write add, verify, run the check in a fresh
    sandbox (an empty home and /tmp, no network) that the trial's steps never touched.

    Returns (restored, wrong, proc): the paths put back, the paths that still differ after
    writing (then the check does not run and proc is None), and how the check ended.
    """
    restored: list[str] = []
    written = dict(added)
    if protected is not None:
        restored = restore_protected(clone, protect, protected, stamps)
        written = {**{p: protected[p] for p in restored if p in protected}, **added}
    write_files(clone, added)
    wrong = verify_files(clone, written)
    if wrong:
        return restored, wrong, None
    return restored, [], _run(command, sandbox.launch(Room.of(clone), fresh=True), timeout_s,
                              cancel)


def run_setup(setup: str | None, clone: Path, timeout_s: float | None,
              sandbox: Sandbox, cancel: threading.Event | None = None,
              withhold: Sequence[str] = WITHHELD) -> ProcResult | None:
    """Run the suite's setup in a clone, in the trial's room (its home and /tmp, made with the
    clone); None when there is none. `cancel` stops it at once (its process group killed);
    `withhold`, the variables it never sees (none in a best-effort run)."""
    if not setup:
        return None
    return _run(setup, sandbox.launch(Room.of(clone)), timeout_s, cancel, withhold)


def _added(task: PlannedTask, sources: TrialSources) -> dict[str, FileBlob]:
    return sources.added(task) if task.add or task.add_from else {}


def _verdict(step: str, task: PlannedTask, kind: str, proc: ProcResult,
             restored: list[str]) -> CheckRan:
    result = check_result(proc)
    cause: str | None = proc.cause if result == "could_not_run" else None
    message = f"The check was stopped by its {proc.limit} limit." if proc.limit else None
    if result == "passed" and (none := no_test_ran(proc)) is not None:
        # a trial's check that ran no test is no pass; a baseline's could not judge the task
        result, cause, message = ("failed" if kind == "trial" else "could_not_run", "no_tests_ran",
                                  no_test_words(none))
    return CheckRan(step=step, task=task.id, kind=kind, result=result, cause=cause,  # type: ignore[arg-type]
                    exit_code=proc.exit_code, signal=proc.signal, timed_out=proc.timed_out,
                    duration_ms=proc.duration_ms, restored=restored, message=message)


def _could_not(step: str, task: PlannedTask, kind: str, cause: str, message: str) -> CheckRan:
    return CheckRan(step=step, task=task.id, kind=kind, result="could_not_run",  # type: ignore[arg-type]
                    cause=cause, message=message)


def _shadowing(step: str, task: PlannedTask, names: list[str]) -> CheckRan:
    """The change adds modules that would be imported instead of the standard library's or the
    runner's: the check does not run on it, and the trial fails (`shadows_module`)."""
    listed = ", ".join(names)
    return CheckRan(step=step, task=task.id, kind="trial", result="failed", cause="shadows_module",
                    message=(f"The change adds {listed} at the clone's root, named like a module of "
                             "Python's standard library or of a test runner, which the check would "
                             "import instead of the real one; the check did not run on it. A fix "
                             "that needs such a module keeps it inside the project's package."))


def run_baseline(step: str, task: PlannedTask, sources: TrialSources, setup: str | None,
                 time_left: Callable[[], float | None], sandbox: Sandbox,
                 cancel: threading.Event | None = None, seen: Seen | None = None,
                 prepared: Callable[[], Path | ProcResult] | None = None,
                 withhold: Sequence[str] = WITHHELD) -> CheckRan:
    """Setup (withholding `withhold`) and the check once on a clean clone at startingCommit,
    before any trial; with
    `prepared` (`trial: {setup: once}`), the check on a copy of the task's prepared tree, which
    gives setup's result instead when setup failed in it."""
    if prepared is None:
        clone = sources.fresh_clone(step, task.starting_commit)
    else:
        try:
            got = prepared()
        except EdgeError as exc:
            return _could_not(step, task, "baseline", "setup_failed", str(exc))
        if isinstance(got, ProcResult):
            if seen is not None:
                seen("setup", got)
            return _could_not(step, task, "baseline", "setup_failed",
                              f"setup failed at {task.starting_commit[:7]} ({got.cause})")
        clone = got
    try:
        proc = run_setup(setup if prepared is None else None, clone, time_left(), sandbox, cancel,
                         withhold)
        if proc is not None and proc.cause != "ok":
            if seen is not None:
                seen("setup", proc)
            return _could_not(step, task, "baseline", "setup_failed",
                              f"setup failed at {task.starting_commit[:7]} ({proc.cause})")
        return _check(step, task, "baseline", clone, sources, time_left, sandbox, restore=False,
                      cancel=cancel, seen=seen)
    finally:
        discard(clone)


Graded = tuple[Path, Change]
"""A trial's check tree (made by armbench from what the trial started from, never seen by the
tool) with the tool's change written onto it, and that change (`TrialSources.grade_onto`)."""


def run_trial_check(step: str, task: PlannedTask, sources: TrialSources, clone: Path,
                    time_left: Callable[[], float | None], sandbox: Sandbox,
                    cancel: threading.Event | None = None, seen: Seen | None = None,
                    graded: Graded | None = None) -> CheckRan:
    """Restore protect, write add and run the check on `graded`'s tree (`check.tree: change`,
    the default), or in the trial's own clone given a git dir armbench made (`check.tree:
    clone`: the tool's `.git` never runs in the check). The clone (and the trial's home and
    /tmp) is removed by the engine once the check's result is recorded, so a driver killed
    before that leaves it for the check to run again on. A clone that is gone (removed by hand,
    or by a full disk's cleanup) is a check that could not run, never a crash."""
    if not clone.is_dir():
        return _could_not(step, task, "trial", "workspace_lost",
                          f"the trial's clone {clone} is gone, so its check could not run on "
                          "the tool's work")
    if graded is not None:
        tree, change = graded
        checked = _check(step, task, "trial", tree, sources, time_left, sandbox, restore=True,
                         cancel=cancel, seen=seen)
        return msgspec.structs.replace(checked, graded="change", ungraded=list(change.left_out[:50]))
    try:
        sources.renew_git(clone, task.starting_commit)
    except EdgeError as exc:
        return _could_not(step, task, "trial", "prepare_failed",
                          f"the clone's git dir could not be made anew: {exc}")
    checked = _check(step, task, "trial", clone, sources, time_left, sandbox, restore=True,
                     cancel=cancel, seen=seen)
    return msgspec.structs.replace(checked, graded="clone")


def _check(step: str, task: PlannedTask, kind: str, clone: Path, sources: TrialSources,
           time_left: Callable[[], float | None], sandbox: Sandbox, *, restore: bool,
           cancel: threading.Event | None = None, seen: Seen | None = None) -> CheckRan:
    try:
        added = _added(task, sources)
    except AddPathMissing as exc:
        return _could_not(step, task, kind, "trial_prepare_failed", str(exc))  # the spec's code
    if restore and (shadowing := added_shadowing(clone, sources.root_names(task.starting_commit))):
        return _shadowing(step, task, shadowing)
    limits = [x for x in (task.check_timeout_s, time_left()) if x is not None]
    restored, wrong, proc = check_in_clone(
        clone, command=task.check_run or "false", timeout_s=min(limits) if limits else None,
        added=added, sandbox=sandbox, protect=task.protect,
        protected=sources.protected(task) if restore else None,
        stamps=sources.stamps_of(clone) if restore else None, cancel=cancel)
    if proc is None:
        return _could_not(step, task, kind, "prepare_failed",
                          f"protected or added paths differ after writing: {', '.join(wrong)}")
    if seen is not None:
        seen("check", proc)
    return _verdict(step, task, kind, proc, restored)
