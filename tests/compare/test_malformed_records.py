"""A malformed published record is skipped with a warning that names it (issue 11, item 7).

Once a published record with a missing field made `--fail-on-regression` end in a KeyError. Here
the reports branch holds one good record and three bad ones: a copy of the good record, newer,
whose trial lacks `repetition` (it would be the newest comparable one); one whose `repetition` is
text; and one that is not JSON. The gate and `plan --detect` skip the three, say which and why,
and decide from the good one.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from compare.world import Result, World, git, make_world

pytestmark = pytest.mark.e2e

BAD = {
    "rmissing": "Object missing required field `repetition` - at `$.trials[0]`",
    "rwrongtype": "Expected `int`, got `str` - at `$.trials[0].repetition`",
    "rnotjson": "not JSON (JSON is malformed: invalid character (byte 0))",
}


def plant(root: Path, remote: Path, good_run: str) -> None:
    """Push the three bad records onto armbench-reports."""
    work = root / "reports-work"
    git(root, "clone", "-q", "-b", "armbench-reports", str(remote), str(work))
    runs = work / "benchmarks" / "runs"
    good = json.loads((runs / f"{good_run}.json").read_text())
    missing = {**good, "run": "rmissing", "startedAt": "2999-01-01T00:00:00+00:00"}
    missing["trials"] = [{k: v for k, v in t.items() if k != "repetition"} for t in good["trials"]]
    wrong = {**good, "run": "rwrongtype",
             "trials": [{**t, "repetition": "one"} for t in good["trials"]]}
    (runs / "rmissing.json").write_text(json.dumps(missing))
    (runs / "rwrongtype.json").write_text(json.dumps(wrong))
    (runs / "rnotjson.json").write_text("<<<< not a record\n")
    git(work, "add", "-A")
    git(work, "-c", "user.name=x", "-c", "user.email=x@x.invalid", "commit", "-q", "-m", "bad")
    git(work, "push", "-q", "origin", "armbench-reports")


def warning(remote: Path, run: str) -> str:
    return (f"Skipped the record benchmarks/runs/{run}.json on the armbench-reports branch of "
            f"{remote}: {BAD[run]}. It is left out of the comparison; remove it from the branch, "
            "or put back the record armbench wrote for that run.")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Path, str]:
    root = tmp_path_factory.mktemp("malformed")
    remote = root / "reports.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    world = make_world(root, reports=remote)
    good = world.armbench("run", "gate", "--sandbox")
    assert good.code == 0, good
    run = good.envelope["data"]["done"]["run"]
    plant(root, remote, run)
    return world, remote, run


def test_the_gate_skips_each_malformed_record_with_a_warning_and_decides_from_the_good_one(
        world: tuple[World, Path, str]) -> None:
    w, remote, good = world
    worse: Result = w.armbench("run", "gate", "--sandbox", "--fail-on-regression", BENCH_MODE="bad")
    assert worse.code == 1, worse
    assert "Traceback" not in worse.stderr and "KeyError" not in worse.stderr
    for run in BAD:
        assert warning(remote, run) in worse.stderr, worse.stderr
    assert worse.stderr.rstrip().splitlines()[-1].startswith(
        f'Arm "shaky" passed 0/2 paired trials, against 2/2 in run {good}: ')


def test_plan_detect_skips_malformed_records_published_and_local(
        world: tuple[World, Path, str]) -> None:
    w, remote, _ = world
    local = w.checkout / ".armbench" / "runs" / "rlocal" / "benchmark.json"
    local.parent.mkdir(parents=True)
    local.write_text(json.dumps({"schema": "armbench.record/v1", "trials": []}))
    got = w.armbench("plan", "gate", "--detect", "50")
    assert got.code == 0, got
    assert f"Skipped the record {local}: Object missing required field `run`. It is left out of " \
           "the estimate; rebuild it from its log with `armbench replay rlocal --write`, or " \
           "remove it." in got.stderr, got.stderr
    for run in BAD:
        assert warning(remote, run) in got.stderr
    detect = got.envelope["data"]["plan"]["detect"]
    assert detect["records"] >= 1 and detect["trials_used"] >= 4
