"""Acceptance criterion 1: pull reports each of these problems with its file and line."""

from __future__ import annotations

from suite_texts import FIX, START, SUITE, SUITE_FILE, TASK, TASK_FILE, rendered, replace_line

from armbench.suites.validate import parse_suite, parse_task, validate_suite_dir

SEVEN_ARMS = replace_line(SUITE, "    model: fast", """\
    model: fast
  - name: high
    effort: high
  - name: bare
    team: none
  - name: planned
    workflow: plan-then-fix
  - name: gemini
    tool: gemini""")


def test_a_suite_with_7_arms_is_reported_at_the_seventh_arm() -> None:
    suite, found = parse_suite(SEVEN_ARMS, file=SUITE_FILE)
    assert suite is None
    assert rendered(found) == [
        f"{SUITE_FILE}:18: error: arms[6]: expected 1 to 6 arms, found 7. Remove an arm or split the suite.",
    ]


def test_a_suite_without_timeout_is_reported() -> None:
    suite, found = parse_suite(replace_line(SUITE, "timeout: 6h", ""), file=SUITE_FILE)
    assert suite is None
    assert rendered(found) == [
        f"{SUITE_FILE}:1: error: Missing `timeout`, which is required. Add `timeout: 6h` (or your limit): "
        "the longest the whole run may take.",
    ]
    assert found[0].code == "timeout_missing"


def test_a_suite_with_parallel_33_is_reported() -> None:
    suite, found = parse_suite(replace_line(SUITE, "parallel: 2", "parallel: 33"), file=SUITE_FILE)
    assert suite is None
    assert rendered(found) == [
        f"{SUITE_FILE}:14: error: parallel: must be a whole number from 1 to 32, found 33. "
        "Set it within that range.",
    ]


def test_an_arm_that_changes_both_tool_and_model_is_reported() -> None:
    text = replace_line(SUITE, "    tool: codex", "    tool: codex\n    model: fast")
    suite, found = parse_suite(text, file=SUITE_FILE)
    assert suite is None
    assert rendered(found) == [
        f"{SUITE_FILE}:8: error: arms[1]: arm `codex` changes tool and model; an arm changes at most one "
        "defaults key, so its result reads as that change. Split it into one arm per key, or cross the "
        "values in a `matrix`.",
    ]


def test_a_task_with_both_check_and_success_criteria_is_reported() -> None:
    text = TASK + "successCriteria: Expired tokens are rejected.\n"
    task, found = parse_task(text, file=TASK_FILE, task_id="expired-token")
    assert task is None
    assert rendered(found) == [
        f"{TASK_FILE}:11: error: successCriteria: the task has both check and successCriteria; a task is "
        "judged by exactly one. Keep check when a command can decide the task, else keep successCriteria.",
    ]


def test_a_task_with_an_empty_protect_is_reported() -> None:
    text = replace_line(TASK, "  protect: ['test/**', 'vitest.config.ts', 'package.json', "
                              "'package-lock.json']",
                        "  protect: []")
    text = replace_line(text, "  add: [test/auth/refresh.test.ts]", "")
    task, found = parse_task(text, file=TASK_FILE, task_id="expired-token")
    assert task is None
    assert rendered(found) == [
        f"{TASK_FILE}:8: error: check.protect: expected a non-empty list of paths relative to the repo, "
        "found "
        "an empty list. List everything the check reads that the agent must not supply, such as "
        "`['test/**']`.",
    ]


def test_a_starting_commit_that_is_not_a_full_commit_is_reported() -> None:
    task, found = parse_task(TASK.replace(START, "3f2c9a7"), file=TASK_FILE, task_id="expired-token")
    assert task is None
    assert rendered(found) == [
        f"{TASK_FILE}:5: error: startingCommit: expected a full 40-character commit of the suite's repo, "
        "found `3f2c9a7`, an abbreviated commit of 7 characters. Write the full commit: "
        "`git rev-parse 3f2c9a7` prints it.",
    ]


def test_one_pull_of_a_suite_directory_reports_each_file_with_its_line() -> None:
    tasks = "benchmarks/auth-fixes/tasks"
    files = {
        SUITE_FILE: SEVEN_ARMS.encode(),
        f"{tasks}/both.yaml": (TASK + "successCriteria: Expired tokens are rejected.\n").encode(),
        f"{tasks}/short.yaml": TASK.replace(START, "3f2c9a7").encode(),
        f"{tasks}/good.yaml": TASK.encode(),
    }
    check = validate_suite_dir(files, suite_dir="benchmarks/auth-fixes", aliases={"strong", "fast"})
    assert [(d.file, d.line, d.code) for d in check.diagnostics] == [
        (SUITE_FILE, 18, "arms_count"),
        (f"{tasks}/both.yaml", 11, "task_check_and_criteria"),
        (f"{tasks}/short.yaml", 5, "starting_commit_invalid"),
    ]
    assert check.suite is None and not check.valid
    assert [entry.id for entry in check.tasks] == ["good"]
    assert FIX in TASK
