"""Progress while a run works, on stderr: a live block on a terminal, a plain line every few
seconds elsewhere (CI), or nothing with --quiet. The text is `projections.progress`'s; this
module only watches the ledger for new events and writes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Literal, TextIO

from armbench.ledger.store import EventStore
from armbench.projections.progress import Progress, evolve, is_step_line, live_lines, plain_line
from armbench.projections.text import printable

__all__ = ["Live", "Mode", "mode_for"]

Mode = Literal["live", "plain", "quiet"]
PLAIN_EVERY_S = 5.0
LIVE_EVERY_S = 0.5


def mode_for(stream: TextIO, quiet: bool) -> Mode:
    """live on a terminal, plain lines elsewhere, quiet when asked."""
    if quiet:
        return "quiet"
    return "live" if stream.isatty() else "plain"


class Live:
    """Watches one run's events and shows its progress; `say` prints other messages.

    While a run is watched, the per-step lines (a message whose subject is one of the run's
    trial steps) are left to the display (and dropped when quiet); everything else is printed
    as before.
    """

    def __init__(self, store: EventStore, clock: Callable[[], datetime], mode: Mode,
                 stream: TextIO = sys.stderr) -> None:
        self.store, self.clock, self.mode, self.stream = store, clock, mode, stream
        self.state = Progress()
        self._run: str | None = None
        self._seen = 0
        self._drawn = 0
        self._noted = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def say(self, message: str) -> None:
        """A message for people (progress's replacement while a run is watched)."""
        with self._lock:
            self._catch_up()
            if self._run is not None and is_step_line(self.state, message):
                return
            self._clear()
            print(printable(message), file=self.stream, flush=True)
            self._draw()

    def watch(self, run: str) -> None:
        """Start showing `run`'s progress (from a thread, until `stop`)."""
        self._run = run
        if self.mode == "quiet":
            return
        every = LIVE_EVERY_S if self.mode == "live" else PLAIN_EVERY_S
        self._thread = threading.Thread(target=self._loop, args=(every,), daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching; on a terminal the block is left as it last was."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        with self._lock:
            self._catch_up()
            if self.mode == "live":
                self._clear()
                self._draw()
            elif self.mode == "plain" and self.state.planned:
                print(plain_line(self.state, self.clock()), file=self.stream, flush=True)
            self._drawn = 0
            self._run = None

    def _catch_up(self) -> None:
        if self._run is None:
            return
        for rec in self.store.read(self._run, after=self._seen):
            evolve(self.state, rec.event)
            self._seen = rec.version
        if self.mode != "quiet" and len(self.state.notes) > self._noted:
            self._clear()
            for note in self.state.notes[self._noted:]:  # after each repetition round, once
                print(printable(note), file=self.stream, flush=True)
            self._noted = len(self.state.notes)
            self._drawn = 0

    def _loop(self, every: float) -> None:
        while not self._stop.wait(every):
            with self._lock:
                self._catch_up()
                if self.mode == "live":
                    self._clear()
                    self._draw()
                elif self.state.planned:
                    print(plain_line(self.state, self.clock()), file=self.stream, flush=True)

    def _clear(self) -> None:
        if self.mode == "live" and self._drawn:
            self.stream.write(f"\x1b[{self._drawn}F\x1b[J")

    def _draw(self) -> None:
        if self.mode != "live" or self._run is None or not self.state.planned:
            self._drawn = 0
            return
        lines = live_lines(self.state, self.clock())
        self.stream.write("".join(f"{line}\n" for line in lines))
        self.stream.flush()
        self._drawn = len(lines)
