"""A run's dashboard page and its Compare tab, served, against `armbench replay` of the same run.

Run from the repo root: `python -m perf.bench_dashboard [trials]` (10,000 by default).

The run is `bench_ledger`'s: the real decider drives 200 tasks x 5 arms x 10 repetitions into
a real SQLite ledger, with its record written as the report step writes it.

- ours: the dashboard served over HTTP on 127.0.0.1 (`edge.webserver` with `Site` over a fresh
  `Board`, so nothing is cached from a round before): GET the run's document, which the run's
  page reads, then GET it again, as the Compare tab does (the document holds the table and
  the pairs with their intervals; the second read finds the run's log unchanged).
- floor: `replay_run`, what `armbench replay <run>` does without its printing (the projection,
  the stored record read and compared).
Both are wall time, in alternating rounds; the ratio is the median of the rounds' ratios.
Target: at most 2x.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from armbench.benchmark.dashboard.pages import CSP, Site
from armbench.benchmark.dashboard.site import Board
from armbench.benchmark.records.reporting import report_events, write_report
from armbench.edge import webserver
from armbench.ledger.collector import collector_paused
from armbench.ledger.store import EventStore
from perf import bench_ledger

TARGET = 2.0


class Served:
    """The dashboard's server on a free port, whose Site is swapped for a fresh one per round."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.site = Site(Board(store))
        handler = webserver._handler(lambda path: self.site.respond(path), CSP)
        self.server = ThreadingHTTPServer((webserver.HOST, 0), handler)
        self.url = f"http://{webserver.HOST}:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def page_and_compare(self, run: str) -> int:
        """A cold run page, then its Compare tab: the bytes served."""
        self.site = Site(Board(self.store))
        got = 0
        for _ in range(2):
            with urllib.request.urlopen(f"{self.url}/data/run/{run}.js") as answer:
                body = answer.read()
                assert answer.status == 200 and b'"pairs":[{' in body
                got += len(body)
        return got

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _race(floor: Callable[[], Any], ours: Callable[[], Any], rounds: int) -> tuple[float, float, float]:
    floor(), ours()
    floors, ourses = [], []
    for n in range(rounds):
        took = {}
        for fn in ((floor, ours) if n % 2 == 0 else (ours, floor)):
            t = time.perf_counter()
            fn()
            took[fn] = time.perf_counter() - t
        floors.append(took[floor])
        ourses.append(took[ours])
    return min(floors), min(ourses), statistics.median(o / f for o, f in zip(ourses, floors, strict=True))


def measure(folder: Path, trials: int, rounds: int = 5) -> dict[str, float]:
    """The served run page and Compare tab against the replay, on one generated run."""
    store = EventStore(folder / "dashboard.sqlite")
    bench_ledger.generate(store, "r1", trials)
    runs_dir = folder / "runs"
    with collector_paused():
        write_report("r1", report_events(store, "r1"), "succeeded", runs_dir, bench_ledger.START)
    served = Served(store)
    try:
        size = served.page_and_compare("r1")
        floor_s, ours_s, ratio = _race(lambda: bench_ledger.ours_replay(store, "r1", runs_dir),
                                       lambda: served.page_and_compare("r1"), rounds)
    finally:
        served.close()
        store.close()
    return {"floor_s": floor_s, "ours_s": ours_s, "ratio": ratio, "bytes": size / 2}


def main(argv: list[str]) -> None:
    """One line: the replay, the served page and tab, the ratio and the target."""
    trials = int(argv[0]) if argv else 10_000
    with tempfile.TemporaryDirectory(dir=os.environ.get("ARMBENCH_BENCH_DIR", "/tmp")) as d:
        r = measure(Path(d), trials)
    verdict = "ok" if r["ratio"] <= TARGET else "OVER TARGET"
    print(f"dashboard {trials} trials: replay {r['floor_s']:.3f} s, run page + Compare tab served "
          f"{r['ours_s']:.3f} s ({r['bytes'] / 1e6:.1f} MB document), {r['ratio']:.2f}x "
          f"(target <= {TARGET}x) {verdict}")


if __name__ == "__main__":
    main(sys.argv[1:])
