"""The ledger's read paths at scale, each against a floor measured in the same run.

Run from the repo root: `python -m benchmarks.bench_ledger [trials]` (10,000 by default).

The log is realistic and real: the pure decider (`aggregates.workflow`) drives a run of 200 tasks
x 5 arms x 10 repetitions in 4 lanes, an instant fake host adds what the benchmark host would
(PlanFrozen, CheckRan, usage, RecordWritten), and every event goes through `EventStore.append`
into a SQLite ledger in a temp dir under `$ARMBENCH_BENCH_DIR` (default `/tmp`).

- replay: read, fold and project the whole run as `armbench replay` does (`store.read`,
  `fold_run`, `build_table`, `build_record`). Floor: the run's stored bytes read with sqlite3 and
  msgspec-decoded into the event union, counted by kind. Target: at most 2x.
- replay-read: only the reading half of that (`store.read` + `fold_run`), against the same floor.
  Target: at most 2x.
- replay-memory: tracemalloc's peak for that replay with 9 other runs of the same size in the
  ledger, against the peak with the run alone. Target: at most 1.1x.
- resume: a driver died holding the next trial's lease; a fresh engine catches up with the log,
  expires that lease and leases the trial again (`Engine.next`). Measured with 100 and with
  10,000 trials already reported (of 10,100). Floor: the same run's stored bytes read and
  decoded. Target: at most 4x each (catching up is a decode and a fold), and the two ratios
  within 2x of each other (no work that grows faster than the log).

Each figure is the best of 5 rounds of CPU time (`time.process_time`: both sides are
single-threaded and CPU-bound, and CPU time does not count the waits a shared machine adds),
the floor and ours taking turns after a warm-up.
"""

from __future__ import annotations

import os
import sqlite3
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import msgspec

from aggregates.workflow import Caps, LeaseStep, ReportStep, decide_next, decide_report, evolve, initial_state
from benchmark.audit import Replay, replay_run
from benchmark.reporting import Projected, project, report_events, write_report
from benchmark.run import DEFAULT_WORKFLOW
from engine.protocol import HostOutcome, Lease, Prepared
from engine.service import Engine
from ledger.collector import collector_paused
from ledger.events import (
    Agent,
    CheckRan,
    Cost,
    Event,
    PlanFrozen,
    PlannedArm,
    PlannedTask,
    PlannedTrial,
    RecordWritten,
    RunStarted,
    StepLeased,
    StepReported,
    StepSpec,
    StepsPlanned,
    Usage,
    WorkspacePrepared,
)
from ledger.store import EventStore
from suites.plan import trial_steps

__all__ = ["generate", "measure_replay", "measure_resume"]

REPLAY_TARGET, MEMORY_TARGET, RESUME_TARGET, GROWTH_TARGET = 2.0, 1.1, 4.0, 2.0
START = datetime(2026, 1, 1, tzinfo=UTC)
CAPS = Caps(driver="bench", tools=frozenset({"claude", "codex"}))


def make_plan(trials: int, lanes: int = 4) -> PlanFrozen:
    """A plan of `trials` trials: tasks x 5 arms x 10 repetitions."""
    arms = [PlannedArm(name=f"arm{i}", tool=("claude", "codex")[i % 2], model=f"model-{i}-2026",
                       effort="high", team={"kind": "pulled", "revision": "a" * 40}) for i in range(5)]
    tasks = [PlannedTask(id=f"task-{i:04d}", title=f"Fix bug {i}", source_hash="c" * 64,
                         starting_commit=f"{i:040x}", prompt="Fix the failing login flow. " * 12,
                         check_run="pytest -q tests/test_login.py", protect=["tests/**"])
             for i in range(max(1, trials // 50))]
    plan: list[PlannedTrial] = []
    for rep in range(10):
        for task in tasks:
            for arm in arms:
                n = len(plan)
                base = f"trials.lane{n % lanes + 1}.r{rep}.{task.id}.{arm.name}"
                plan.append(PlannedTrial(task=task.id, arm=arm.name, repetition=rep, order=n,
                                         lane=n % lanes + 1, prompt_step=f"{base}.prompt",
                                         check_step=f"{base}.check"))
    return PlanFrozen(suite="bench", suite_hash="s" * 64, repo="https://example.invalid/bench",
                      repetitions=10, parallel=lanes, timeout_s=10 ** 7, trial_timeout_s=900,
                      baseline_team_revision="a" * 40, tasks=tasks, arms=arms, trials=plan[:trials])


def _done(step: StepSpec, lease: str, at: datetime) -> tuple[list[Event], StepReported]:
    """What the host (or a driver) adds for a step, and its report."""
    task = step.tags.get("task", "")
    if step.kind == "prompt":
        return [WorkspacePrepared(step=step.id, lease=lease, path=f"/w/{lease}", commit="b" * 40,
                                  duration_ms=230)], StepReported(
            step=step.id, lease=lease, outcome="succeeded", at=at, exit_code=0, cause="ok",
            duration_ms=61_000, usage=Usage(tokens={"input": 12_000, "output": 900},
                                            cost=Cost(amount=0.21, unit="USD")),
            agent=Agent(tool=step.tool, model_requested=step.model, model_reported=step.model,
                        team_revision="a" * 40, project_commit="b" * 40, session_id=lease))
    if step.id.startswith("trials.baselines."):
        return [CheckRan(step=step.id, task=task, kind="baseline", result="failed", exit_code=1,
                         duration_ms=4000)], StepReported(step=step.id, lease=lease, at=at,
                                                          outcome="succeeded", cause="failed")
    if step.id.endswith(".check"):
        result = "passed" if zlib.crc32(step.id.encode()) % 3 else "failed"
        return [CheckRan(step=step.id, task=task, kind="trial", result=result, duration_ms=4000,
                         exit_code=0 if result == "passed" else 1)], StepReported(
            step=step.id, lease=lease, at=at, outcome="succeeded", duration_ms=4000)
    return [], StepReported(step=step.id, lease=lease, at=at, outcome="succeeded")


def generate(store: EventStore, run: str, trials: int, *, reported: int | None = None) -> datetime:
    """Write a run through the store; with `reported`, stop holding the next trial's lease."""
    plan, state, at, buffer, version, prompts = make_plan(trials), initial_state(), START, [], 0, 0

    def apply(events: list[Event]) -> None:
        for e in events:
            evolve(state, e)
        buffer.extend(events)

    apply([RunStarted(run=run, workflow=DEFAULT_WORKFLOW.name, timeout_s=10 ** 7, at=at,
                      source_hash=DEFAULT_WORKFLOW.source_hash(), inputs={"suite": "bench"}),
           StepsPlanned(parent=None, steps=DEFAULT_WORKFLOW.steps)])
    while state.ended is None:
        at += timedelta(seconds=1)
        events = decide_next(state, LeaseStep(caps=CAPS, lease=f"l{state.version}", now=at,
                                              ttl=timedelta(seconds=60)))
        apply(events)
        if events and isinstance(leased := events[-1], StepLeased):
            step = state.steps[leased.step].spec
            extra, report = _done(step, leased.lease, at)
            if step.kind == "prompt" and prompts == reported:
                apply(extra)
                break
            prompts += step.kind == "prompt"
            outputs = {"definition": msgspec.to_builtins(trial_steps(plan))} if step.id == "plan" else {}
            extra = [plan] if step.id == "plan" else extra
            extra = [RecordWritten(sha256="0" * 64, at=at)] if step.id == "report" else extra
            report = msgspec.structs.replace(report, outputs=outputs)
            apply([*extra, *decide_report(state, ReportStep(lease=leased.lease, now=at, report=report))])
        if len(buffer) >= 2000 or state.ended is not None:
            version = store.append(run, buffer, expected_version=version)
            buffer.clear()
    store.append(run, buffer, expected_version=version)
    return at


def _rows(path: str, run: str) -> list[tuple[bytes]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT state FROM events WHERE originator_id = ? ORDER BY "
                          "originator_version", (run,)).fetchall()


def floor_read(path: str, run: str) -> Counter[str]:
    """Reading a run at the least cost: the stored bytes, every event decoded, counted by kind."""
    decoder = msgspec.json.Decoder(_Envelope)
    return Counter(type(decoder.decode(state).event).__name__ for (state,) in _rows(path, run))


def floor_fold(path: str, run: str) -> dict[str, list[int]]:
    """The plain msgspec decode-and-fold: read the run's stored bytes with sqlite3, decode every
    event into the union, and fold them into each arm's passed and planned trials."""
    decoder = msgspec.json.Decoder(_Envelope)
    arm_of: dict[str, str] = {}
    counts: dict[str, list[int]] = {}
    for (state,) in _rows(path, run):
        event = decoder.decode(state).event
        if type(event) is PlanFrozen:
            for t in event.trials:
                arm_of[t.check_step] = t.arm
                counts.setdefault(t.arm, [0, 0])[1] += 1
        elif type(event) is CheckRan and event.result == "passed" and event.step in arm_of:
            counts[arm_of[event.step]][0] += 1
    return counts


class _Envelope(msgspec.Struct):
    event: Event


def ours_table(store: EventStore, run: str) -> Projected:
    """The report step's projection: the run's events read from the store (`report_events`) and
    projected into the table and the record (`project`)."""
    return project(run, report_events(store, run), None)


def ours_replay(store: EventStore, run: str, runs_dir: Path) -> Replay:
    """`armbench replay <run>` without its printing: the projection, the stored record read and
    compared with it."""
    got = replay_run(store, run, runs_dir, write=False, now=lambda: START)
    assert got.record_found and not got.changes, got.changes
    return got


def _paused(fn: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        with collector_paused():
            return fn()
    return run


def _race(floor: Callable[[], Any], ours: Callable[[], Any], rounds: int) -> tuple[float, float]:
    """Each one's best CPU time over `rounds`, in turns after a warm-up (imports, page cache)."""
    times: dict[int, list[float]] = {0: [], 1: []}
    floor(), ours()
    for _ in range(rounds):
        for i, fn in enumerate((floor, ours)):
            t = time.process_time()
            fn()
            times[i].append(time.process_time() - t)
    return min(times[0]), min(times[1])


def _peak(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def _copy_run(path: str, run: str, copies: int) -> None:
    with sqlite3.connect(path) as db:
        for i in range(copies):
            db.execute("INSERT INTO events SELECT ?, originator_version, topic, state FROM events "
                       "WHERE originator_id = ?", (f"other{i}", run))


def measure_replay(folder: Path, trials: int, rounds: int = 5) -> dict[str, float]:
    """The table and the replay against the plain fold; memory with 9 other runs against alone."""
    store = EventStore(folder / "replay.sqlite")
    generate(store, "r1", trials)
    runs_dir = folder / "runs"
    write_report("r1", report_events(store, "r1"), "succeeded", runs_dir, START)
    path = store.path
    floor_t, table = _race(lambda: floor_fold(path, "r1"), lambda: ours_table(store, "r1"), rounds)
    floor_r, replay = _race(lambda: floor_fold(path, "r1"),
                            lambda: ours_replay(store, "r1", runs_dir), rounds)
    floor_p, replay_p = _race(_paused(lambda: floor_fold(path, "r1")),
                              lambda: ours_replay(store, "r1", runs_dir), rounds)
    alone = _peak(lambda: ours_replay(store, "r1", runs_dir))
    _copy_run(path, "r1", 9)
    crowded = _peak(lambda: ours_replay(store, "r1", runs_dir))
    events = sum(floor_read(path, "r1").values())
    store.close()
    return {"events": events, "floor_table_s": floor_t, "table_s": table,
            "table_ratio": table / floor_t, "floor_s": floor_r, "ours_s": replay,
            "ratio": replay / floor_r, "floor_paused_s": floor_p, "ours_paused_s": replay_p,
            "paused_ratio": replay_p / floor_p, "peak_alone_mb": alone / 1e6,
            "peak_crowded_mb": crowded / 1e6, "memory_ratio": crowded / alone}


class _InstantHost:
    """A host that prepares a workspace at once and runs nothing itself."""

    def runs_itself(self, spec: StepSpec) -> bool:
        return False

    def execute(self, run: str, spec: StepSpec, *, workspace: str | None, run_state: str) -> HostOutcome:
        raise AssertionError("the resume benchmark leases a prompt step")

    def prepare(self, run: str, spec: StepSpec, lease: str) -> Prepared:
        return Prepared(path=f"/w/{lease}", commit="b" * 40, duration_ms=1)

    def abandoned(self, run: str, lease: str, workspace: str | None) -> None:
        if workspace:
            self.release(run, workspace)

    def release(self, run: str, workspace: str) -> None:
        pass

    def finished(self, run: str) -> None:
        pass


def measure_resume(folder: Path, trials: int, reported: int, rounds: int = 5) -> dict[str, float]:
    """A fresh engine's catch-up and next lease after a dead driver, against reading the log."""
    store = EventStore(folder / f"resume-{reported}.sqlite")
    at = generate(store, "r1", trials, reported=reported)
    hours = iter(range(1, 10 ** 6))

    def resume() -> None:
        now = at + timedelta(hours=next(hours))  # past every earlier lease, so one expires
        engine = Engine(store, _InstantHost(), clock=lambda: now, new_id=lambda p: f"{p}{now}")
        got = engine.next("r1", CAPS)
        assert isinstance(got, Lease) and got.step.endswith(".prompt"), got

    floor, ours = _race(lambda: floor_read(store.path, "r1"), resume, rounds)
    events = sum(floor_read(store.path, "r1").values())
    store.close()
    return {"events": events, "floor_s": floor, "ours_s": ours, "ratio": ours / floor}


def main(argv: list[str]) -> None:
    """Print one line per figure: floor, ours, the ratio and the target."""
    trials = int(argv[0]) if argv else 10_000
    with tempfile.TemporaryDirectory(dir=os.environ.get("ARMBENCH_BENCH_DIR", "/tmp")) as d:
        r = measure_replay(Path(d), trials)
        print(f"table {trials} trials ({r['events']} events): floor {r['floor_table_s']:.3f} s, "
              f"ours {r['table_s']:.3f} s, {r['table_ratio']:.2f}x (target <= {REPLAY_TARGET}x)")
        print(f"replay: floor {r['floor_s']:.3f} s, ours {r['ours_s']:.3f} s, {r['ratio']:.2f}x "
              f"(target <= {REPLAY_TARGET}x)")
        print(f"replay-paused-floor (informative: the floor with the cycle collector paused too): "
              f"floor {r['floor_paused_s']:.3f} s, ours {r['ours_paused_s']:.3f} s, "
              f"{r['paused_ratio']:.2f}x")
        print(f"replay-memory: peak {r['peak_alone_mb']:.1f} MB alone, {r['peak_crowded_mb']:.1f} "
              f"MB beside 9 other runs, {r['memory_ratio']:.2f}x (target <= {MEMORY_TARGET}x)")
        few = measure_resume(Path(d), trials + 100, 100)
        many = measure_resume(Path(d), trials + 100, trials)
        for n, m in ((100, few), (trials, many)):
            print(f"resume after {n} reported ({m['events']} events): floor {m['floor_s']:.3f} s, "
                  f"ours {m['ours_s']:.3f} s, {m['ratio']:.2f}x (target <= {RESUME_TARGET}x)")
        print(f"resume growth: {many['ratio'] / few['ratio']:.2f}x between the two ratios "
              f"(target <= {GROWTH_TARGET}x)")


if __name__ == "__main__":
    main(sys.argv[1:])
