"""One test per task file rule, `check.add` included, pinning its code, line and message."""

from __future__ import annotations

import pytest
from suite_texts import FIX, START, TASK, TASK_FILE, codes, rendered, replace_line

from armbench.suites.model import AddFrom
from armbench.suites.validate import parse_task

F = TASK_FILE
PROTECT = "  protect: ['test/**', 'vitest.config.ts', 'package.json', 'package-lock.json']"
ADD = "  add: [test/auth/refresh.test.ts]"


def problems(text: str, task_id: str = "expired-token") -> list[str]:
    return rendered(parse_task(text, file=F, task_id=task_id)[1])


def with_add(entries: str) -> str:
    return replace_line(TASK, ADD, f"  add: {entries}")


def test_the_spec_example_is_valid() -> None:
    task, found = parse_task(TASK, file=F, task_id="expired-token")
    assert found == [] and task is not None and task.check is not None and task.source is not None
    assert task.starting_commit == START and task.source.fix == FIX and task.source.session_id == "4b1e"
    assert task.check.add == ("test/auth/refresh.test.ts",)
    assert task.check.timeout_seconds == 600


@pytest.mark.parametrize("commit", ["1234567890123456789012345678901234567890",
                                    "1234567890123456789012345678901234567e10",
                                    "0000000000000000000000000000000000000000"])
def test_a_commit_that_yaml_reads_as_a_number_stays_text(commit: str) -> None:
    task, found = parse_task(TASK.replace(START, commit), file=F, task_id="t")
    assert found == [] and task is not None and task.starting_commit == commit


def test_a_starting_commit_in_capitals() -> None:
    assert problems(TASK.replace(START, START.upper())) == [
        f"{F}:5: error: startingCommit: expected a full 40-character commit of the suite's repo, found "
        f"`{START.upper()}` in capitals. Write it in lowercase.",
    ]


def test_a_starting_commit_that_is_no_commit() -> None:
    assert problems(TASK.replace(START, "main")) == [
        f"{F}:5: error: startingCommit: expected a full 40-character commit of the suite's repo, found "
        "`main`, "
        "which is not a commit. Write the 40 hex characters `git rev-parse` prints.",
    ]


def test_title_and_prompt_are_not_empty() -> None:
    text = TASK.replace("title: Reject expired refresh tokens", "title: ''")
    assert problems(text) == [
        f"{F}:2: error: title: expected text, found an empty text. Write the task's title.",
    ]
    assert problems(TASK.replace("title: Reject expired refresh tokens", "title:")) == [
        f"{F}:2: error: title: expected text, found nothing. Change it to text.",
    ]


def test_a_task_without_check_has_success_criteria() -> None:
    text = TASK.split("check:")[0]
    assert problems(text) == [
        f"{F}:1: error: The task has neither check nor successCriteria; a task is judged by exactly one. Add "
        "`check: {run, protect}`, or `successCriteria:` text for a correctness judge.",
    ]
    task, found = parse_task(text + "successCriteria: Expired tokens are rejected.\n", file=F, task_id="t")
    assert found == [] and task is not None and task.success_criteria == "Expired tokens are rejected."


def test_empty_success_criteria() -> None:
    assert problems(TASK.split("check:")[0] + "successCriteria: ' '\n") == [
        f"{F}:6: error: successCriteria: expected text a correctness judge reads, found an empty text. Write "
        "what a correct result does.",
    ]


def test_check_run_is_not_empty() -> None:
    assert problems(TASK.replace("  run: npx vitest run test/auth/refresh.test.ts", "  run: ''")) == [
        f"{F}:7: error: check.run: expected the shell command that decides a trial (exit 0 passes), found an "
        "empty text. Write the command, such as `npx vitest run`.",
    ]


def test_protect_paths_are_relative_to_the_repo() -> None:
    assert problems(replace_line(TASK, PROTECT, "  protect: ['test/**', /etc/passwd, ../x]")) == [
        f"{F}:8: error: check.protect[1]: expected a path relative to the repo root, found `/etc/passwd`, "
        "which "
        "starts with `/`. Write it relative to the repo root, as git lists it.",
        f"{F}:8: error: check.protect[2]: expected a path inside the repo, found `../x`, which leaves it "
        "with "
        "`..`. Write it relative to the repo root, as git lists it.",
    ]


def test_protect_as_a_single_string() -> None:
    _, found = parse_task(replace_line(TASK, PROTECT, "  protect: test/**"), file=F, task_id="t")
    assert codes(found) == ["protect_empty"]
    assert rendered(found) == [
        f"{F}:8: error: check.protect: expected a non-empty list of paths relative to the repo, found "
        "`test/**`. Write `['test/**']` or similar.",
    ]


def test_check_timeout_is_an_armbench_extension() -> None:
    task, found = parse_task(TASK.replace(ADD, ADD + "\n  timeout: 90s"), file=F, task_id="t")
    assert found == [] and task is not None and task.check is not None
    assert task.check.timeout_seconds == 90
    assert problems(TASK.replace(ADD, ADD + "\n  timeout: 10")) == [
        f"{F}:10: error: check.timeout: expected a duration such as 90s, 8m, 6h or 1h30m, found `10` with no "
        "unit; write `10s` or `10m`.",
    ]


def test_add_refuses_a_glob() -> None:
    assert problems(with_add("['test/auth/*.test.ts']")) == [
        f"{F}:9: error: check.add[0]: expected one file's path, found the glob `test/auth/*.test.ts`. List "
        "each file the check needs on its own line.",
    ]


def test_add_refuses_a_path_no_protect_entry_matches() -> None:
    assert problems(with_add("[src/auth/refresh.ts]")) == [
        f"{F}:9: error: check.add[0]: `src/auth/refresh.ts` is matched by no check.protect entry, so the "
        "agent "
        "could supply it. Add it, or a folder or glob that holds it, to check.protect.",
    ]


def test_add_refuses_a_string_entry_without_source_fix() -> None:
    text = TASK.replace(f", fix: {FIX}", "")
    assert problems(text) == [
        f"{F}:9: error: check.add[0]: `test/auth/refresh.test.ts` is read from source.fix, and the task has "
        "no "
        "source.fix. Add `source: {fix: <full commit>}`, or write the file from the suite directory with "
        "`{from: <file>, to: test/auth/refresh.test.ts}`.",
    ]


def test_add_refuses_a_path_inside_another_listed_path() -> None:
    assert problems(with_add("[test/auth, test/auth/refresh.test.ts]")) == [
        f"{F}:9: error: check.add[1]: `test/auth/refresh.test.ts` and `test/auth` (check.add[0]) are a path "
        "inside another listed path. List each file once, by its own path.",
    ]


def test_add_refuses_a_path_listed_twice() -> None:
    assert problems(with_add("[test/a.ts, test/b.ts, test/a.ts]")) == [
        f"{F}:9: error: check.add[2]: `test/a.ts` is already listed at check.add[0]. Remove one of them.",
    ]


def test_add_refuses_paths_outside_the_repo() -> None:
    assert codes(parse_task(with_add("[/test/a.ts, test/../../a.ts]"), file=F, task_id="t")[1]) == [
        "add_path_invalid", "add_path_invalid"]


def test_add_from_the_suite_directory_needs_no_fix() -> None:
    text = with_add("[{from: fixtures/refresh.test.ts, to: test/auth/refresh.test.ts}]").replace(
        f", fix: {FIX}", "")
    task, found = parse_task(text, file=F, task_id="t")
    assert found == [] and task is not None and task.check is not None
    assert task.check.add == (AddFrom(from_="fixtures/refresh.test.ts", to="test/auth/refresh.test.ts"),)


def test_add_from_is_checked_like_a_path() -> None:
    text = with_add("[{from: '../x.ts', to: src/x.ts}, {from: 'f/*.ts', to: test/a.ts}]")
    assert problems(text) == [
        f"{F}:9: error: check.add[0].from: expected a path inside the suite directory, found `../x.ts`, "
        "which "
        "leaves it with `..`. Write the file's path relative to the suite directory, such as "
        "`fixtures/startup.test.ts`.",
        f"{F}:9: error: check.add[0].to: `src/x.ts` is matched by no check.protect entry, so the agent could "
        "supply it. Add it, or a folder or glob that holds it, to check.protect.",
        f"{F}:9: error: check.add[1].from: expected one file's path, found the glob `f/*.ts`. Write one "
        "`{from, to}` entry per file.",
    ]


def test_add_from_refuses_unknown_keys() -> None:
    assert codes(parse_task(with_add("[{from: a, to: test/a, mode: x}]"), file=F, task_id="t")[1]) == [
        "unknown_field"]


def test_source_fix_is_a_full_commit() -> None:
    assert problems(TASK.replace(FIX, "9a1d4e7")) == [
        f"{F}:10: error: source.fix: expected the full 40-character commit that fixed the task, found "
        "`9a1d4e7`, an abbreviated commit of 7 characters. Write the full commit: `git rev-parse 9a1d4e7` "
        "prints it.",
    ]


def test_source_fix_is_not_the_starting_commit() -> None:
    assert problems(TASK.replace(FIX, START)) == [
        f"{F}:10: error: source.fix: is the startingCommit itself, so it cannot show the check passing after "
        "a fix. Write the commit that fixed the task, or remove `fix`.",
    ]


def test_the_task_id_is_a_plain_name() -> None:
    assert problems(TASK, task_id="expired.token") == [
        f"{F}:1: error: The task id is the file name without `.yaml`: expected a plain name of letters, "
        "digits, `-` and `_` (up to 64, starting with a letter or digit), found `expired.token`. Rename the "
        "file.",
    ]


def test_yaml_11_words_stay_text() -> None:
    text = TASK.replace("title: Reject expired refresh tokens", "title: no").replace(
        "  Refresh tokens past their expiry are still accepted. Fix it.\n", "  on\n").replace(
        "prompt: |", "prompt:")
    task, found = parse_task(text, file=F, task_id="t")
    assert found == [] and task is not None and (task.title, task.prompt) == ("no", "on")
