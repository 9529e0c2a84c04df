"""Issue 14, criterion 6: `armbench judge calibrate` on a run where the scripted judge disagrees
with the check on a known set of trials reports exactly that confusion matrix and kappa."""

from __future__ import annotations

import pytest

from e2e.conftest import FIX_ADD, make_world, visible_task

pytestmark = pytest.mark.e2e

# Trial n (in run order) leaves note-<n>.txt, and fixes calc.py when n is even: the check passes
# for n = 0, 2, 4 and fails for n = 1, 3, 5.
AGENT = r"""
set -eu
cat > /dev/null
n=$(wc -l < "$E2E_OUT/invocations" 2>/dev/null || echo 0)
echo "$n" >> "$E2E_OUT/invocations"
echo "$n" > "note-$n.txt"
if [ $((n % 2)) -eq 0 ]; then
""" + FIX_ADD + """fi
"""

# The judge reads the note in the diff: it says correct for 0, 2 and 1, incorrect for 4, 3, 5.
# Against the check: passed & correct 2 (0, 2), passed & incorrect 1 (4), failed & correct 1 (1),
# failed & incorrect 2 (3, 5).
JUDGE = r"""
set -u
prompt=$(cat)
echo judged >> "$E2E_OUT/judge-calls"
case "$prompt" in
  *"+++ b/note-0.txt"*|*"+++ b/note-2.txt"*|*"+++ b/note-1.txt"*) label=correct ;;
  *) label=incorrect ;;
esac
echo "{\"label\": \"$label\", \"reason\": \"scripted\"}"
"""


def test_calibrate_reports_the_confusion_matrix_kappa_and_rates_and_replay_rebuilds_it(
        tmp_path) -> None:  # type: ignore[no-untyped-def]
    world = make_world(tmp_path / "w")
    world.team.tool("agent", AGENT)
    world.team.tool("judge", JUDGE)
    world.team.suite("checked", repetitions=6, timeout="5m", judge={"tool": "judge"})
    world.team.task("checked", "a-visible", **visible_task(world.project))
    world.init_and_pull()
    ran = world.armbench("run", "checked", "--sandbox")
    assert ran.code == 0, ran
    run = ran.data["done"]["run"]
    assert [t["result"] for t in world.record(run)["trials"]] == ["passed", "failed"] * 3

    got = world.armbench("judge", "calibrate", run, "--sandbox")
    assert got.code == 0, got
    report = got.data["calibration"]["calibration"]
    assert report["matrix"] == [[2, 1], [1, 2]]
    # by hand: observed agreement 4/6, chance agreement (3*3 + 3*3)/36 = 1/2, kappa = (2/3 - 1/2) / (1/2)
    assert report["kappa"]["kappa"] == pytest.approx(1 / 3)
    from statsmodels.stats.inter_rater import cohens_kappa
    expected = cohens_kappa([[2, 1], [1, 2]])
    assert (report["kappa"]["low"], report["kappa"]["high"]) == pytest.approx(
        (expected.kappa_low, expected.kappa_upp))
    assert (report["falsePass"]["k"], report["falsePass"]["n"]) == (1, 3)
    assert (report["falseFail"]["k"], report["falseFail"]["n"]) == (1, 3)
    assert report["falsePass"]["low"] < 1 / 3 < report["falsePass"]["high"]
    assert "| passed | 2 | 1 |" in got.stderr and "| failed | 1 | 2 |" in got.stderr
    assert len(world.out_lines("judge-calls")) == 6
    assert all(e["calibration"] for e in world.events("LabelRecorded"))
    # the labels are the run's events: calibrating again pays for none, replay rebuilds the report
    again = world.armbench("judge", "calibrate", run, "--sandbox")
    assert again.code == 0 and len(world.out_lines("judge-calls")) == 6, again
    replayed = world.armbench("replay", run)
    assert replayed.code == 0, replayed
    assert "| passed | 2 | 1 |" in replayed.stderr and "Cohen's kappa: 0.33" in replayed.stderr
    # the calibration is not the trials' result: the record's trials keep their checks' results
    assert [t["result"] for t in world.record(run)["trials"]] == ["passed", "failed"] * 3


def test_a_run_without_a_judge_keeps_evidence_unless_told_not_to(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every run keeps each trial's diff and transcript, so a suite with no judge can be
    calibrated; a run with --no-evidence cannot, and calibrating it says why."""
    world = make_world(tmp_path / "w")
    world.team.tool("agent", AGENT)
    world.team.tool("judge", JUDGE)
    world.team.suite("checked", repetitions=2, timeout="5m")
    world.team.task("checked", "a-visible", **visible_task(world.project))
    world.init_and_pull()
    plain = world.armbench("run", "checked", "--sandbox", "--no-evidence")
    assert plain.code == 0, plain
    refused = world.armbench("judge", "calibrate", plain.data["done"]["run"], "--sandbox",
                             "--tool", "judge")
    assert refused.code == 2 and refused.error["code"] == "no_evidence", refused
    assert "--no-evidence" in refused.error["message"]
    assert not world.out_lines("judge-calls")
    kept = world.armbench("run", "checked", "--sandbox")
    assert kept.code == 0, kept
    got = world.armbench("judge", "calibrate", kept.data["done"]["run"], "--sandbox",
                         "--tool", "judge")
    assert got.code == 0, got
    assert len(world.out_lines("judge-calls")) == 2
