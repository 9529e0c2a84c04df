"""100 trials of a no-op tool through the reference external driver against `armbench run`.

Run from the repo root: `python -m benchmarks.bench_drivers` (needs `armbench` on PATH). One
world (tests/e2e's builders: a real project, a real team repo, the installed `armbench`), one
suite of 10 tasks x 1 arm x 10 repetitions of a tool that only touches a file, and a check that
tests for it (each task's baseline fails, so every trial runs).
`armbench run` is timed, then `workflow start --driver external` plus
examples/drivers/driver.py until the run is done, alternating which goes first over 2 rounds
(`python -m benchmarks.bench_drivers 4`: 4 rounds); the figure is the median of the rounds'
ratios. Each trial through the driver costs three process starts (`next`, `launch`, `report`), so
the CLI's start-up is most of the difference. armbench's modules are compiled first, as an
installed armbench's are (the worlds' environment never writes bytecode, and a source tree fresh
from git has none: each process would compile every module it imports, about 80 ms).
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


def _external(world: World) -> tuple[float, float]:
    started, cpu = time.perf_counter(), _cpu()
    got = world.armbench("workflow", "start", "bench", "--benchmark", "--driver", "external",
                         "--sandbox")
    assert got.code == 0, got
    done = subprocess.run([sys.executable, str(ROOT / "examples/drivers/driver.py"),
                           got.data["run"]["id"], "--tools", "noop"], cwd=world.checkout,
                          env={**world.env, "ARMBENCH": str(ARMBENCH)}, capture_output=True,
                          text=True, timeout=3600)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - started, _cpu() - cpu


def main(rounds: int = 2) -> None:
    for package in ("ledger", "aggregates", "engine", "projections", "suites", "edge", "benchmark",
                    "cli"):
        compileall.compile_dir(ROOT / package, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        world = _world(Path(tmp) / "w")
        ratios, cpu_ratios = [], []
        for i in range(rounds):
            if i % 2 == 0:
                (local, local_cpu), (external, external_cpu) = _local(world), _external(world)
            else:
                (external, external_cpu), (local, local_cpu) = _external(world), _local(world)
            ratios.append(external / local)
            cpu_ratios.append(external_cpu / local_cpu)
            print(f"round {i}: armbench run {local:.1f} s ({local_cpu:.1f} s CPU), reference "
                  f"driver {external:.1f} s ({external_cpu:.1f} s CPU): {external / local:.2f}x "
                  f"wall, {external_cpu / local_cpu:.2f}x CPU, for {TASKS * REPS} trials")
        ratio = statistics.median(ratios)
        print(f"external driver / armbench run: {ratio:.2f}x (target at most {TARGET}x): "
              + ("ok" if ratio <= TARGET else "over")
              + f"; CPU {statistics.median(cpu_ratios):.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
