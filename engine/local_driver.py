"""The local driver: works a run in process, in lanes, only through `next` and `report`."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol

from armbench.aggregates.workflow import Caps
from armbench.engine.protocol import Done, Lease, Report, Wait, fault_report, host_error_report
from armbench.engine.service import Engine
from armbench.ledger.errors import LedgerError, UnknownLease

__all__ = ["LocalDriver", "StepRunner"]


class StepRunner(Protocol):
    """Runs one leased step (a tool's prompt, or a plain command) and says how it went."""

    def __call__(self, lease: Lease, *, cancel: threading.Event) -> Report: ...


class LocalDriver:
    """Drives a run to its end with `lanes` workers; Ctrl-C cancels and still reports."""

    def __init__(self, engine: Engine, *, tools: Mapping[str, StepRunner],
                 commands: StepRunner | None, lanes: int = 1, name: str = "local",
                 on_progress: Callable[[str], None] | None = None, sole: bool = True) -> None:
        """`sole`: this is the run's only driver, so a step whose tool it lacks is skipped;
        one of many drivers leaves such a step to the others. `tools` is asked for a runner
        only when a step needs it (its names make the driver's capabilities)."""
        self.engine, self.tools, self.commands = engine, tools, commands
        self.lanes = max(1, lanes)
        self.caps = Caps(driver=name, tools=frozenset(self.tools), sole=sole,
                         runs_commands=commands is not None)
        self.cancel = threading.Event()
        self._progress = on_progress or (lambda _m: None)
        self._done: Done | None = None
        self._error: BaseException | None = None

    def drive(self, run: str) -> Done:
        """Work the run until it ends; returns the done envelope's content.

        Ctrl-C, SIGTERM (how CI cancels a job) and SIGHUP (a closed terminal) cancel the run:
        the trials not yet reached settle not_run, the running steps' processes (the tools,
        setup, a check) are stopped at once, and the finally steps (the report) still run
        before this returns.
        """
        finished = [threading.Event() for _ in range(self.lanes)]
        for flag in finished:
            threading.Thread(target=self._work, args=(run, flag), daemon=True).start()
        with _stop_signals() as caught:
            while not all(flag.is_set() for flag in finished):
                try:
                    next(f for f in finished if not f.is_set()).wait(0.2)
                except KeyboardInterrupt:
                    caught.append(signal.SIGINT)
                if caught:
                    self._cancel(run, caught[-1])
        if self._error is not None:
            raise self._error
        if self._done is None:  # pragma: no cover - every worker ends with Done or an error
            raise RuntimeError(f"run {run}: the local driver stopped before the run ended")
        return self._done

    def _cancel(self, run: str, sig: int) -> None:
        if self.cancel.is_set():
            return
        self.cancel.set()
        self._progress(f"Cancelling ({signal.Signals(sig).name}): the running steps are stopped, "
                       "the trials not yet run will be reported not_run; the report still runs.")
        self.engine.cancel(run)

    def _work(self, run: str, finished: threading.Event) -> None:
        try:
            self._loop(run)
        except BaseException as exc:  # surfaced to drive(); the other workers finish their
            self._error = exc         # step, then stop: what is left, a resume finishes
        finally:
            finished.set()

    def _loop(self, run: str) -> None:
        while self._error is None:
            try:
                got = self.engine.next(run, self.caps, prepare=True)
                if isinstance(got, Done):
                    self._done = got
                    return
                if isinstance(got, Wait):
                    time.sleep(got.retry_after_s)
                    continue
                self._run_lease(got)
            except UnknownLease as exc:  # the lease lapsed and another driver took the step
                self._progress(f"{exc.message} This driver's result for it is dropped.")

    def _run_lease(self, lease: Lease) -> None:
        runner = self.tools.get(lease.tool or "") if lease.kind == "prompt" else self.commands
        if runner is None:  # pragma: no cover - caps keep such steps away
            report = Report(outcome="error", cause="tool_unavailable")
        else:
            self._progress(f"{lease.step}: running")
            with self.engine.renewing(lease.run, lease.lease):
                try:
                    report = runner(lease, cancel=self.cancel)
                except OSError as exc:  # a full disk, a clone gone: the step settles, no crash
                    report = fault_report(exc, f"step {lease.step}")
                except LedgerError:
                    raise
                except Exception as exc:  # a shape no code expected: the step settles
                    report = host_error_report(exc, f"step {lease.step}")
        self.engine.report(lease.run, lease.lease, lease.step, report)


@contextlib.contextmanager
def _stop_signals() -> Iterator[list[int]]:
    """While the run is driven, SIGINT, SIGTERM and SIGHUP are noted (the driver cancels) rather
    than ending the process; off the main thread (where no handler can be set) nothing changes."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return

    def note(sig: int, _frame: Any) -> None:
        caught.append(sig)

    kept = {sig: signal.signal(sig, note) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield caught
    finally:
        for sig, handler in kept.items():
            signal.signal(sig, handler)
