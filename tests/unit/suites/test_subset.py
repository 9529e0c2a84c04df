"""A subset of a suite (`--task`, `--arm`, `--repetitions`): what it selects, what it refuses,
and when it is the whole suite."""

from __future__ import annotations

import pytest

from armbench.ledger.errors import Refusal
from armbench.ledger.events import PlanSubset
from armbench.suites.subset import Selection, select, selection_from_inputs, subset_inputs, subset_words

TASKS = ["auth-login", "auth-logout", "billing"]
ARMS = ["claude", "codex", "gemini"]


def pick(**asked: object) -> PlanSubset | None:
    return select(Selection(**asked), suite="s", tasks=TASKS, arms=ARMS,  # type: ignore[arg-type]
                  repetitions=3)


def test_globs_and_ids_select_tasks_in_the_suites_order_and_arms_by_name() -> None:
    assert pick(tasks=["billing", "auth-*"], arms=["codex"]) == PlanSubset(
        tasks=TASKS, arms=["codex"], repetitions=3)
    assert pick(tasks=["auth-log?ut"], arms=["gemini", "claude"]) == PlanSubset(
        tasks=["auth-logout"], arms=["claude", "gemini"], repetitions=3)
    assert pick(repetitions=1) == PlanSubset(tasks=TASKS, arms=ARMS, repetitions=1)


@pytest.mark.parametrize("asked", [{}, {"tasks": ["*"]}, {"arms": ARMS}, {"repetitions": 3}])
def test_a_selection_of_the_whole_suite_is_no_subset(asked: dict) -> None:
    assert pick(**asked) is None


@pytest.mark.parametrize(("asked", "code", "names"), [
    ({"tasks": ["auth-*", "nope"]}, "unknown_task", "auth-login, auth-logout, billing"),
    ({"arms": ["claude", "Codex"]}, "unknown_arm", "claude, codex, gemini"),
    ({"repetitions": 0}, "bad_option", "1 to 3"),
    ({"repetitions": 4}, "bad_option", "1 to 3"),
])
def test_what_the_suite_lacks_is_refused_naming_what_it_has(asked: dict, code: str,
                                                             names: str) -> None:
    with pytest.raises(Refusal) as refused:
        pick(**asked)
    assert refused.value.code == code and names in str(refused.value)


def test_a_selection_travels_in_the_run_inputs_and_reads_in_words() -> None:
    asked = Selection(tasks=["auth-*"], arms=["codex"], repetitions=1)
    assert selection_from_inputs({"suite": "s", **subset_inputs(asked)}) == asked
    assert subset_inputs(Selection()) == {} and selection_from_inputs({"suite": "s"}) is None
    assert subset_words(PlanSubset(tasks=["a", "b"], arms=["x"], repetitions=1)) == (
        "tasks a, b; arm x; 1 repetition")
