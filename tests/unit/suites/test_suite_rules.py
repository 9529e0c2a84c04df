"""One test per suite.yaml rule, pinning its code, line and message."""

from __future__ import annotations

import pytest
from suite_texts import SUITE, SUITE_FILE, codes, rendered, replace_line

from armbench.suites.validate import parse_suite

F = SUITE_FILE
ARMS = """\
arms:
  - name: baseline
  - name: codex
    tool: codex
  - name: fast
    model: fast"""


def suite_with(arms: str, *, extra: str = "") -> str:
    """SUITE with its arms replaced (and extra top-level lines appended)."""
    return SUITE.replace(ARMS, arms) + extra


def problems(text: str, aliases: set[str] | None = None) -> list[str]:
    return rendered(parse_suite(text, file=F, aliases=aliases)[1])


def test_the_spec_example_is_valid() -> None:
    suite, found = parse_suite(SUITE, file=F, aliases={"strong", "fast"})
    assert found == []
    assert suite is not None and suite.timeout_seconds == 6 * 3600 and suite.trial is not None
    assert suite.trial.timeout_seconds == 480 and suite.repetitions == 3 and suite.parallel == 2


def test_no_arms_and_no_matrix() -> None:
    assert problems(suite_with("arms: []")) == [
        f"{F}:6: error: arms: expected 1 to 6 arms, found none. Add `arms:` with a baseline arm such as "
        "`- name: baseline`, or a `matrix`.",
    ]


def test_arm_names_are_unique() -> None:
    assert problems(suite_with(ARMS.replace("name: fast", "name: codex"))) == [
        f"{F}:10: error: arms[2].name: the arm name `codex` is already used by `codex` (arms[1]). "
        "Give each arm its own name.",
    ]


def test_arm_names_are_plain() -> None:
    assert problems(suite_with(ARMS.replace("name: fast", "name: fast.v2"))) == [
        f"{F}:10: error: arms[2].name: expected a plain name of letters, digits, `-` and `_` (up to 64, "
        "starting with a letter or digit), found `fast.v2`. Rename the arm.",
    ]


def test_at_most_one_arm_changes_nothing() -> None:
    text = suite_with(ARMS + "\n  - name: again\n  - name: same-tool\n    tool: claude")
    assert problems(text) == [
        f"{F}:12: error: arms[3]: arm `again` changes no defaults key, and neither does `baseline` "
        "(arms[0]): "
        "at most one arm runs the defaults as they are. Remove it, or change one key.",
        f"{F}:13: error: arms[4]: arm `same-tool` changes no defaults key, and neither does `baseline` "
        "(arms[0]): at most one arm runs the defaults as they are. Remove it, or change one key.",
    ]


def test_two_arms_with_the_same_change() -> None:
    assert problems(suite_with(ARMS + "\n  - name: codex2\n    tool: codex")) == [
        f"{F}:12: error: arms[3]: arm `codex2` runs the same tool, model, effort, team and workflow as "
        "`codex` (arms[1]). Remove one of them, or change one key.",
    ]


@pytest.mark.parametrize(("value", "found"), [("0", "0"), ("11", "11")])
def test_repetitions_range(value: str, found: str) -> None:
    assert problems(replace_line(SUITE, "repetitions: 3", f"repetitions: {value}")) == [
        f"{F}:12: error: repetitions: must be a whole number from 1 to 10, found {found}. "
        "Set it within that range.",
    ]


@pytest.mark.parametrize("value", ["3.5", "three", "'3'", "true"])
def test_repetitions_of_the_wrong_type_get_the_same_code(value: str) -> None:
    _, found = parse_suite(replace_line(SUITE, "repetitions: 3", f"repetitions: {value}"), file=F)
    shown = value.strip("'")
    assert rendered(found) == [
        f"{F}:12: error: repetitions: must be a whole number from 1 to 10, found "
        f"{shown if value in ('3.5', 'true') else f'`{shown}`'}. Write a whole number in that range.",
    ]
    assert codes(found) == ["repetitions_range"]


def test_parallel_range() -> None:
    assert problems(replace_line(SUITE, "parallel: 2", "parallel: 0")) == [
        f"{F}:14: error: parallel: must be a whole number from 1 to 32, found 0. Set it within that range.",
    ]


@pytest.mark.parametrize(("value", "why"), [
    ("3600", "expected a duration such as 90s, 8m, 6h or 1h30m, found `3600` with no unit; write `3600s` or "
             "`3600m`"),
    ("1.5h", "expected a duration such as 90s, 8m, 6h or 1h30m, found `1.5h`; use whole numbers, such as "
             "`1h30m` for an hour and a half"),
    ("30m1h", "expected a duration such as 90s, 8m, 6h or 1h30m, found `30m1h`; write each unit once, "
              "largest "
              "first, with no spaces"),
    ("soon", "expected a duration such as 90s, 8m, 6h or 1h30m (whole numbers with h, m or s, largest "
             "first), "
             "found `soon`"),
    ("0m", "expected a duration longer than 0s, found `0m`"),
])
def test_timeout_is_a_duration(value: str, why: str) -> None:
    assert problems(replace_line(SUITE, "timeout: 6h", f"timeout: {value}")) == [f"{F}:13: error: timeout: "
                                                                                 f"{why}."]


def test_trial_limits() -> None:
    text = replace_line(SUITE, "trial: { timeout: 8m }", "trial: { timeout: 8 minutes, max_turns: 0 }")
    assert problems(text) == [
        f"{F}:17: error: trial.timeout: expected a duration such as 90s, 8m, 6h or 1h30m (whole numbers with "
        "h, m or s, largest first), found `8 minutes`.",
        f"{F}:17: error: trial.max_turns: must be a whole number of at least 1, found 0. Raise it, or remove "
        "it for no turn limit.",
    ]


def test_step_limits() -> None:
    text = replace_line(SUITE, "trial: { timeout: 8m }", "trial: { limits: { memory: 4 gigs, pids: 8 } }")
    assert problems(text) == [
        f"{F}:17: error: trial.limits.memory: expected a size such as 512M or 4G, found `4 gigs`. Write a "
        "size such as `4G`, or remove it for armbench's default (4G).",
        f"{F}:17: error: trial.limits.pids: must be a whole number of at least 16, found 8. Raise it, or "
        "remove it for armbench's default (1024).",
    ]
    tiny = replace_line(SUITE, "trial: { timeout: 8m }", "trial: { limits: { memory: 512K } }")
    assert problems(tiny) == [
        f"{F}:17: error: trial.limits.memory: expected a size of at least 1M, found `512K`. Write a size "
        "such as `4G`, or remove it for armbench's default (4G).",
    ]


def test_step_limits_and_a_network_that_are_valid() -> None:
    text = replace_line(SUITE, "trial: { timeout: 8m }",
                        "trial: { network: host, limits: { memory: 1.5G, pids: 256 } }")
    suite, found = parse_suite(text, file=F, aliases={"strong", "fast"})
    assert found == [] and suite is not None and suite.trial is not None
    assert suite.trial.network == "host" and suite.trial.limits is not None
    assert (suite.trial.limits.memory, suite.trial.limits.pids) == ("1.5G", 256)
    unknown = replace_line(SUITE, "trial: { timeout: 8m }", "trial: { network: lan }")
    assert codes(parse_suite(unknown, file=F, aliases={"strong", "fast"})[1]) != []


def test_a_model_name_in_defaults_while_arms_change_the_tool_is_a_warning() -> None:
    text = SUITE.replace("model: strong", "model: claude-opus-4-8")
    suite, found = parse_suite(text, file=F, aliases={"strong", "fast"})
    assert suite is not None
    assert rendered(found) == [
        f"{F}:5: warning: defaults.model: `claude-opus-4-8` is a model name, not an alias of "
        "models/aliases.yaml, and arms change the tool to codex, which would be asked for `claude-opus-4-8` "
        "too. Use an alias, which resolves to a model per tool.",
    ]
    assert codes(found) == ["model_not_alias"]


def test_no_model_warning_without_a_tool_arm_or_without_known_aliases() -> None:
    text = SUITE.replace("model: strong", "model: claude-opus-4-8")
    assert problems(text, aliases=None) == []
    assert problems(text.replace("    tool: codex", "    effort: high"), aliases={"strong"}) == []


@pytest.mark.parametrize("value", ["https://models.example/x", "/opt/models/x", "./x", "../x", "~/x", "a\\b",
                                   "git@github.com:acme/team.git", "C:/models/x"])
@pytest.mark.parametrize("key", ["tool", "model", "effort", "team", "workflow"])
def test_arm_values_that_look_like_a_url_or_a_path_are_unpublishable(key: str, value: str) -> None:
    text = suite_with(ARMS.replace("    model: fast", f"    {key}: '{value}'"))
    _, found = parse_suite(text, file=F)
    assert codes(found) == ["arm_unpublishable"]
    assert rendered(found) == [
        f"{F}:11: error: arms[2].{key}: expected a plain {key} name, found `{value}`, which looks like a URL "
        "or "
        "a local path and would reach the published record. Use a plain name.",
    ]


def test_defaults_values_are_checked_too() -> None:
    assert codes(parse_suite(SUITE.replace("tool: claude", "tool: /usr/bin/claude"), file=F)[1]) == [
        "arm_unpublishable"]


def test_an_empty_arm_value() -> None:
    assert problems(suite_with(ARMS.replace("    model: fast", "    model: ''"))) == [
        f"{F}:11: error: arms[2].model: expected a model name, found an empty text. Write the model, or "
        "remove "
        "the key to keep the defaults' model.",
    ]


def test_a_team_ref_git_would_not_accept() -> None:
    assert problems(suite_with(ARMS + "\n  - name: odd\n    team: 'bench..x'")) == [
        f"{F}:13: error: arms[3].team: expected a branch, tag or commit of the team repo, found `bench..x`, "
        "which git does not accept as a ref name. Use `pulled`, `none`, a branch, tag or commit, or "
        "`{without: [paths]}`.",
    ]


def test_team_choices_parse() -> None:
    text = suite_with(ARMS + "\n  - name: ref\n    team: bench/without-release-skill\n  - name: bare\n"
                      "    team: none\n")
    text = text.replace("  - name: fast\n    model: fast\n", "  - name: no-release\n"
                        "    team: { without: [skills/release, rules/commits.md] }\n")
    suite, found = parse_suite(text, file=F)
    assert found == [] and suite is not None
    assert [arm.team for arm in suite.arms][2:] == [
        suite.arms[2].team, "bench/without-release-skill", "none"]


def test_without_paths() -> None:
    text = suite_with(ARMS + "\n  - name: no\n    team: { without: [skills/dev, skills/dev/release, /etc, "
                             "''] }")
    assert problems(text) == [
        f"{F}:13: error: arms[3].team.without[1]: `skills/dev/release` overlaps `skills/dev`, listed before "
        "it: "
        "a path inside another listed path, or the same path twice. Keep only the outer path.",
        f"{F}:13: error: arms[3].team.without[2]: expected a path relative to the repo root, found `/etc`, "
        "which starts with `/`. Write a team repo path as git lists it.",
        f"{F}:13: error: arms[3].team.without[3]: expected a path relative to the repo root, found an empty "
        "path. Write a team repo path as git lists it.",
    ]


def test_an_empty_without() -> None:
    assert codes(parse_suite(suite_with(ARMS + "\n  - name: no\n    team: { without: [] }"), file=F)[1]) == [
        "without_empty"]


MATRIX_SUITE = """\
schemaVersion: v1alpha1
name: onboarding-docs
repo: https://github.com/acme/api
defaults: { tool: claude }
matrix:
  tool: [claude, codex]
  team: [pulled, none]
timeout: 2h
"""


def test_a_matrix_alone_is_valid() -> None:
    suite, found = parse_suite(MATRIX_SUITE, file=F)
    assert found == [] and suite is not None and suite.arms == ()


def test_a_matrix_over_12_arms() -> None:
    text = MATRIX_SUITE.replace("[claude, codex]", "[claude, codex, gemini, opencode, cursor, amp, aider]")
    assert problems(text) == [
        f"{F}:5: error: matrix: expected at most 12 arms, found 14 (7 × 2). Remove values, or split the "
        "suite.",
    ]


def test_a_matrix_without_values() -> None:
    assert problems(MATRIX_SUITE.replace("  team: [pulled, none]\n", "  team: []\n")) == [
        f"{F}:7: error: matrix.team: expected a list of team values, found an empty list. Add values, or "
        "remove `team` from the matrix.",
    ]
    assert problems(MATRIX_SUITE.replace("  tool: [claude, codex]\n  team: [pulled, none]\n", "  {}\n")) == [
        f"{F}:5: error: matrix: expected values to cross under tool, model, team or workflow, found none. "
        "Add lists such as `tool: [claude, codex]`, or remove `matrix`.",
    ]


def test_a_matrix_value_twice() -> None:
    assert problems(MATRIX_SUITE.replace("[claude, codex]", "[claude, codex, claude]")) == [
        f"{F}:6: error: matrix.tool[2]: repeats a value listed before it. Remove the repeat.",
    ]


def test_a_matrix_arm_named_like_an_arm() -> None:
    text = MATRIX_SUITE.replace("matrix:", "arms:\n  - name: codex-none\n    effort: high\nmatrix:")
    assert problems(text) == [
        f"{F}:8: error: matrix: the arm name `codex-none` is already used by `codex-none` (arms[0]). "
        "Give each arm its own name.",
    ]


def test_a_matrix_arm_that_equals_the_baseline_arm() -> None:
    text = MATRIX_SUITE.replace("matrix:", "arms:\n  - name: baseline\nmatrix:")
    assert problems(text) == [
        f"{F}:7: error: matrix: arm `claude-pulled` changes no defaults key, and neither does `baseline` "
        "(arms[0]): at most one arm runs the defaults as they are. Remove it, or change one key.",
    ]


def test_repo_setup_and_scorers() -> None:
    text = SUITE.replace("repo: https://github.com/acme/api", "repo: ''")
    text = text.replace("setup: npm ci", "setup: ' '")
    text = text.replace("scorers: [diff-quality]", "scorers: [diff-quality, diff-quality, a/b]")
    assert problems(text) == [
        f"{F}:4: error: repo: expected the project the tasks start from, found an empty text. Write its "
        "clone "
        "URL, such as `https://github.com/acme/api`.",
        f"{F}:15: error: setup: expected a shell command such as `npm ci`, found an empty text. Write the "
        "command, or remove `setup`.",
        f"{F}:16: error: scorers[1]: `diff-quality` is listed twice. Remove one; each scorer judges every "
        "trial once.",
        f"{F}:16: error: scorers[2]: expected a plain name of letters, digits, `-` and `_` (up to 64, "
        "starting "
        "with a letter or digit), found `a/b`. Name a team scorer file.",
    ]


def test_suite_name_is_plain() -> None:
    assert codes(parse_suite(SUITE.replace("name: auth-fixes", "name: auth fixes"), file=F)[1]) == [
        "suite_name_invalid"]


def test_schema_version() -> None:
    assert problems(SUITE.replace("schemaVersion: v1alpha1", "schemaVersion: v1")) == [
        f"{F}:1: error: schemaVersion: expected `v1alpha1`, found `v1`. Set `schemaVersion: v1alpha1`, the "
        "format this armbench reads.",
    ]


def test_unknown_keys_are_reported_at_their_line_with_a_suggestion() -> None:
    text = replace_line(SUITE, "parallel: 2", "paralel: 2").replace("    tool: codex", "    tool: codex\n"
                                                                    "    colour: red")
    assert problems(text) == [
        f"{F}:10: error: arms[1]: unknown key `colour`; expected one of name, tool, model, effort, team, "
        "workflow. Remove it, or fix its spelling.",
        f"{F}:15: error: Unknown key `paralel`; expected one of schemaVersion, name, description, repo, "
        "defaults, arms, matrix, repetitions, timeout, parallel, setup, scorers, trial, judge, environment, "
        "budget. "
        "Did you mean `parallel`? Remove it, or fix its spelling.",
    ]


def test_wrong_types_are_all_reported_at_once() -> None:
    text = SUITE.replace("name: auth-fixes", "name: [auth]").replace("tool: claude,", "tool: [claude],")
    text = text.replace("  - name: fast\n    model: fast", "  - fast")
    assert problems(text) == [
        f"{F}:2: error: name: expected text, found a list of 1 item. Change it to text.",
        f"{F}:5: error: defaults.tool: expected text, found a list of 1 item. Change it to text.",
        f"{F}:10: error: arms[2]: expected a mapping, found `fast`. Change it to a mapping.",
    ]


def test_missing_keys_inside_an_object_point_at_the_object() -> None:
    text = SUITE.replace("defaults: { tool: claude, model: strong }", "defaults: { model: strong }")
    assert problems(text) == [
        f"{F}:5: error: defaults: missing `tool`, which is required. Add `tool:` with text.",
    ]


def test_trial_retries_and_their_backoff() -> None:
    text = replace_line(SUITE, "trial: { timeout: 8m }",
                        "trial: { timeout: 8m, retries: 11, retry_backoff: 10 }")
    assert problems(text) == [
        f"{F}:17: error: trial.retries: must be a whole number from 0 to 10, found 11. Set it within that "
        "range (0: never retry a transient failure).",
        f"{F}:17: error: trial.retry_backoff: expected a duration such as 90s, 8m, 6h or 1h30m, found `10` "
        "with no unit; write `10s` or `10m`.",
    ]


def test_trial_retries_default_to_two_after_ten_seconds_doubling() -> None:
    suite, _ = parse_suite(SUITE, file=F, aliases={"strong", "fast"})
    assert suite is not None and suite.trial is not None
    assert (suite.trial.retries, suite.trial.retry_backoff_seconds) == (2, 10)
    plain, _ = parse_suite(replace_line(SUITE, "trial: { timeout: 8m }", "trial: { retries: 0 }"), file=F,
                           aliases={"strong", "fast"})
    assert plain is not None and plain.trial is not None and plain.trial.retries == 0


def test_trial_setup_is_once_or_each_and_each_by_default() -> None:
    suite, _ = parse_suite(SUITE, file=F, aliases={"strong", "fast"})
    assert suite is not None and suite.trial is not None and suite.trial.setup == "each"
    once, found = parse_suite(replace_line(SUITE, "trial: { timeout: 8m }", "trial: { setup: once }"),
                              file=F, aliases={"strong", "fast"})
    assert found == [] and once is not None and once.trial is not None and once.trial.setup == "once"
    assert problems(replace_line(SUITE, "trial: { timeout: 8m }", "trial: { setup: twice }")) == [
        f"{F}:17: error: trial.setup: expected one of `each`, `once`, found `twice`. Change it to one of "
        "`each`, `once`.",
    ]


def test_trial_setup_once_needs_a_setup() -> None:
    text = replace_line(replace_line(SUITE, "trial: { timeout: 8m }", "trial: { setup: once }"),
                        "setup: npm ci", "")
    assert problems(text) == [
        f"{F}:17: error: trial.setup: `once` runs the suite's setup once per task, but the suite has no "
        "setup. Write `setup`, or remove `trial.setup`.",
    ]


@pytest.mark.parametrize(("environment", "found"), [
    ("{image: oci-archive:images/py39.tar}", []),
    ("{rootfs: /srv/roots/py39}", []),
    ("{image: oci-archive:a.tar, rootfs: /srv/r}",
     ["expected exactly one of `image` or `rootfs`, found both"]),
    ("{}", ["expected exactly one of `image` or `rootfs`, found neither"]),
    ("{image: 'python:3.9'}", ["armbench never pulls from a registry"]),
])
def test_an_environment_is_one_image_file_or_one_root_folder(environment: str, found: list[str]) -> None:
    said = problems(suite_with(ARMS, extra=f"environment: {environment}\n"), aliases={"strong", "fast"})
    assert len(said) == len(found)
    for line, words in zip(said, found, strict=True):
        assert line.startswith(f"{F}:") and ": error: environment" in line and words in line, line


def test_a_run_budget_is_a_positive_amount_in_a_unit() -> None:
    good, found = parse_suite(SUITE + "budget: { cost: { amount: 25, unit: USD } }\n", file=F)
    assert found == [] and good is not None and good.budget is not None
    assert (good.budget.cost.amount, good.budget.cost.unit) == (25.0, "USD")
    text = SUITE + "budget:\n  cost: { amount: 0, unit: ' ' }\n"
    line = text.count("\n")  # the last line, `cost:`
    assert problems(text) == [
        f"{F}:{line}: error: budget.cost.amount: must be a number more than 0, found 0.0. Set the most "
        "the run may spend, or remove `budget`.",
        f"{F}:{line}: error: budget.cost.unit: expected the unit the tools state their cost in, such as "
        "`USD`, found an empty text. Write it.",
    ]


def test_a_trial_budget_is_a_token_count_and_a_positive_cost() -> None:
    text = replace_line(SUITE, "trial: { timeout: 8m }",
                        "trial: { budget: { tokens: 0, cost: { amount: -1, unit: USD } } }")
    assert problems(text) == [
        f"{F}:17: error: trial.budget.cost.amount: must be a number more than 0, found -1.0. Set the "
        "most one trial may spend, or remove `trial.budget.cost`.",
        f"{F}:17: error: trial.budget.tokens: must be a whole number of at least 1, found 0. Raise "
        "it, or remove it for no token cap.",
    ]


def test_a_tool_that_is_neither_built_in_nor_a_team_tool_is_a_warning_with_the_likeliest_name() -> None:
    text = SUITE.replace("    tool: codex", "    tool: codx")
    suite, found = parse_suite(text, file=F, aliases={"strong", "fast"}, tools=["lazy"])
    assert suite is not None and codes(found) == ["tool_unknown"]
    assert rendered(found) == [
        f"{F}:9: warning: arms[1].tool: arm `codex` runs tool `codx`, which is neither an agent CLI armbench "
        "runs (claude, codex, gemini and opencode) nor a team tool (tools/codx/tool.yaml), so its trials "
        "would not run. Did you mean `codex`? Fix the tool's name, or add its tool.yaml."]
    lazy = SUITE.replace("defaults: { tool: claude, model: strong }",
                         "defaults: { tool: lasy, model: strong }")
    [warned] = parse_suite(lazy, file=F, aliases={"strong", "fast"}, tools=["lazy"])[1]
    assert (warned.line, warned.code) == (5, "tool_unknown")
    assert "runs tool `lasy`" in warned.message and "Did you mean `lazy`?" in warned.message


def test_built_in_and_team_tools_draw_no_warning_and_without_the_team_tools_nothing_is_checked() -> None:
    assert problems(SUITE, aliases={"strong", "fast"}) == []
    assert parse_suite(SUITE, file=F, aliases={"strong", "fast"}, tools=[])[1] == []
    team = SUITE.replace("    tool: codex", "    tool: lazy")
    assert parse_suite(team, file=F, aliases={"strong", "fast"}, tools=["lazy"])[1] == []
    assert parse_suite(team, file=F, aliases={"strong", "fast"})[1] == []


def test_the_built_in_tools_are_the_adapters() -> None:
    from armbench.benchmark.agents import LAYOUTS
    from armbench.suites.arms import BUILT_IN_TOOLS

    assert sorted(LAYOUTS) == list(BUILT_IN_TOOLS)
