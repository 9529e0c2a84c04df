"""100 trials of a no-op tool through the reference external driver against `armbench run`.

Run from the repo root: `python -m benchmarks.bench_drivers` (needs `armbench` on PATH). One
world (tests/e2e's builders: a real project, a real team repo, the installed `armbench`), one
suite of 10 tasks x 1 arm x 10 repetitions of a tool that only touches a file, and a check that
tests for it (each task's baseline fails, so every trial runs).
`armbench run` is timed, then `workflow start --driver external` plus
examples/drivers/driver.py until the run is done, once one-shot (each request a process) and once
with `--serve` (one `armbench workflow serve` process for the run), alternating which goes first
over 2 rounds (`python -m benchmarks.bench_drivers 4`: 4 rounds); each figure is the median of the
rounds' ratios. Each trial through the one-shot driver costs three process starts (`next`,
`launch`, `report`), so the CLI's start-up is most of its difference; the serve driver pays one
start for the run. The target applies to the serve figure: it is what a driver can use (the
one-shot figure is printed beside it, for drivers that cannot keep a process). armbench's
modules are compiled first, as an installed armbench's are (the worlds' environment never writes
bytecode, and a source tree fresh from git has none: each process would compile every module it
imports, about 80 ms).
Target: at most 1.5x. Each side's CPU time (its processes' user and system time, every
descendant's included) is printed beside its wall time: on a shared machine the wall time moves
with the load, the CPU time much less.
"""

from __future__ import annotations

import compileall
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from e2e.conftest import ARMBENCH, World, make_world  # noqa: E402

TARGET = 1.5
TASKS, REPS = 10, 10


def _world(root: Path) -> World:
    world = make_world(root)
    world.team.tool("noop", "cat >/dev/null\ntouch .bench-done\necho x >> \"$E2E_OUT/ran\"\n")
    world.team.suite("bench", defaults={"tool": "noop"}, arms=[{"name": "noop"}],
                     repetitions=REPS, timeout="2h", trial={"timeout": "1m"})
    for i in range(TASKS):
        world.team.task("bench", f"t{i}", startingCommit=world.project.commits["start"],
                        check={"run": "test -f .bench-done", "protect": ["tests/**"]})
    world.init_and_pull()
    return world


def _cpu() -> float:
    """User and system seconds of every finished descendant so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _local(world: World) -> tuple[float, float]:
    started, cpu = time.perf_counter(), _cpu()
    got = world.armbench("run", "bench", "--sandbox", timeout=3600)
    assert got.code == 0, got
    assert len(world.out_lines("ran")) % (TASKS * REPS) == 0, "every trial ran its tool"
    return time.perf_counter() - started, _cpu() - cpu


def _external(world: World, *serve: str) -> tuple[float, float]:
    started, cpu = time.perf_counter(), _cpu()
    got = world.armbench("workflow", "start", "bench", "--benchmark", "--driver", "external",
                         "--sandbox")
    assert got.code == 0, got
    done = subprocess.run([sys.executable, str(ROOT / "examples/drivers/driver.py"),
                           got.data["run"]["id"], "--tools", "noop", *serve], cwd=world.checkout,
                          env={**world.env, "ARMBENCH": str(ARMBENCH)}, capture_output=True,
                          text=True, timeout=3600)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - started, _cpu() - cpu


def main(rounds: int = 2) -> None:
    for package in ("ledger", "aggregates", "engine", "projections", "suites", "edge", "benchmark",
                    "cli"):
        compileall.compile_dir(ROOT / package, quiet=1)
    sides = {"one-shot": (), "serve": ("--serve",)}
    with tempfile.TemporaryDirectory() as tmp:
        world = _world(Path(tmp) / "w")
        ratios: dict[str, list[float]] = {name: [] for name in sides}
        cpu_ratios: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(rounds):
            timed: dict[str, tuple[float, float]] = {}
            order = ["local", *sides] if i % 2 == 0 else [*reversed(sides), "local"]
            for name in order:
                timed[name] = _local(world) if name == "local" else _external(world, *sides[name])
            local, local_cpu = timed["local"]
            line = f"round {i}: armbench run {local:.1f} s ({local_cpu:.1f} s CPU)"
            for name in sides:
                wall, cpu = timed[name]
                ratios[name].append(wall / local)
                cpu_ratios[name].append(cpu / local_cpu)
                line += (f"; {name} driver {wall:.1f} s ({cpu:.1f} s CPU): {wall / local:.2f}x "
                         f"wall, {cpu / local_cpu:.2f}x CPU")
            print(line + f", for {TASKS * REPS} trials")
        for name in sides:
            ratio = statistics.median(ratios[name])
            verdict = ("ok" if ratio <= TARGET else "over") if name == "serve" \
                else "for drivers that start a process per request"
            print(f"{name} external driver / armbench run: {ratio:.2f}x (target at most "
                  f"{TARGET}x, for the serve driver): {verdict}; CPU "
                  f"{statistics.median(cpu_ratios[name]):.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
