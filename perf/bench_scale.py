"""Scale-out on a shared PostgreSQL ledger (a private cluster the benchmark starts and stops).

- **scaling**: a run of `trials` trials whose tool sleeps `sleep` s, worked by 1, 2, 4 and 8
  worker processes of 4 lanes each (each an `Engine` and a `LocalDriver` with `sole=False`, as
  `armbench work` runs them): trial throughput at each count against linear over 1 worker
  (target: at 8 workers at least 0.8x of linear), and the double leases in each log (target: 0).
- **per-step**: the engine's cost of one step (lease + report, one driver, an instant tool) on
  PostgreSQL against SQLite, as a ratio.

The workers are processes of the engine over the tests' fake host (`tests/fake_host.py`), so
the figure is the ledger's and the engine's, not the sandbox's or git's (bench_run and
bench_sandbox measure those).

`python -m perf.bench_scale [--trials N] [--sleep S]`: 128 trials by default; the issue's
figure is `--trials 2000` (about 500 s for the 1-worker round alone).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the fake host, the cluster
from fake_host import FakeHost  # noqa: E402
from postgres import fresh_database, private_cluster  # noqa: E402

from armbench.engine.local_driver import LocalDriver  # noqa: E402
from armbench.engine.protocol import Lease, Report  # noqa: E402
from armbench.engine.service import Engine, Workflow  # noqa: E402
from armbench.ledger.events import (  # noqa: E402
    LeaseExpired,
    LeaseRenewed,
    StepLeased,
    StepReported,
    StepSkipped,
    StepSpec,
)
from armbench.ledger.store import EventStore  # noqa: E402

__all__ = ["double_leases", "measure_per_step", "measure_scaling"]

LINEAR_TARGET, WORKERS, LANES = 0.8, (1, 2, 4, 8), 4
WORKFLOW = Workflow(name="scale", steps=[
    StepSpec(id="plan", kind="command", command="plan"),
    StepSpec(id="trials", kind="workflow", needs=["plan"], from_step="plan", independent=True),
    StepSpec(id="report", kind="command", command="report", final=True),
])


class ScaleHost(FakeHost):
    """The fake host with its trials spread over `lanes` lanes (one prompt step each)."""

    def __init__(self, trials: int, lanes: int) -> None:
        super().__init__(trials, checks=False)
        self.lanes = lanes

    def trial_steps(self) -> list[StepSpec]:
        return [StepSpec(id=f"trials.p{i}", kind="prompt", tool="t", workspace="clone",
                         lane=i % self.lanes + 1) for i in range(self.trials)]


def _now() -> datetime:
    return datetime.now(UTC)


def _engine(location: str, trials: int, lanes: int) -> Engine:
    counter = iter(range(10 ** 9))
    pid = os.getpid()
    return Engine(EventStore(location), ScaleHost(trials, lanes), clock=_now,
                  new_id=lambda p: f"{p}{pid}x{next(counter)}")


def _sleeper(sleep: float):  # type: ignore[no-untyped-def]
    def run(lease: Lease, *, cancel: object) -> Report:
        time.sleep(sleep)
        return Report(outcome="succeeded", exit_code=0)
    return run


def _worker(location: str, run: str, trials: int, lanes: int, sleep: float, name: str) -> None:
    engine = _engine(location, trials, lanes)
    LocalDriver(engine, tools={"t": _sleeper(sleep)}, commands=None, lanes=LANES, name=name,
                sole=False).drive(run)
    engine.store.close()


def double_leases(store: EventStore, run: str) -> int:
    """Steps leased while a live lease of another driver held them, in the run's log."""
    held: dict[str, str] = {}
    found = 0
    for e in store.events(run, kinds=(StepLeased, LeaseRenewed, LeaseExpired, StepReported,
                                      StepSkipped)):
        if isinstance(e, StepLeased):
            found += e.step in held
            held[e.step] = e.lease
        elif isinstance(e, LeaseExpired | StepReported | StepSkipped):
            held.pop(e.step, None)
    return found


def measure_scaling(server: str, trials: int, sleep: float,
                    workers: tuple[int, ...] = WORKERS) -> dict[int, dict[str, float]]:
    """Per worker count: wall seconds (with the processes' start), the log's span from the first
    trial's lease to the last trial's report, trials a second over that span, double leases."""
    out: dict[int, dict[str, float]] = {}
    ctx = multiprocessing.get_context("spawn")
    for n in workers:
        url = fresh_database(server)
        engine = _engine(url, trials, n * LANES)
        run = engine.start(WORKFLOW, inputs={}, timeout_s=10 ** 6, sandbox=True)
        procs = [ctx.Process(target=_worker, args=(url, run, trials, n * LANES, sleep,
                                                   f"w{i}")) for i in range(n)]
        began = time.perf_counter()
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        wall = time.perf_counter() - began
        events = [e for e in engine.store.events(run, kinds=(StepLeased, StepReported))
                  if isinstance(e, StepLeased | StepReported) and e.step.startswith("trials.")]
        reported = [e.at for e in events if isinstance(e, StepReported)]
        if len(reported) != trials or any(p.exitcode for p in procs):
            raise SystemExit(f"{n} workers reported {len(reported)} of {trials} trials")
        first = min(e.at for e in events if isinstance(e, StepLeased))
        span = (max(reported) - first).total_seconds()
        out[n] = {"wall_s": wall, "span_s": span, "per_s": trials / span,
                  "double": double_leases(engine.store, run)}
        engine.store.close()
    return out


def measure_per_step(server: str, folder: Path, steps: int) -> dict[str, float]:
    """Seconds a step (lease + report) costs one driver on SQLite and on PostgreSQL."""
    got: dict[str, float] = {}
    for name, location in (("sqlite", str(folder / "steps.sqlite")),
                           ("postgresql", fresh_database(server))):
        engine = _engine(location, steps, 1)
        run = engine.start(WORKFLOW, inputs={}, timeout_s=10 ** 6, sandbox=True)
        began = time.perf_counter()
        LocalDriver(engine, tools={"t": _sleeper(0)}, commands=None, lanes=1).drive(run)
        got[name] = (time.perf_counter() - began) / steps
        engine.store.close()
    got["ratio"] = got["postgresql"] / got["sqlite"]
    return got


@contextmanager
def _cluster() -> Iterator[tuple[str, Path]]:
    with tempfile.TemporaryDirectory(dir=os.environ.get("ARMBENCH_BENCH_DIR", "/tmp")) as d, \
            private_cluster(Path(d) / "pg") as server:
        yield server, Path(d)


def main(argv: list[str]) -> None:
    """Print one line per figure."""
    parser = argparse.ArgumentParser(prog="python -m perf.bench_scale")
    parser.add_argument("--trials", type=int, default=128)
    parser.add_argument("--sleep", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args(argv)
    with _cluster() as (server, folder):
        step = measure_per_step(server, folder, args.steps)
        print(f"per-step (lease + report, {args.steps} steps): sqlite "
              f"{step['sqlite'] * 1000:.2f} ms, postgresql {step['postgresql'] * 1000:.2f} ms, "
              f"{step['ratio']:.2f}x (informative)")
        got = measure_scaling(server, args.trials, args.sleep)
        base = got[1]["per_s"]
        for n, m in got.items():
            linear = m["per_s"] / (n * base)
            verdict = "" if n != max(got) else (
                "ok" if linear >= LINEAR_TARGET else "UNDER TARGET")
            print(f"scaling {n} worker(s) x {LANES} lanes, {args.trials} trials of "
                  f"{args.sleep:g} s: {m['span_s']:.1f} s first lease to last report "
                  f"({m['wall_s']:.1f} s with the processes' start), {m['per_s']:.2f} trials/s, "
                  f"{linear:.2f}x of linear, {m['double']:.0f} double leases "
                  f"{verdict}".rstrip())


if __name__ == "__main__":
    main(sys.argv[1:])
