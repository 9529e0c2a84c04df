"""The ledger's read paths at scale, each against a floor measured in the same run.

Run from the repo root: `python -m perf.bench_ledger [trials]` (10,000 by default).

The log is realistic and real: the pure decider (`aggregates.workflow`) drives a run of 200 tasks
x 5 arms x 10 repetitions in 4 lanes, an instant fake host adds what the benchmark host would
(PlanFrozen, CheckRan, usage, RecordWritten), and every event goes through `EventStore.append`
into a SQLite ledger in a temp dir under `$ARMBENCH_BENCH_DIR` (default `/tmp`).

- table: the report step's projection of the whole run (`project_run`: the kinds the table and
  the record fold, read from the store and decoded, then `fold_run`, the record's trial
  entries, the table with its pairs, and the record). Floor (`floor_fold`): the plain msgspec
  decode-and-fold of the same events: the run's stored bytes read with sqlite3, every event
  decoded into the union, folded into each arm's passed, failed, error and not_run counts (the
  benchmark checks they equal the table's). Target: at most 2x.
- replay: `armbench replay <run>` without its printing (`replay_run`: the projection, then the
  stored record read and compared with the rebuilt one), against the same floor. Target: at
  most 2x.
- replay-paused-floor (informative): the same replay against the floor run with the cycle
  collector paused too, as armbench pauses it for itself (`ledger/collector.py`).
- replay-memory: tracemalloc's peak for a replay with 9 other runs of the same size in the
  ledger, against the peak with the run alone. Target: at most 1.1x.
- resume: a driver died holding the next trial's lease; a fresh engine (a new process's) catches
  up with the log, from the engine's newest snapshot, expires that lease and leases the trial
  again (`Engine.next`). Measured with 100 and with 10,000 trials already reported (of 10,100),
  each against reading and decoding its own log (target: at most 4x).
- resume-independence: the resume after 10,000 reported trials against the one after 100, in
  paired rounds. Target: at most 1.25x (the time does not depend on how many were reported).
  The log is written as the engine writes it, with a snapshot every `snapshots.EVERY` events.

Each ratio is the median over 5 rounds of that round's ours / floor in CPU time
(`time.process_time`: both sides are single-threaded and CPU-bound, and CPU time does not count
the waits a shared machine adds); each round times the two back to back, which goes first
alternating, after a warm-up. A shared VM's speed drifts by up to 2x within a minute and the two
sides of a round drift together, which the ratio of two separate minimums does not cancel. The
seconds printed are each side's best round.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import sys
import tempfile
import time
import tracemalloc
import zlib
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

import msgspec

from armbench.aggregates.workflow import (
    Caps,
    LeaseStep,
    ReportStep,
    RunState,
    decide_next,
    decide_report,
    evolve,
    initial_state,
)
from armbench.benchmark.records.audit import Replay, replay_run
from armbench.benchmark.records.reporting import (
    Projected,
    chain_head,
    project_run,
    report_events,
    write_report,
)
from armbench.benchmark.run import DEFAULT_WORKFLOW
from armbench.engine import snapshots
from armbench.engine.protocol import Lease
from armbench.engine.service import Engine
from armbench.ledger.collector import collector_paused
from armbench.ledger.events import (
    Agent,
    CheckRan,
    Cost,
    Event,
    PlanFrozen,
    PlannedArm,
    PlannedTask,
    PlannedTrial,
    PulledTeam,
    RecordWritten,
    RunStarted,
    StepLeased,
    StepReported,
    StepSpec,
    StepsPlanned,
    Usage,
    WorkspacePrepared,
)
from armbench.ledger.store import EventStore
from armbench.suites.plan import trial_steps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the tests' one fake host
from fake_host import FakeHost  # noqa: E402

__all__ = ["generate", "measure_replay", "measure_resume"]

REPLAY_TARGET, MEMORY_TARGET, RESUME_TARGET, GROWTH_TARGET = 2.0, 1.1, 4.0, 1.25
START = datetime(2026, 1, 1, tzinfo=UTC)
CAPS = Caps(driver="bench", tools=frozenset({"claude", "codex"}))


def make_plan(trials: int, lanes: int = 4) -> PlanFrozen:
    """A plan of `trials` trials: tasks x 5 arms x 10 repetitions."""
    arms = [PlannedArm(name=f"arm{i}", tool=("claude", "codex")[i % 2], model=f"model-{i}-2026",
                       effort="high", team=PulledTeam(revision="a" * 40)) for i in range(5)]
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
                         duration_ms=4000)], StepReported(step=step.id, lease=lease,
                                                          at=at + CHECK_TIME, outcome="succeeded",
                                                          cause="failed", duration_ms=4000)
    if step.id.endswith(".check"):  # reported as the host reports a check (`verify` holds it so)
        result = "passed" if zlib.crc32(step.id.encode()) % 3 else "failed"
        code = 0 if result == "passed" else 1
        return [CheckRan(step=step.id, task=task, kind="trial", result=result, duration_ms=4000,
                         exit_code=code)], StepReported(
            step=step.id, lease=lease, at=at + CHECK_TIME, outcome="succeeded", duration_ms=4000,
            exit_code=code)
    return [], StepReported(step=step.id, lease=lease, at=at, outcome="succeeded")


CHECK_TIME = timedelta(milliseconds=4000)
"""How long a fake check runs: its lease is held that long before its report."""


def generate(store: EventStore, run: str, trials: int, *, reported: int | None = None,
             runs_dir: Path | None = None) -> datetime:
    """Write a run through the store; with `reported`, stop holding the next trial's lease; with
    `runs_dir`, the report step writes the record there as the host's does (chain head, then the
    record, then its `RecordWritten`), so `armbench verify` finds the run whole."""
    plan, state, at, buffer, version, prompts = make_plan(trials), initial_state(), START, [], 0, 0
    snapped = 0

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
            at = report.at  # a check is reported once it ran
            if step.kind == "prompt" and prompts == reported:
                apply(extra)
                break
            prompts += step.kind == "prompt"
            outputs = {"definition": msgspec.to_builtins(trial_steps(plan))} if step.id == "plan" else {}
            extra = [plan] if step.id == "plan" else extra
            if step.id == "report" and runs_dir is not None:  # the host's order: head, record, event
                version = store.append(run, buffer, expected_version=version)
                buffer.clear()
                extra = [_record(store, run, runs_dir, at)]
            elif step.id == "report":
                extra = [RecordWritten(sha256="0" * 64, at=at)]
            report = msgspec.structs.replace(report, outputs=outputs)
            apply([*extra, *decide_report(state, ReportStep(lease=leased.lease, now=at, report=report))])
        if len(buffer) >= 2000 or state.ended is not None:
            version = store.append(run, buffer, expected_version=version)
            buffer.clear()
            snapped = _snapshot(store, run, state, snapped)
    store.append(run, buffer, expected_version=version)
    return at


def _record(store: EventStore, run: str, runs_dir: Path, at: datetime) -> RecordWritten:
    """The report step's record, written as the host writes it, and its `RecordWritten`."""
    head = chain_head(store, run)
    written, _ = write_report(run, report_events(store, run), "succeeded", runs_dir, at, head)
    return written


def _snapshot(store: EventStore, run: str, state: RunState, snapped: int) -> int:
    """What the engine does after an append: a snapshot every `snapshots.EVERY` events while
    the run goes on, none once it ended."""
    if state.ended is not None:
        store.drop_snapshot(run)
    elif state.version - snapped >= snapshots.EVERY:
        store.save_snapshot(run, state.version, snapshots.snapshot_format(),
                            snapshots.encode_state(state))
        return state.version
    return snapped


def _rows(path: str, run: str) -> list[tuple[bytes]]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT state FROM events WHERE originator_id = ? ORDER BY "
                          "originator_version", (run,)).fetchall()


def floor_read(path: str, run: str) -> Counter[str]:
    """Reading a run at the least cost: the stored bytes, every event decoded, counted by kind."""
    decoder = msgspec.json.Decoder(_Envelope)
    return Counter(type(decoder.decode(state).event).__name__ for (state,) in _rows(path, run))


def floor_fold(path: str, run: str) -> dict[str, Counter[str]]:
    """The plain msgspec decode-and-fold of the results: read the run's stored bytes with
    sqlite3, decode every event into the union, and fold them into each arm's count of passed,
    failed, error and not_run trials (a prompt that did not succeed is an error; a check that
    could not run is an error; a trial with no prompt report did not run)."""
    decoder = msgspec.json.Decoder(_Envelope)
    trials: dict[str, list[Any]] = {}  # prompt and check step -> [arm, prompt outcome, check]
    for (state,) in _rows(path, run):
        event = decoder.decode(state).event
        kind = type(event)
        if kind is PlanFrozen:
            for t in event.trials:
                trials[t.prompt_step] = trials[t.check_step] = [t.arm, None, None]
        elif kind is StepReported and event.step.endswith(".prompt") and event.step in trials:
            trials[event.step][1] = event.outcome
        elif kind is CheckRan and event.kind == "trial" and event.step in trials:
            trials[event.step][2] = event.result
    counts: dict[str, Counter[str]] = {}
    for step, (arm, prompt, check) in trials.items():
        if step.endswith(".prompt"):
            result = ("not_run" if prompt is None else "error" if prompt != "succeeded"
                      else check if check in ("passed", "failed") else "error")
            counts.setdefault(arm, Counter())[result] += 1
    return counts


class _Envelope(msgspec.Struct):
    event: Event


def ours_table(store: EventStore, run: str) -> Projected:
    """The report step's projection: the run's events read from the store and projected into
    the table and the record (`project_run`)."""
    return project_run(store, run, None)


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


class Race(NamedTuple):
    """Each side's best CPU time, and the median over rounds of ours / floor in that round."""

    floor_s: float
    ours_s: float
    ratio: float


def _race(floor: Callable[[], Any], ours: Callable[[], Any], rounds: int) -> Race:
    """`rounds` rounds after a warm-up (imports, page cache), each timing both sides back to
    back, which goes first alternating. The ratio is the median of the rounds' own ratios: a
    shared VM's speed drifts by up to 2x over a minute, and a round's two sides drift together."""
    floor(), ours()
    floors, ourses = [], []
    for n in range(rounds):
        took = {}
        for fn in ((floor, ours) if n % 2 == 0 else (ours, floor)):
            t = time.process_time()
            fn()
            took[fn] = time.process_time() - t
        floors.append(took[floor])
        ourses.append(took[ours])
    return Race(min(floors), min(ourses),
                statistics.median(o / f for o, f in zip(ourses, floors, strict=True)))


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
    with collector_paused():  # the record replay compares with, written as the report step does
        write_report("r1", report_events(store, "r1"), "succeeded", runs_dir, START)
    path = store.path
    arms = {a.arm: {"passed": a.passed, "failed": a.failed, "error": a.error, "not_run": a.not_run}
            for a in ours_table(store, "r1").table.arms}
    plain = {arm: {r: c[r] for r in ("passed", "failed", "error", "not_run")}
             for arm, c in floor_fold(path, "r1").items()}
    assert arms == plain, f"the floor folds other results than ours: {plain} against {arms}"
    table = _race(lambda: floor_fold(path, "r1"), lambda: ours_table(store, "r1"), rounds)
    replay = _race(lambda: floor_fold(path, "r1"), lambda: ours_replay(store, "r1", runs_dir),
                   rounds)
    paused = _race(_paused(lambda: floor_fold(path, "r1")),
                   lambda: ours_replay(store, "r1", runs_dir), rounds)
    alone = _peak(lambda: ours_replay(store, "r1", runs_dir))
    _copy_run(path, "r1", 9)
    crowded = _peak(lambda: ours_replay(store, "r1", runs_dir))
    events = sum(floor_read(path, "r1").values())
    store.close()
    return {"events": events, "floor_table_s": table.floor_s, "table_s": table.ours_s,
            "table_ratio": table.ratio, "floor_s": replay.floor_s, "ours_s": replay.ours_s,
            "ratio": replay.ratio, "floor_paused_s": paused.floor_s,
            "ours_paused_s": paused.ours_s, "paused_ratio": paused.ratio,
            "peak_alone_mb": alone / 1e6,
            "peak_crowded_mb": crowded / 1e6, "memory_ratio": crowded / alone}


def _resumer(folder: Path, trials: int, reported: int) -> tuple[EventStore, Callable[[], None]]:
    """A ledger whose driver died holding the next trial's lease after `reported` trials, and a
    resume: a fresh engine (a new process's) catching up and leasing that trial again."""
    store = EventStore(folder / f"resume-{reported}.sqlite")
    at = generate(store, "r1", trials, reported=reported)
    hours = iter(range(1, 10 ** 6))

    def resume() -> None:
        now = at + timedelta(hours=next(hours))  # past every earlier lease, so one expires
        engine = Engine(store, FakeHost(runs_commands=False), clock=lambda: now, new_id=lambda p: f"{p}{now}")
        got = engine.next("r1", CAPS)
        assert isinstance(got, Lease) and got.step.endswith(".prompt"), got

    return store, resume


def measure_resume(folder: Path, trials: int, few: int, many: int,
                   rounds: int = 5) -> dict[str, dict[str, float]]:
    """Resume after `few` and after `many` reported trials (of `trials`): each against reading
    its own log, and the two against each other."""
    (few_store, few_resume), (many_store, many_resume) = (
        _resumer(folder, trials, n) for n in (few, many))
    out: dict[str, dict[str, float]] = {}
    for name, store, resume in (("few", few_store, few_resume), ("many", many_store, many_resume)):
        race = _race(lambda s=store: floor_read(s.path, "r1"), resume, rounds)
        out[name] = {"events": sum(floor_read(store.path, "r1").values()),
                     "floor_s": race.floor_s, "ours_s": race.ours_s, "ratio": race.ratio}
    both = _race(few_resume, many_resume, rounds)
    out["independence"] = {"few_s": both.floor_s, "many_s": both.ours_s, "ratio": both.ratio}
    few_store.close()
    many_store.close()
    return out


def _verdict(ratio: float, target: float) -> str:
    return f"(target <= {target}x) {'ok' if ratio <= target else 'OVER TARGET'}"


def main(argv: list[str]) -> None:
    """Print one line per figure: floor, ours, the ratio and the target."""
    trials = int(argv[0]) if argv else 10_000
    with tempfile.TemporaryDirectory(dir=os.environ.get("ARMBENCH_BENCH_DIR", "/tmp")) as d:
        r = measure_replay(Path(d), trials)
        print(f"table {trials} trials ({r['events']} events): floor {r['floor_table_s']:.3f} s, "
              f"ours {r['table_s']:.3f} s, {r['table_ratio']:.2f}x "
              f"{_verdict(r['table_ratio'], REPLAY_TARGET)}")
        print(f"replay: floor {r['floor_s']:.3f} s, ours {r['ours_s']:.3f} s, {r['ratio']:.2f}x "
              f"{_verdict(r['ratio'], REPLAY_TARGET)}")
        print(f"replay-paused-floor (informative: the floor with the cycle collector paused too): "
              f"floor {r['floor_paused_s']:.3f} s, ours {r['ours_paused_s']:.3f} s, "
              f"{r['paused_ratio']:.2f}x")
        print(f"replay-memory: peak {r['peak_alone_mb']:.1f} MB alone, {r['peak_crowded_mb']:.1f} "
              f"MB beside 9 other runs, {r['memory_ratio']:.2f}x "
              f"{_verdict(r['memory_ratio'], MEMORY_TARGET)}")
        got = measure_resume(Path(d), trials + 100, 100, trials)
        for n, m in ((100, got["few"]), (trials, got["many"])):
            print(f"resume after {n} reported ({m['events']:.0f} events): floor "
                  f"{m['floor_s']:.3f} s, ours {m['ours_s']:.3f} s, {m['ratio']:.2f}x "
                  f"{_verdict(m['ratio'], RESUME_TARGET)}")
        ind = got["independence"]
        print(f"resume-independence: after 100 reported {ind['few_s']:.3f} s, after {trials} "
              f"{ind['many_s']:.3f} s, {ind['ratio']:.2f}x {_verdict(ind['ratio'], GROWTH_TARGET)}")


if __name__ == "__main__":
    main(sys.argv[1:])
