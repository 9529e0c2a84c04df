"""Criterion 17: `parallel: 2` runs two trials at once only when `workflows.max_parallel` allows it.

The tool writes when it starts and ends to a shared folder outside the clones. The same suite
(2 trials on 2 lanes) runs twice in one checkout: first with max_parallel unset, where each trial
sleeps 0.7 s, then with max_parallel 2, where each trial waits for the other to start.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e.conftest import Result, World, hidden_task, make_world

pytestmark = pytest.mark.e2e

AGENT = """
cat > /dev/null
dir="$E2E_OUT/$E2E_ROUND"
log="$dir/$(date +%s%N)-$$"
mkdir -p "$dir"
date +%s.%N > "$log.start"
if [ "$E2E_ROUND" = parallel ]; then
  # wait (up to 20 s) for the other lane's trial, so a loaded machine cannot fake a serial run
  for _ in $(seq 200); do [ "$(ls "$dir" | grep -c 'start$')" -ge 2 ] && break; sleep 0.1; done
  sleep 0.2
else
  sleep 0.7
fi
date +%s.%N > "$log.end"
"""


def spans(folder: Path) -> list[tuple[float, float]]:
    starts = sorted(folder.glob("*.start"))
    return [(float(s.read_text()), float(s.with_suffix(".end").read_text())) for s in starts]


def overlaps(found: list[tuple[float, float]]) -> int:
    """How many pairs of spans overlap in time."""
    return sum(1 for i, (a0, a1) in enumerate(found) for b0, b1 in found[i + 1:]
               if a0 < b1 and b0 < a1)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = make_world(tmp_path_factory.mktemp("parallel"))
    world.team.tool("agent", AGENT)
    world.team.suite("lanes", arms=[{"name": "one"}, {"name": "two", "model": "m-two"}],
                     repetitions=1, parallel=2)
    world.team.task("lanes", "hidden", **hidden_task(world.project))
    world.init_and_pull()
    return world


@pytest.fixture(scope="module")
def sequential(world: World) -> Result:
    return world.armbench("run", "lanes", "--sandbox", env={"E2E_ROUND": "sequential"})


@pytest.fixture(scope="module")
def parallel(world: World, sequential: Result) -> Result:
    world.configure(max_parallel=2)
    return world.armbench("run", "lanes", "--sandbox", env={"E2E_ROUND": "parallel"})


def test_with_max_parallel_unset_trials_run_one_at_a_time(world: World, sequential: Result) -> None:
    assert sequential.code == 0, sequential
    found = spans(world.out / "sequential")
    assert len(found) == 2
    assert overlaps(found) == 0


def test_with_parallel_2_and_max_parallel_2_two_trials_run_at_once(world: World, parallel: Result) -> None:
    assert parallel.code == 0, parallel
    found = spans(world.out / "parallel")
    assert len(found) == 2
    assert overlaps(found) == 1
