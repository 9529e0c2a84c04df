"""resolve_arms: defaults applied, the matrix crossed and named, in file order."""

from __future__ import annotations

import msgspec
import pytest
from suite_texts import SUITE

from armbench.suites.arms import matrix_size, resolve_arms, team_kind
from armbench.suites.model import Suite, TeamWithout
from armbench.suites.validate import parse_suite


def suite_of(text: str) -> Suite:
    suite, found = parse_suite(text, file="suite.yaml")
    assert suite is not None, found
    return suite


def test_arms_get_the_defaults_and_name_what_they_change() -> None:
    arms = resolve_arms(suite_of(SUITE))
    shown = [(a.name, a.tool, a.model, a.effort, a.team, a.workflow, a.changes, a.origin, a.path)
             for a in arms]
    assert shown == [
        ("baseline", "claude", "strong", None, "pulled", None, (), "arms", "$.arms[0]"),
        ("codex", "codex", "strong", None, "pulled", None, ("tool",), "arms", "$.arms[1]"),
        ("fast", "claude", "fast", None, "pulled", None, ("model",), "arms", "$.arms[2]"),
    ]


def test_an_arm_that_repeats_a_default_value_changes_nothing() -> None:
    arms = resolve_arms(suite_of(SUITE.replace("    tool: codex", "    tool: claude").replace(
        "  - name: baseline\n", "")))
    assert [a.changes for a in arms] == [(), ("model",)]


MATRIX = """\
schemaVersion: v1alpha1
name: onboarding-docs
repo: https://github.com/acme/api
defaults: { tool: claude }
matrix:
  tool: [claude, codex]
  team: [pulled, none]
timeout: 2h
"""


def test_the_spec_matrix_makes_four_arms_named_after_their_values() -> None:
    arms = resolve_arms(suite_of(MATRIX))
    assert [(a.name, a.tool, a.team, a.changes, a.origin) for a in arms] == [
        ("claude-pulled", "claude", "pulled", (), "matrix"),
        ("claude-none", "claude", "none", ("team",), "matrix"),
        ("codex-pulled", "codex", "pulled", ("tool",), "matrix"),
        ("codex-none", "codex", "none", ("tool", "team"), "matrix"),
    ]


def test_arms_come_before_matrix_arms_and_values_become_names() -> None:
    text = MATRIX.replace("matrix:\n  tool: [claude, codex]\n  team: [pulled, none]\n",
                          "arms:\n  - name: one-shot\nmatrix:\n  workflow: [plan-then-fix]\n"
                          "  team: ['bench/no-skill', {without: [skills/release, rules/a.md]}]\n")
    arms = resolve_arms(suite_of(text))
    assert [a.name for a in arms] == ["one-shot", "bench-no-skill-plan-then-fix",
                                      "without-skills-release-rules-a-md-plan-then-fix"]
    assert arms[2].team == TeamWithout(without=("skills/release", "rules/a.md"))
    assert arms[1].changes == ("team", "workflow")


@pytest.mark.parametrize(("team", "kind"), [("pulled", "pulled"), ("none", "none"), ("v2", "ref"),
                                            (TeamWithout(without=("a",)), "without")])
def test_team_kind(team: object, kind: str) -> None:
    assert team_kind(team) == kind  # type: ignore[arg-type]


def test_a_matrix_over_the_limit_is_refused_not_expanded() -> None:
    suite = suite_of(MATRIX)
    big = msgspec.structs.replace(suite, matrix=msgspec.structs.replace(
        suite.matrix, tool=tuple(f"t{i}" for i in range(100)), model=tuple(f"m{i}" for i in range(100))))
    assert big.matrix is not None and matrix_size(big.matrix) == 20_000
    with pytest.raises(ValueError, match="20000 arms, over 12"):
        resolve_arms(big)
