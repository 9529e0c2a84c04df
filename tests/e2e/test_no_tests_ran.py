"""A check that ran no test is not a pass. A project shaped like a real Python one (setup makes a
venv with pytest, the check is `.venv/bin/python -m pytest`): the honest arm passes, the idle arm
fails, and an arm that plants a root `conftest.py` marking every test skipped (the check exits
0, pytest says `1 skipped`) fails with cause `no_tests_ran` where it passed before. `try` refuses
a unittest check that ran no test at the fix (`Ran 0 tests ... OK`) instead of calling the task
valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e.conftest import FIX_ADD, World, git, make_world, visible_task
from perf.bench_setup import wheelhouse

pytestmark = pytest.mark.e2e

AGENT = """set -eu
cat > /dev/null
case "$ARMBENCH_MODEL" in
  honest) """ + FIX_ADD + """ ;;
  idle) : ;;
  skip-all) printf '%s\\n' 'import pytest' '' '' 'def pytest_collection_modifyitems(items):' \\
      '    for item in items:' '        item.add_marker(pytest.mark.skip(reason="planted"))' > conftest.py ;;
esac
"""


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, dict]:
    world = make_world(tmp_path_factory.mktemp("notests"))
    world.team.tool("agent", AGENT)
    setup = (f"python3 -m venv .venv && .venv/bin/pip install -q --no-cache-dir --no-index "
             f"--find-links {wheelhouse()} pytest")
    world.team.suite("py", setup=setup, defaults={"tool": "agent"},
                     arms=[{"name": "honest", "model": "honest"}, {"name": "idle", "model": "idle"},
                           {"name": "skip-all", "model": "skip-all"}])
    world.team.task("py", "add", **visible_task(
        world.project, run=".venv/bin/python -m pytest -q -p no:cacheprovider tests/test_add.py"))
    world.init_and_pull()
    result = world.armbench("run", "py", "--sandbox",  # setup installs from a host folder
                            env={"ARMBENCH_SANDBOX_READ": str(wheelhouse())})
    assert result.code == 0, result
    return world, world.record(result.data["done"]["run"])


def test_honest_passes_idle_fails_and_a_check_that_ran_no_test_is_no_pass(
        ran: tuple[World, dict]) -> None:
    world, record = ran
    assert {t["arm"]: t["result"] for t in record["trials"]} == {
        "honest": "passed", "idle": "failed", "skip-all": "failed"}
    [skipped] = [e for e in world.events("CheckRan")
                 if e["kind"] == "trial" and "skip-all" in e["step"]]
    assert (skipped["result"], skipped["cause"]) == ("failed", "no_tests_ran")
    assert 'pytest said "1 skipped in' in skipped["message"], skipped
    explained = world.armbench("explain", record["run"], "r0.add.skip-all")
    assert "no_tests_ran" in explained.stdout + explained.stderr


UNITTEST_TESTS = ("from calc import sub  # the fix adds it: the import fails at the start\n\n\n"
                  "def test_sub():  # a function, not a TestCase: unittest runs 0 tests\n"
                  "    assert sub(3, 2) == 1\n")


def test_try_refuses_a_unittest_check_that_ran_no_test_at_the_fix(tmp_path: Path) -> None:
    world = make_world(tmp_path / "w")
    root = world.project.root
    start = world.project.commits["start"]
    git(root, "checkout", "-q", "-b", "nottests", start)
    (root / "calc.py").write_text((root / "calc.py").read_text() + "\n\ndef sub(a, b):\n    return a - b\n")
    (root / "tests" / "test_plain.py").write_text(UNITTEST_TESTS)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "add sub(), with a test unittest does not collect")
    fix = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-")
    world.team.tool("agent", "cat >/dev/null\n")
    world.team.suite("u", defaults={"tool": "agent"})
    world.team.task("u", "plain", startingCommit=start, source={"fix": fix},
                    check={"run": "python3 -m unittest -q tests.test_plain",
                           "protect": ["tests/**", "unittest.py", "unittest/**"],
                           "add": ["tests/test_plain.py"]})
    world.init_and_pull()
    tried = world.armbench("try", str(world.team.work / "benchmarks/u/tasks/plain.yaml"))
    assert tried.code == 1, tried
    error = json.loads(tried.stdout)["error"]
    assert error["code"] == "task_try_failed", error
    assert f"ran no test at the fix {fix[:7]}" in error["message"], error
    assert "(no_tests_ran)" in error["message"]
