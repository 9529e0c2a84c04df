"""Pausing Python's cycle collector while a run's log is decoded or projected.

A run of 10,000 trials decodes into some 60,000 events and projects into tens of thousands of
rows. None of it forms a reference cycle, so reference counting frees all of it, yet the cycle
collector, triggered by the allocations, rescans the growing heap again and again: about a third
of a replay's time. Inside `collector_paused()` it does not run; on leaving, the collector is
back as it was. Nested and concurrent uses (the local driver's lanes are threads) are counted,
and only the last one out turns it back on.

Where it is paused: once at each entry point that reads and projects a run, around the read and
the projection together, so nothing allocated is scanned until all of it is freed: the report
step (`BenchmarkHost._report`), `project_run`, `replay_run`, `verify_run` and `export_run` (and
the benchmark's own setup in `perf/bench_ledger.py`). The projections themselves never
pause it (they are pure). Under those, the store pauses it while it decodes a stream's rows, so
any other reader (`runs`, `explain`, `log`, the engine catching up) decodes without collections
too; inside an entry point that pause only counts one deeper.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cycle collection inside; the collector's earlier state restored after the last exit."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
