"""The local driver: works a run in process, in lanes, only through `next` and `report`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Protocol

from aggregates.workflow import Caps
from engine.protocol import Done, Lease, Report, Wait
from engine.service import Engine

__all__ = ["LocalDriver", "StepRunner"]


class StepRunner(Protocol):
    """Runs one leased step (a tool's prompt, or a plain command) and says how it went."""

    def __call__(self, lease: Lease, *, cancel: threading.Event) -> Report: ...


class LocalDriver:
    """Drives a run to its end with `lanes` workers; Ctrl-C cancels and still reports."""

    def __init__(self, engine: Engine, *, tools: Mapping[str, StepRunner],
                 commands: StepRunner | None, lanes: int = 1, name: str = "local",
                 on_progress: Callable[[str], None] | None = None) -> None:
        self.engine, self.tools, self.commands = engine, dict(tools), commands
        self.lanes = max(1, lanes)
        self.caps = Caps(driver=name, tools=frozenset(self.tools), sole=True,
                         runs_commands=commands is not None)
        self.cancel = threading.Event()
        self._progress = on_progress or (lambda _m: None)
        self._done: Done | None = None
        self._error: BaseException | None = None

    def drive(self, run: str) -> Done:
        """Work the run until it ends; returns the done envelope's content."""
        workers = [threading.Thread(target=self._work, args=(run,), daemon=True)
                   for _ in range(self.lanes)]
        for w in workers:
            w.start()
        try:
            while any(w.is_alive() for w in workers):
                for w in workers:
                    w.join(timeout=0.2)
        except KeyboardInterrupt:
            self._progress("Cancelling: the trials not yet run will be reported not_run.")
            self.cancel.set()
            self.engine.cancel(run)
            for w in workers:
                w.join()
        if self._error is not None:
            raise self._error
        assert self._done is not None
        return self._done

    def _work(self, run: str) -> None:
        try:
            while True:
                got = self.engine.next(run, self.caps, prepare=True)
                if isinstance(got, Done):
                    self._done = got
                    return
                if isinstance(got, Wait):
                    time.sleep(got.retry_after_s)
                    continue
                self._run_lease(got)
        except BaseException as exc:  # surfaced to drive(); the other workers still finish
            self._error = exc
            self.cancel.set()

    def _run_lease(self, lease: Lease) -> None:
        runner = self.tools.get(lease.tool or "") if lease.kind == "prompt" else self.commands
        if runner is None:  # pragma: no cover - caps keep such steps away
            report = Report(outcome="error", cause="tool_unavailable")
        else:
            self._progress(f"{lease.step}: running")
            with self.engine._renewing(lease.run, lease.lease):
                report = runner(lease, cancel=self.cancel)
        self.engine.report(lease.run, lease.lease, lease.step, report)
