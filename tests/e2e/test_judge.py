"""Issue 14: scorers, labels and the correctness judge, end to end with scripted judges.

A scripted agent fixes calc.py for the tasks whose prompt says so; a scripted judge (a team
command tool) reads the diff armbench puts in its prompt and answers with a label, or answers
nonsense, crashes or hangs when the task's successCriteria tells it to.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import FIX_ADD, Result, World, dump, make_world, table_rows

pytestmark = pytest.mark.e2e

AGENT = r"""
set -eu
prompt=$(cat)
case "$prompt" in *"Please fix"*) """ + FIX_ADD.strip() + """ ;; esac
"""

JUDGE = r"""
set -u
prompt=$(cat)
printf '%s\n' "$prompt" | grep -E '^(BEGIN|END) ' >> "$E2E_OUT/judge-fences"
if (echo judged >> calc.py) 2>/dev/null; then echo writable >> "$E2E_OUT/judge-copy"
else echo read-only >> "$E2E_OUT/judge-copy"; fi
printf '%s' '{"tokens": {"input": 100, "output": 10}, "cost": {"amount": 0.01, "unit": "USD"}}' \
  > "$ARMBENCH_USAGE_FILE"
case "$prompt" in
  *"JUDGE-NONSENSE"*) echo "I like turtles"; exit 0 ;;
  *"JUDGE-CRASH"*) echo "judge blew up" >&2; exit 3 ;;
  *"JUDGE-SLEEP"*) sleep 60; exit 0 ;;
esac
fixed=no
case "$prompt" in *"+    return a + b"*) fixed=yes ;; esac
case "$prompt" in
  *"## Rubric (diff-quality)"*)
    if [ $fixed = yes ]; then label=good; else label=bad; fi
    case "$prompt" in *"RUBRIC-SAYS-MEH"*) label=meh ;; esac ;;
  *) if [ $fixed = yes ]; then label=correct; else label=incorrect; fi ;;
esac
echo "Looking at the diff."
echo '{"label": "draft", "reason": "an earlier object is not the answer"}'
echo "{\"label\": \"$label\", \"reason\": \"fixed=$fixed\"}"
"""

SCORER = """---
name: diff-quality
description: Is the change small and right?
labels:
  - {value: good, score: 1, description: The fix and nothing else.}
  - {value: meh, score: 0.5}
  - {value: bad, score: 0}
passingScore: 0.5
model: judge-strong
---
Prefer the smallest change that makes add() add.
"""

TASKS: dict[str, tuple[str, str]] = {
    "a-right": ("Please fix add() in calc.py: it subtracts.", "add() returns the sum."),
    "b-wrong": ("Look at add() in calc.py, change nothing.", "add() returns the sum."),
    "c-nonsense": ("Please fix add() in calc.py.", "add() returns the sum. JUDGE-NONSENSE"),
    "d-crash": ("Please fix add() in calc.py.", "add() returns the sum. JUDGE-CRASH"),
    "e-timeout": ("Please fix add() in calc.py.", "add() returns the sum. JUDGE-SLEEP"),
}


def _team(world: World, *, judge: dict[str, Any] | None, scorers: list[str] | None = None) -> None:
    team = world.team
    team.tool("agent", AGENT)
    team.tool("judge", JUDGE)
    team.write("scorers/diff-quality.md", SCORER)
    team.aliases({"judge-strong": {"judge": {"model": "judge-large", "effort": "high"}}})
    fields: dict[str, Any] = {"timeout": "5m"}
    if judge is not None:
        fields["judge"] = judge
    if scorers:
        fields["scorers"] = scorers
    team.suite("judged", **fields)
    for task, (prompt, criteria) in TASKS.items():
        team.task("judged", task, prompt=prompt, startingCommit=world.project.commits["start"],
                  successCriteria=criteria)


@dataclass
class Ran:
    world: World
    result: Result
    run: str
    record: dict[str, Any]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    world = make_world(tmp_path_factory.mktemp("judge"))
    _team(world, judge={"tool": "judge", "timeout": "3s"}, scorers=["diff-quality"])
    world.init_and_pull()
    result = world.armbench("run", "judged", "--sandbox")
    assert result.code == 0, result
    run = result.data["done"]["run"]
    return Ran(world, result, run, world.record(run))


def _results(ran: Ran) -> dict[str, str]:
    return {t["task"]: t["result"] for t in ran.record["trials"]}


def test_a_correct_change_passes_and_a_wrong_one_fails(ran: Ran) -> None:
    results = _results(ran)
    assert results["a-right"] == "passed"
    assert results["b-wrong"] == "failed"


def test_a_judge_that_answers_nonsense_crashes_or_times_out_leaves_the_trial_unscored(ran: Ran) -> None:
    results = _results(ran)
    assert [results[t] for t in ("c-nonsense", "d-crash", "e-timeout")] == ["unscored"] * 3
    failed = {e["step"].split(".")[2]: e["cause"] for e in ran.world.events("JudgeFailed")
              if e["scorer"].startswith("armbench:correctness:")}
    assert failed == {"c-nonsense": "not_json", "d-crash": "exit", "e-timeout": "timeout"}


def test_the_judge_reads_a_read_only_copy_of_the_clone(ran: Ran) -> None:
    seen = ran.world.out_lines("judge-copy")
    assert seen and set(seen) == {"read-only"}


def test_the_table_counts_unscored_trials_and_shows_each_scorers_labels(ran: Ran) -> None:
    text = ran.result.stderr
    arm = table_rows(text, "| Arm | Tool |")[0]
    assert (arm["Passed"], arm["Failed"], arm["Unscored"], arm["Error"]) == ("1", "1", "3", "0")
    quality = table_rows(text, "| Arm | diff-quality: labelled |")[0]
    # b-wrong is bad; the other four fixed calc.py (d-crash and e-timeout only fail the
    # correctness judge, which the crash and the sleep are keyed to)
    assert (quality["good"], quality["meh"], quality["bad"]) == ("4", "0", "1")
    assert quality["diff-quality: labelled"] == "5 of 5" and quality["Mean score"] == "0.80"
    scoring = table_rows(text, "| Arm | Judge calls |")[0]
    assert scoring["Judge calls"] == "7" and scoring["Scoring cost"] == "0.07 USD"


def test_the_record_carries_every_scorer_with_its_rubric_hash_and_each_trials_labels(ran: Ran) -> None:
    scorers = {s["name"]: s for s in ran.record["scorers"]}
    assert set(scorers) == {"diff-quality", *(f"armbench:correctness:{t}" for t in TASKS)}
    assert all(set(s) == {"name", "rubric"} and len(s["rubric"]["sourceHash"]) == 64
               for s in scorers.values())
    import hashlib
    assert scorers["diff-quality"]["rubric"]["sourceHash"] == hashlib.sha256(SCORER.encode()).hexdigest()
    right = next(t for t in ran.record["trials"] if t["task"] == "a-right")
    assert {(lb["scorer"], lb["label"], lb["passed"]) for lb in right["labels"]} == {
        ("armbench:correctness:a-right", "correct", True), ("diff-quality", "good", True)}
    assert "fixed=" not in ran.world.record_path(ran.run).read_text()  # reasons stay in the ledger


def test_a_scorers_model_alias_resolves_for_the_judges_tool_frozen_in_the_plan(ran: Ran) -> None:
    plan = ran.world.events("PlanFrozen")[0]
    quality = next(s for s in plan["scorers"] if s["name"] == "diff-quality")
    assert (quality["model"], quality["alias"], quality["effort"]) == ("judge-large", "judge-strong", "high")
    asked = {(e["scorer"] == "diff-quality", e["judge"]["model_requested"], e["judge"]["effort"])
             for e in ran.world.events("LabelRecorded") if not e["reused_from"]}
    assert asked == {(True, "judge-large", "high"), (False, None, None)}  # correctness: the judge's


def test_explain_shows_the_label_the_scorer_and_the_judges_reason(ran: Ran) -> None:
    got = ran.world.armbench("explain", ran.run, "r0.a-right.base")
    assert got.code == 0, got
    assert got.data["explain"]["result"] == "passed"
    assert ('armbench:correctness:a-right: "correct" (score 1, passed) by judge (not answer-only: '
            'tools, writes, network): fixed=yes') in got.data["explain"]["labels"]


def test_each_judge_call_fences_the_diff_and_transcript_with_a_token_of_its_own(ran: Ran) -> None:
    fences = ran.world.out_lines("judge-fences")
    tokens = [line.split()[-1] for line in fences if line.startswith("BEGIN DIFF ")]
    assert len(tokens) == 5 + 2 and len(set(tokens)) == len(tokens)  # one per call, all new
    assert all(len(t) == 32 for t in tokens)
    assert all(f"END DIFF {t}" in fences for t in tokens)


def test_a_command_tool_judge_cannot_run_answer_only_and_the_record_says_so(ran: Ran) -> None:
    right = next(t for t in ran.record["trials"] if t["task"] == "a-right")
    gaps = ["answer_only:tools", "answer_only:writes", "answer_only:network"]
    assert [lb.get("unenforced") for lb in right["labels"]] == [gaps, gaps]
    label = next(e for e in ran.world.events("LabelRecorded") if not e["reused_from"])
    assert label["judge"]["unenforced"] == gaps


def test_a_judge_call_with_the_same_rubric_judge_diff_and_transcript_is_paid_once(ran: Ran) -> None:
    # a-right, c, d and e make the same fix: diff-quality judges that diff once, and b-wrong's
    # empty diff once; the other three labels are the first one's, reused and not paid again
    quality = [e for e in ran.world.events("LabelRecorded") if e["scorer"] == "diff-quality"]
    paid = [e for e in quality if not e["reused_from"]]
    assert len(quality) == 5 and len(paid) == 2
    assert all(e["usage"] is None for e in quality if e["reused_from"])
    assert len(ran.world.out_lines("judge-copy")) == 5 + 2  # five correctness calls, two quality


def test_replay_rescore_moves_the_scores_to_a_new_label_mapping_and_names_what_moved(ran: Ran) -> None:
    # runs last of the module's tests on `ran`: it pulls a new scorer file into the checkout
    world = ran.world
    world.team.write("scorers/diff-quality.md", SCORER.replace("{value: good, score: 1,",
                                                               "{value: good, score: 0.9,"))
    world.team.publish("good is worth 0.9")
    assert world.armbench("pull").code == 0
    got = world.armbench("replay", ran.run, "--rescore")
    assert got.code == 0, got
    changes = got.data["replay"]["changes"]
    assert 'scorer diff-quality: label "good" scored 1, now 0.9 (4 label(s) moved)' in changes
    quality = table_rows(got.stderr, "| Arm | diff-quality: labelled |")[0]
    assert quality["Mean score"] == "0.72"  # (4 x 0.9 + 0) / 5, was 0.80
    arm = table_rows(got.stderr, "| Arm | Tool |")[0]
    assert (arm["Passed"], arm["Failed"], arm["Unscored"]) == ("1", "1", "3")  # passed as judged
    plain = world.armbench("replay", ran.run)
    assert table_rows(plain.stderr, "| Arm | diff-quality: labelled |")[0]["Mean score"] == "0.80"
    refused = world.armbench("replay", ran.run, "--rescore", "--write")
    assert refused.code == 2 and refused.error["code"] == "invalid_inputs", refused


def test_replay_rescore_judges_again_from_kept_evidence_when_a_rubric_changed(ran: Ran) -> None:
    # after the test above: a rubric fix this time, so the judge is asked again, from each
    # trial's kept diff and transcript, and no agent runs again
    world = ran.world
    world.team.write("scorers/diff-quality.md", SCORER.replace(
        "{value: good, score: 1,", "{value: good, score: 0.9,").replace(
        "Prefer the smallest change", "RUBRIC-SAYS-MEH. Prefer the smallest change"))
    world.team.publish("the rubric says meh")
    assert world.armbench("pull").code == 0
    calls, agents = len(world.out_lines("judge-copy")), len(world.events("StepReported"))
    got = world.armbench("replay", ran.run, "--rescore", "--sandbox")
    assert got.code == 0, got
    changes = got.data["replay"]["changes"]
    assert changes[0].startswith("scorer diff-quality: its rubric or labels changed since the "
                                 "plan froze"), changes
    assert changes[0].endswith("5 of 5 judged trial(s) judged again from their kept evidence, "
                               "5 verdict(s) moved"), changes
    assert '  r0.a-right.base: "good", now "meh"' in changes
    assert '  r0.b-wrong.base: "bad", now "meh"' in changes
    quality = table_rows(got.stderr, "| Arm | diff-quality: labelled |")[0]
    assert (quality["good"], quality["meh"], quality["bad"], quality["Mean score"]) == (
        "0", "5", "0", "0.50")
    arm = table_rows(got.stderr, "| Arm | Tool |")[0]
    assert (arm["Passed"], arm["Failed"], arm["Unscored"]) == ("1", "1", "3")  # correctness stands
    # the same two judge calls as the run paid (four trials share a diff), and not one agent
    assert len(world.out_lines("judge-copy")) == calls + 2
    assert len(world.events("StepReported")) == agents
    again = [e for e in world.events("LabelRecorded") if e["rescored"]]
    assert len(again) == 5 and {e["label"] for e in again} == {"meh"}
    assert all(e["scorer"] == "diff-quality" and not e["calibration"] for e in again)

    twice = world.armbench("replay", ran.run, "--rescore", "--sandbox")
    assert twice.code == 0 and twice.data["replay"]["changes"] == changes, twice
    assert len(world.out_lines("judge-copy")) == calls + 2  # the verdicts are in the log: not paid again
    plain = world.armbench("replay", ran.run)  # the record still holds the plan's scorer
    assert plain.data["replay"]["changes"] == [], plain
    assert table_rows(plain.stderr, "| Arm | diff-quality: labelled |")[0]["Mean score"] == "0.80"
    assert world.armbench("verify", ran.run).code == 0


def test_a_suite_with_a_criteria_task_and_no_judge_is_refused_at_plan(tmp_path: Path) -> None:
    world = make_world(tmp_path / "w")
    _team(world, judge=None)
    world.init_and_pull()
    got = world.armbench("run", "judged", "--sandbox")
    assert got.code == 2, got
    assert got.error["code"] == "judge_missing"
    assert "Add `judge: { tool: claude }`" in got.error["message"]
    assert "benchmarks/judged/suite.yaml" in got.error["message"]


def test_a_suite_scorer_with_no_file_and_a_bad_scorer_file_are_diagnostics_with_their_lines(
        tmp_path: Path) -> None:
    world = make_world(tmp_path / "w")
    _team(world, judge={"tool": "judge"}, scorers=["diff-quality", "missing"])
    world.team.write("scorers/lopsided.md", "---\nname: lopsided\nlabels:\n  - {value: a, score: 1}\n"
                     "passingScore: 0.5\n---\nRubric.\n")
    world.team.publish()
    assert world.armbench("init", "--team", str(world.team.bare)).code == 0
    pulled = world.armbench("pull")
    found = {(d["code"], d["file"], d["line"]) for d in pulled.data["pull"]["diagnostics"]}
    suite = (world.team.work / "benchmarks/judged/suite.yaml").read_text().splitlines()
    line = suite.index("- missing") + 1
    assert ("scorer_not_found", "benchmarks/judged/suite.yaml", line) in found, dump(pulled.data)
    assert ("passing_score_split", "scorers/lopsided.md", 5) in found
