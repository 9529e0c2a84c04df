"""check.add `{from, to}`: a hidden test kept in the suite's folder, written before every check."""

from __future__ import annotations

import pytest

from e2e.conftest import FIX_ADD, World

pytestmark = pytest.mark.e2e

HIDDEN = '''import unittest

import calc


class HiddenAddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)
'''


def test_a_test_from_the_suite_folder_decides_the_trial_and_never_reaches_the_clone(
        world: World) -> None:
    project, team = world.project, world.team
    team.tool("agent", "cat > /dev/null\n"
                       'test -e tests/test_hidden.py && touch "$E2E_OUT/saw-hidden"\n'
                       'if [ "$ARMBENCH_MODEL" = fixer ]; then ' + FIX_ADD.strip() + "; fi\n")
    team.suite("from-suite", arms=[{"name": "fixes", "model": "fixer"},
                                   {"name": "idle", "model": "idler"}])
    team.write("benchmarks/from-suite/hidden/test_hidden.py", HIDDEN)
    team.task("from-suite", "hidden-in-suite", startingCommit=project.commits["start"], check={
        "run": "python3 -m unittest -q tests.test_hidden", "protect": ["tests/**"],
        "add": [{"from": "hidden/test_hidden.py", "to": "tests/test_hidden.py"}]})
    world.init_and_pull()
    result = world.armbench("run", "from-suite", "--sandbox")
    assert result.code == 0, result
    record = world.record(result.data["done"]["run"])
    by_arm = {t["arm"]: t["result"] for t in record["trials"]}
    assert by_arm == {"fixes": "passed", "idle": "failed"}
    assert record["baselines"] == [{"task": "hidden-in-suite", "status": "valid"}]
    assert not (world.out / "saw-hidden").exists()
