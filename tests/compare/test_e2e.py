"""Through the installed command: pairs reach `data.done.outputs.table.pairs`, records publish to
armbench-reports (pending while the remote is missing, then `armbench publish`), and criterion 18
of benchmark-suites.md for `--fail-on-regression`; then `plan --detect` reads those records.

One story in one world, in order (a module fixture):
1. a good run while the reports remote does not exist: its record is pending;
2. the remote now exists, recording is off: a run whose `shaky` arm got worse, with
   --fail-on-regression, finds nothing comparable, since the good record is only pending;
3. `armbench publish` delivers the good record;
4. the same worse run now exits 1, naming the arm and the good run;
5. recording on again: a good run with --fail-on-regression publishes itself and finds no drop
   against the good run (never against itself);
6. `shaky`'s provider is down (its tool exits 75 on every attempt), recording off, with
   --allow-inconclusive: the drop is its transient errors', so the runs are not comparable and
   the gate lets the run through (exit 0), saying so;
7. the same with recording on and without --allow-inconclusive: the gate fails closed (exit 1),
   since a tool's own word that every attempt failed for the provider is no pass.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from compare.world import Result, World, make_world

pytestmark = pytest.mark.e2e

NOTICE = ("No earlier succeeded run of suite gate ran the same tasks on the same arms on "
          "armbench-reports: recording is off, or nothing comparable has been published yet. "
          "--fail-on-regression has nothing to compare with.")


@dataclass
class Story:
    world: World
    remote: Path
    good: Result
    unpublished: Result
    published: Result
    worse: Result
    again: Result
    allowed: Result
    down: Result

    def run_id(self, result: Result) -> str:
        return result.envelope["data"]["done"]["run"]


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Story:
    root = tmp_path_factory.mktemp("compare")
    remote = root / "reports.git"
    world = make_world(root, reports=remote)
    good = world.armbench("run", "gate", "--sandbox")
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    world.configure(publish=False)
    unpublished = world.armbench("run", "gate", "--sandbox", "--fail-on-regression", BENCH_MODE="bad")
    published = world.armbench("publish")
    worse = world.armbench("run", "gate", "--sandbox", "--fail-on-regression", BENCH_MODE="bad")
    world.configure(publish=True)
    again = world.armbench("run", "gate", "--sandbox", "--fail-on-regression")
    world.configure(publish=False)
    allowed = world.armbench("run", "gate", "--sandbox", "--fail-on-regression", "--allow-inconclusive",
                             BENCH_MODE="down")
    world.configure(publish=True)
    down = world.armbench("run", "gate", "--sandbox", "--fail-on-regression", BENCH_MODE="down")
    return Story(world, remote, good, unpublished, published, worse, again, allowed, down)


def on_branch(remote: Path, run: str) -> bool:
    done = subprocess.run(["git", "--git-dir", str(remote), "cat-file", "-e",
                           f"armbench-reports:benchmarks/runs/{run}.json"], capture_output=True)
    return done.returncode == 0


def test_the_done_envelope_carries_one_pair_and_the_text_no_pair_table(story: Story) -> None:
    assert story.good.code == 0, story.good
    table = story.good.envelope["data"]["done"]["outputs"]["table"]
    [pair] = table["pairs"]
    assert (pair["key"], pair["from"]["arm"], pair["to"]["arm"], pair["trials"]) == (
        "model", "steady", "shaky", 2)
    assert (pair["from"]["passed"], pair["to"]["passed"]) == (2, 2)
    assert pair["from"]["cost"] == pytest.approx({"USD": 0.02})
    assert pair["difference"]["type"] == "pair_difference"
    text = story.good.envelope["data"]["done"]["outputs"]["text"]
    assert "steady" in text and "pair" not in text.lower()


def test_a_record_the_remote_cannot_take_is_pending_under_the_caption(story: Story) -> None:
    outputs = story.good.envelope["data"]["done"]["outputs"]
    assert outputs["table"]["record"] == "pending"
    assert outputs["text"].endswith("this run and this machine.\nrecord: pending\n")
    assert "record: pending" in story.good.stderr


def test_a_comparable_record_still_pending_is_not_compared_with(story: Story) -> None:
    assert story.unpublished.code == 0, story.unpublished
    assert story.unpublished.stderr.rstrip().endswith(NOTICE)
    assert "record: pending" not in story.unpublished.stderr  # recording is off for this run


def test_publish_delivers_the_pending_record_and_says_so(story: Story) -> None:
    good = story.run_id(story.good)
    assert story.published.code == 0, story.published
    assert story.published.envelope["data"]["publish"]["delivered"] == [good]
    assert f"Published {good}: benchmarks/runs/{good}.json on armbench-reports of {story.remote}" \
        in story.published.stderr
    assert on_branch(story.remote, good)
    assert not on_branch(story.remote, story.run_id(story.unpublished))


def test_criterion_18_an_arm_that_got_worse_exits_1_naming_the_arm_and_the_run(story: Story) -> None:
    assert story.worse.code == 1, story.worse
    assert story.worse.envelope["data"]["done"]["state"] == "succeeded"
    line = story.worse.stderr.rstrip().splitlines()[-1]
    assert line == (f'Arm "shaky" passed 0/2 paired trials, against 2/2 in run '
                    f"{story.run_id(story.good)}: a drop of 100 points, with a 95% interval of "
                    "-100 to -7 points.")
    assert 'Arm "steady"' not in story.worse.stderr


def test_a_run_is_never_its_own_history(story: Story) -> None:
    assert story.again.code == 0, story.again
    assert on_branch(story.remote, story.run_id(story.again))
    assert story.again.stderr.rstrip().endswith(
        f"No arm's pass rate dropped by more than chance against run {story.run_id(story.good)}.")


def test_plan_detect_reads_the_earlier_records(story: Story) -> None:
    got = story.world.armbench("plan", "gate", "--detect", "50")
    assert got.code == 0, got
    detect = got.envelope["data"]["plan"]["detect"]
    assert detect["records"] == 6 and detect["trials_used"] == 24  # the two down runs' too
    assert detect["cost_per_trial"] == {"USD": 0.01}
    assert detect["lines"][0] in got.stderr
    assert "USD" in detect["lines"][-1]
    refused = story.world.armbench("plan", "gate", "--detect", "0")
    assert refused.code == 2 and refused.envelope["error"]["code"] == "invalid_inputs"


def test_a_drop_the_providers_transient_errors_explain_fails_closed(story: Story) -> None:
    assert story.down.code == 1, story.down
    assert story.down.envelope["data"]["done"]["state"] == "succeeded"
    against = story.run_id(story.again)
    assert (f'Arm "shaky" is not comparable with run {against}: 2 transient errors.'
            in story.down.stderr)
    assert story.down.stderr.rstrip().endswith(
        "--fail-on-regression fails closed on it (exit 1): run the suite again once the provider "
        "is well, or add --allow-inconclusive to let such a run through.")
    assert "| shaky |" in story.down.stderr and "| 2 (2 transient) |" in story.down.stderr


def test_allow_inconclusive_lets_a_drop_transient_errors_explain_through_saying_so(story: Story) -> None:
    assert story.allowed.code == 0, story.allowed
    against = story.run_id(story.again)
    assert (f'Arm "shaky" is not comparable with run {against}: 2 transient errors.'
            in story.allowed.stderr)
    assert story.allowed.stderr.rstrip().endswith(
        "--allow-inconclusive lets this run through the gate. Run the suite again once the "
        "provider is well.")


def test_allow_inconclusive_alone_is_refused_before_a_run_starts(story: Story) -> None:
    refused = story.world.armbench("run", "gate", "--sandbox", "--allow-inconclusive")
    assert refused.code == 2 and refused.envelope["error"]["code"] == "bad_option", refused
    message = refused.envelope["error"]["message"]
    assert "--allow-inconclusive was given without --fail-on-regression" in message
