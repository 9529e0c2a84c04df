"""100 trials of a no-op tool through the reference external driver against `armbench run`.

Run from the repo root: `python -m benchmarks.bench_drivers` (needs `armbench` on PATH). One
world (tests/e2e's builders: a real project, a real team repo, the installed `armbench`), one
suite of 10 tasks x 1 arm x 10 repetitions of a tool that does nothing and no check
(judged by success criteria, so every trial runs).
`armbench run` is timed, then `workflow start --driver external` plus
examples/drivers/driver.py until the run is done, alternating which goes first over 2 rounds;
the figure is the median of the rounds' ratios. Each trial through the driver costs three
process starts (`next`, `launch`, `report`), so the CLI's start-up is most of the difference.
Target: at most 1.5x.
"""

from __future__ import annotations

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
    world.team.tool("noop", "cat >/dev/null\necho x >> \"$E2E_OUT/ran\"\n")
    world.team.suite("bench", defaults={"tool": "noop"}, arms=[{"name": "noop"}],
                     repetitions=REPS, timeout="2h", trial={"timeout": "1m"})
    for i in range(TASKS):
        world.team.task("bench", f"t{i}", startingCommit=world.project.commits["start"],
                        successCriteria="Nothing changes.")  # no check: the tool's trial only
    world.init_and_pull()
    return world


def _local(world: World) -> float:
    started = time.perf_counter()
    got = world.armbench("run", "bench", "--sandbox", timeout=3600)
    assert got.code == 0, got
    assert len(world.out_lines("ran")) % (TASKS * REPS) == 0, "every trial ran its tool"
    return time.perf_counter() - started


def _external(world: World) -> float:
    started = time.perf_counter()
    got = world.armbench("workflow", "start", "bench", "--benchmark", "--driver", "external",
                         "--sandbox")
    assert got.code == 0, got
    done = subprocess.run([sys.executable, str(ROOT / "examples/drivers/driver.py"),
                           got.data["run"]["id"], "--tools", "noop"], cwd=world.checkout,
                          env={**world.env, "ARMBENCH": str(ARMBENCH)}, capture_output=True,
                          text=True, timeout=3600)
    assert done.returncode == 0, done.stderr
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        world = _world(Path(tmp) / "w")
        ratios = []
        for i in range(2):
            if i % 2 == 0:
                local, external = _local(world), _external(world)
            else:
                external, local = _external(world), _local(world)
            ratios.append(external / local)
            print(f"round {i}: armbench run {local:.1f} s, reference driver {external:.1f} s "
                  f"({external / local:.2f}x) for {TASKS * REPS} trials")
        ratio = statistics.median(ratios)
        print(f"external driver / armbench run: {ratio:.2f}x (target at most {TARGET}x): "
              + ("ok" if ratio <= TARGET else "over"))


if __name__ == "__main__":
    main()
