"""Through the installed command: after each repetition round but the last, the run's progress
on stderr says whether each pair's interval already excludes zero or cannot any more at the
planned size; the table is the same as without it.

The `gate` suite of `compare.world` with 2 repetitions in one lane: both arms pass everything,
so after round 1 the pair (model: shaky against steady) has 2 tied pairs, and the 2 pairs left
cannot separate it."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from compare.world import git, make_world

pytestmark = pytest.mark.e2e


def test_the_progress_says_after_a_round_that_the_pair_cannot_separate_any_more(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("stopping")
    subprocess.run(["git", "init", "-q", "--bare", str(root / "reports.git")], check=True)
    world = make_world(root, reports=root / "reports.git")
    suite_file = root / "team-work" / "benchmarks" / "gate" / "suite.yaml"
    suite = yaml.safe_load(suite_file.read_text())
    suite.update(repetitions=2, parallel=1)
    suite_file.write_text(yaml.safe_dump(suite, sort_keys=False))
    git(root / "team-work", "commit", "-qam", "two rounds")
    git(root / "team-work", "push", "-q", str(root / "team.git"), "HEAD:main")
    assert world.armbench("pull").code == 0
    got = world.armbench("run", "gate", "--sandbox")
    assert got.code == 0, got
    notes = [line for line in got.stderr.splitlines() if line.startswith("After repetition")]
    assert len(notes) == 1, got.stderr
    assert notes[0].startswith("After repetition 1 of 2, model: shaky against steady, 2 paired "
                               "trials: +0 points (95% interval ")
    assert notes[0].endswith("): the interval cannot exclude zero any more at the planned size, "
                             "whatever the remaining trials do. Descriptive only: the run goes on "
                             "to its planned size.")
    table = got.envelope["data"]["done"]["outputs"]["table"]
    assert [(a["arm"], a["passed"], a["planned"]) for a in table["arms"]] == [
        ("steady", 4, 4), ("shaky", 4, 4)]
