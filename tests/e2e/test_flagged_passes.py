"""Suspicious passes, flagged (issue 42, point 3): a run whose passing trials include a change to
a protected path (put back, so it did not count), a module named like the standard library's
below the root, and a test marked to skip flags those trials and only those; the honest pass
has none; the flags are in the record, the table and `explain`, and `replay` gives the same.
No flag changes a result."""

from __future__ import annotations

import pytest

from e2e.conftest import FIX_ADD, World, hidden_task, make_world

pytestmark = pytest.mark.e2e

HEAD = "set -eu\ncat >/dev/null\n" + FIX_ADD
TOOLS = {
    "honest": HEAD,
    "toucher": HEAD + "mkdir -p tests && echo 'import unittest' > tests/test_mine.py\n",
    "shadow": HEAD + "mkdir -p lib && echo 'x = 1' > lib/json.py\n",
    "skipper": HEAD + ("mkdir -p more && printf 'import unittest\\n\\n\\n@unittest.skip(\"later\")\\n"
                       "class T(unittest.TestCase):\\n    pass\\n' > more/test_later.py\n"),
}


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, str, dict[str, object]]:
    world = make_world(tmp_path_factory.mktemp("flags") / "w")
    for name, script in TOOLS.items():
        world.team.tool(name, script)
    world.team.suite("s", arms=[{"name": name, "tool": name} for name in TOOLS], parallel=2)
    world.team.task("s", "add", **hidden_task(world.project))
    world.init_and_pull()
    ran = world.armbench("run", "s", "--sandbox")
    assert ran.code == 0, ran
    run: str = ran.data["done"]["run"]
    return world, run, {"stderr": ran.stderr}


def _flags(record: dict[str, object]) -> dict[str, list[str]]:
    trials = record["trials"]
    assert isinstance(trials, list)
    return {t["arm"]: [f["name"] for f in t.get("flags", [])] for t in trials}


def test_each_suspicious_pass_is_flagged_with_its_evidence_and_only_those(
        flagged: tuple[World, str, dict[str, object]]) -> None:
    world, run, said = flagged
    record = world.record(run)
    assert [t["result"] for t in record["trials"]] == ["passed"] * 4  # a flag changes no result
    assert _flags(record) == {"honest": [], "toucher": ["touched_protected"],
                              "shadow": ["shadows_module"], "skipper": ["skips_tests"]}
    evidence = {t["arm"]: t["flags"][0].get("evidence") for t in record["trials"] if t.get("flags")}
    assert evidence["toucher"] == ["tests/test_mine.py"]
    assert evidence["shadow"] == ["lib/json.py"]
    assert evidence["skipper"] == ['more/test_later.py:4: @unittest.skip("later")']
    stderr = str(said["stderr"])
    assert "| Flagged | Pass rate |" in stderr
    assert "| 1 | 100% (1/1, 1 flagged) |" in stderr and "| 0 | 100% (1/1) |" in stderr
    assert "3 passed trial(s) are flagged" in stderr


def test_explain_shows_the_flags_and_replay_gives_the_same(
        flagged: tuple[World, str, dict[str, object]]) -> None:
    world, run, _ = flagged
    explained = world.armbench("explain", run, "r0.add.shadow")
    assert explained.code == 0, explained
    assert explained.data["explain"]["flags"] == ["shadows_module: lib/json.py"]
    assert "Flagged (a reason to look; the check decided the result):" in explained.stderr
    before = _flags(world.record(run))
    replayed = world.armbench("replay", run, "--write")
    assert replayed.code == 0, replayed
    assert _flags(world.record(run)) == before


def test_fail_on_flagged_exits_1_naming_each_flagged_pass(
        flagged: tuple[World, str, dict[str, object]]) -> None:
    world, _, _ = flagged
    ran = world.armbench("run", "s", "--sandbox", "--fail-on-flagged", "--arm", "honest", "--arm", "shadow")
    assert ran.code == 1, ran
    assert ran.data["done"]["state"] == "succeeded"
    assert "r0.add.shadow passed, flagged: shadows_module" in ran.stderr
    assert "--fail-on-flagged: 1 passed trial(s) are flagged (exit 1)." in ran.stderr
    honest = world.armbench("run", "s", "--sandbox", "--fail-on-flagged", "--arm", "honest")
    assert honest.code == 0, honest
