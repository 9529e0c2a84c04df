"""Pairs in the results table (team-asset-arms.md "Comparing arms", criteria 9, 10, 12): given
events, then pairs."""

from __future__ import annotations

import msgspec
import pytest

from armbench.ledger.events import PlannedArm, PlannedTeam
from armbench.projections.arm_keys import differing_keys
from armbench.projections.arm_pairs import PairDifference, derive_pairs
from armbench.projections.record_types import RecordArm
from armbench.projections.results import fold_run
from armbench.projections.stats import NoData
from armbench.projections.table import build_table, render_markdown
from armbench.suites.arms import resolve_arms
from armbench.suites.validate import parse_suite
from compare.builders import all_pass, arm, plan, run_events, task


def table_of(arms: list[PlannedArm], outcome=all_pass, *, tasks=("t1", "t2"), reps=3, usage=None):
    events = run_events(plan(arms, [task(t) for t in tasks], reps), outcome, usage=usage)
    return build_table(fold_run(events))


def test_criterion_9_one_pair_over_6_trials_a_at_6_of_6_and_b_at_5_of_6() -> None:
    def outcome(t: str, a: str, rep: int) -> str:
        return "failed" if (t, a, rep) == ("t1", "b", 1) else "passed"

    table = table_of([arm("a", model="m1"), arm("b", model="m2")], outcome)
    [pair] = table.pairs
    assert (pair.key, pair.measured_from.arm, pair.measured_to.arm, pair.trials) == ("model", "a", "b", 6)
    assert (pair.measured_from.passed, pair.measured_to.passed) == (6, 5)
    assert [(t.task, t.trials, t.from_passed, t.to_passed) for t in pair.tasks] == [
        ("t1", 3, 3, 2), ("t2", 3, 3, 3)]
    d = pair.difference
    assert isinstance(d, PairDifference)
    assert d.estimate == pytest.approx(-1 / 6)
    assert d.lower < d.estimate < d.upper and d.upper > 0  # one miss is not a separated drop
    assert (d.both_passed, d.from_only_passed, d.to_only_passed, d.neither_passed) == (5, 1, 0, 0)


def test_pairs_reach_the_table_data_as_from_and_to_and_the_text_has_no_pair_table() -> None:
    table = table_of([arm("a", model="m1"), arm("b", model="m2")])
    data = msgspec.to_builtins(table)["pairs"][0]
    assert (data["key"], data["from"]["arm"], data["to"]["arm"], data["trials"]) == ("model", "a", "b", 6)
    assert data["difference"]["type"] == "pair_difference"
    assert render_markdown(table) == render_markdown(msgspec.structs.replace(table, pairs=[]))


def test_the_usage_rows_and_pair_arms_keep_their_json_keys_in_order() -> None:
    """The six usage figures are declared once (`StatedUsage`); the rows that show them keep the
    order `outputs.table` has always had: their own leading fields, the six, then the rest."""
    table = table_of([arm("a", model="m1"), arm("b", model="m2")])
    six = ["median_tokens", "tokens_n", "median_duration_ms", "duration_n", "cost", "cost_n"]
    data = msgspec.json.decode(msgspec.json.encode(table))
    assert [list(row) for row in data["usage"]] == [["arm", *six, "cost_planned"]] * 2
    pair = data["pairs"][0]
    assert list(pair["from"]) == list(pair["to"]) == ["arm", "passed", "pass_rate", *six]


@pytest.mark.parametrize("bad", ["error", "not_run"])
def test_criterion_10_a_trial_error_in_either_arm_stays_paired_and_counts_as_not_passed(bad: str) -> None:
    def outcome(t: str, a: str, rep: int) -> str:
        return bad if (t, a, rep) in {("t1", "a", 0), ("t2", "b", 2)} else "passed"

    [pair] = table_of([arm("a", model="m1"), arm("b", model="m2")], outcome).pairs
    assert pair.trials == 6
    assert (pair.measured_from.passed, pair.measured_to.passed) == (5, 5)
    assert isinstance(pair.difference, PairDifference)
    assert (pair.difference.from_only_passed, pair.difference.to_only_passed) == (1, 1)


def test_an_unscored_trial_in_a_record_is_paired_as_not_passed() -> None:
    arms = [{"name": "a", "tool": "x"}, {"name": "b", "tool": "y"}]
    trials = [{"task": "t", "arm": "a", "repetition": 0, "result": "unscored"},
              {"task": "t", "arm": "b", "repetition": 0, "result": "passed"}]
    [pair] = derive_pairs(arms, trials)
    assert (pair.key, pair.trials, pair.measured_from.passed, pair.measured_to.passed) == ("tool", 1, 0, 1)


MATRIX = """\
schemaVersion: v1alpha1
name: m
repo: https://example.invalid/p
defaults: { tool: x, model: m1 }
matrix:
  tool: [x, y]
  model: [m1, m2]
timeout: 10m
"""


def test_criterion_12_a_tool_by_model_matrix_makes_four_arms_and_pairs_only_one_key_apart() -> None:
    suite, found = parse_suite(MATRIX, file="suite.yaml")
    assert suite is not None, found
    arms = [arm(a.name, a.tool, a.model) for a in resolve_arms(suite)]
    assert [a.name for a in arms] == ["x-m1", "x-m2", "y-m1", "y-m2"]
    pairs = table_of(arms).pairs
    assert [(p.key, p.measured_from.arm, p.measured_to.arm) for p in pairs] == [
        ("model", "x-m1", "x-m2"), ("tool", "x-m1", "y-m1"), ("tool", "x-m2", "y-m2"),
        ("model", "y-m1", "y-m2")]


@pytest.mark.parametrize(("first", "second", "expected"), [
    ({"kind": "pulled"}, {"kind": "none"}, ("none", "pulled")),
    ({"kind": "pulled"}, {"kind": "ref", "ref": "bench/x"}, ("ref", "pulled")),
    ({"kind": "ref", "ref": "bench/x"}, {"kind": "without", "paths": ["skills/a"]}, ("without", "ref")),
    ({"kind": "none"}, {"kind": "without", "paths": ["skills/a"]}, ("none", "without")),
    ({"kind": "ref", "ref": "bench/x"}, {"kind": "ref", "ref": "bench/y"}, ("ref", "ref")),
])
def test_a_team_difference_is_measured_from_none_then_without_then_a_ref_then_pulled(
        first: dict, second: dict, expected: tuple[str, str]) -> None:
    def frozen(team: dict, revision: str) -> PlannedTeam:  # as a plan freezes it
        return msgspec.convert({**team, "revision": revision, "commit": "c" * 40}, PlannedTeam)

    arms = [arm("one", team=frozen(first, "1" * 40)), arm("two", team=frozen(second, "2" * 40))]
    [pair] = table_of(arms).pairs
    kinds = {"one": first["kind"], "two": second["kind"]}
    assert pair.key == "team"
    assert (kinds[pair.measured_from.arm], kinds[pair.measured_to.arm]) == expected
    if first["kind"] == second["kind"]:
        assert pair.measured_from.arm == "one"  # otherwise from the arm listed first


def test_the_tool_model_and_workflow_directions_follow_the_arm_listed_first() -> None:
    arms = [{"name": "z", "tool": "x", "workflow": "plan-first"}, {"name": "a", "tool": "x"}]
    [pair] = derive_pairs(arms, [])
    assert (pair.key, pair.measured_from.arm, pair.measured_to.arm) == ("workflow", "z", "a")


@pytest.mark.parametrize(("a", "b", "keys"), [
    # effort is part of the model choice: the same model at another effort differs in model
    ({"tool": "x", "model": "m", "effort": "high"}, {"tool": "x", "model": "m", "effort": "low"}, ["model"]),
    # one alias across tools is one model choice, though it resolves per tool
    ({"tool": "x", "alias": "strong", "model": "mx"},
     {"tool": "y", "alias": "strong", "model": "my"}, ["tool"]),
    ({"tool": "x", "model": "m", "effort": "high"},
     {"tool": "y", "model": "m", "effort": "low"}, ["tool", "model"]),
    # the revision a team resolved to is never the difference
    ({"tool": "x", "team": {"kind": "pulled", "revision": "1"}},
     {"tool": "x", "team": {"kind": "pulled", "revision": "2"}}, []),
    ({"tool": "x", "team": {"kind": "without", "paths": ["b", "a"]}},
     {"tool": "x", "team": {"kind": "without", "paths": ["a", "b"]}}, []),
    ({"tool": "x", "workflow": {"name": "w", "sourceHash": "1"}}, {"tool": "x", "workflow": "w"}, []),
])
def test_which_keys_two_arms_differ_in(a: dict, b: dict, keys: list[str]) -> None:
    def typed(arm: dict) -> RecordArm:  # as a record's reader decodes it
        return msgspec.convert({"name": "n", **arm}, RecordArm)

    assert differing_keys(typed(a), typed(b)) == keys


def test_arms_two_keys_apart_or_identical_are_not_paired() -> None:
    arms = [arm("a", "x", "m1"), arm("b", "y", "m2"), arm("c", "x", "m1")]
    assert table_of(arms).pairs == []


def test_usage_is_over_the_paired_trials_only() -> None:
    arms = [{"name": "a", "tool": "x"}, {"name": "b", "tool": "y"}]
    trials = [
        {"task": "t", "arm": "a", "repetition": 0, "result": "passed", "tokens": {"input": 10, "output": 5},
         "durationMs": 100, "cost": {"amount": 0.5, "unit": "USD"}},
        {"task": "t", "arm": "a", "repetition": 1, "result": "passed", "tokens": {"input": 30, "output": 5},
         "durationMs": 300},
        {"task": "t", "arm": "a", "repetition": 2, "result": "passed", "tokens": {"input": 999, "output": 0},
         "durationMs": 9999, "cost": {"amount": 9.0, "unit": "USD"}},  # b has no repetition 2
        {"task": "t", "arm": "b", "repetition": 0, "result": "failed"},
        {"task": "t", "arm": "b", "repetition": 1, "result": "passed",
         "tokens": {"input": 7, "reasoning": 3}},
    ]
    [pair] = derive_pairs(arms, trials)
    a, b = pair.measured_from, pair.measured_to
    assert pair.trials == 2 and (a.passed, a.pass_rate, b.passed, b.pass_rate) == (2, 1.0, 1, 0.5)
    assert (a.median_tokens, a.tokens_n, a.median_duration_ms, a.duration_n) == (25, 2, 200, 2)
    assert (a.cost, a.cost_n) == ({"USD": 0.5}, 1)
    assert (b.median_tokens, b.tokens_n, b.median_duration_ms, b.cost, b.cost_n) == (7, 1, None, {}, 0)
    assert isinstance(pair.difference, PairDifference) and pair.difference.estimate == -0.5


def test_without_paired_trials_the_difference_says_so_and_gives_no_number() -> None:
    [pair] = derive_pairs([{"name": "a", "tool": "x"}, {"name": "b", "tool": "y"}], [])
    assert pair.trials == 0 and pair.measured_from.pass_rate is None
    assert pair.difference == NoData(reason="no paired trials")
    assert msgspec.to_builtins(pair)["difference"] == {"type": "no_data", "reason": "no paired trials"}
