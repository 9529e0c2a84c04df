"""The drafting rules (pure): which files are tests, the check each kind of project gets, what
protect covers, and a prompt that never quotes a line the fix added."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from armbench.suites.draftfile import TaskDraft, render_task
from armbench.suites.drafting import NotDraftable, ProjectFacts, draft_check, is_source_path, is_test_path
from armbench.suites.draftprompt import CLOSING, draft_prompt, draft_title, issue_refs, slug, telling_lines
from armbench.suites.protect_advice import unprotected_config
from armbench.suites.validate import parse_task


def facts(files: dict[str, bytes], *, pytest_importable: bool = True) -> ProjectFacts:
    return ProjectFacts(files=frozenset(files), read=files, pytest_importable=pytest_importable)


@pytest.mark.parametrize(("path", "test", "source"), [
    ("tests/test_add.py", True, False), ("calc/add_test.py", True, False),
    ("src/sum.test.ts", True, False), ("src/__tests__/sum.js", True, False),
    ("pkg/calc/calc_test.go", True, False), ("tests/cli.rs", True, False),
    ("calc/ops.py", False, True), ("src/sum.ts", False, True), ("README.md", False, False),
    ("contest.py", False, True), ("latest/x.py", False, True),
])
def test_tests_and_source_are_told_apart(path: str, test: bool, source: bool) -> None:
    assert (is_test_path(path), is_source_path(path)) == (test, source)


def test_python_runs_pytest_when_the_sandbox_can_import_it_else_unittest() -> None:
    files = {"tests/test_add.py": b"import unittest\n", "tests/helpers.py": b"", "calc/ops.py": b""}
    with_pytest = draft_check(["tests/test_add.py", "tests/helpers.py"], ["calc/ops.py"], facts(files))
    assert with_pytest.run == "python3 -m pytest -q -p no:cacheprovider tests/test_add.py"
    assert with_pytest.protect == ("tests/**", "conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml",
                                   "setup.cfg", "tox.ini", "pytest.py", "pytest/**")
    assert unprotected_config(with_pytest.run, with_pytest.protect) == []  # no protect_weak on a draft
    assert with_pytest.add == ("tests/test_add.py", "tests/helpers.py")
    plain = draft_check(["tests/test_add.py"], [], facts(files, pytest_importable=False))
    assert (plain.run, plain.runner) == ("python3 -m unittest -q tests.test_add", "unittest")
    assert plain.protect == ("tests/**", "unittest.py", "unittest/**")


def test_a_pytest_module_without_pytest_in_the_sandbox_is_refused() -> None:
    files = {"tests/test_add.py": b"import pytest\n"}
    with pytest.raises(NotDraftable, match="import pytest, and python3 in armbench's sandbox"):
        draft_check(["tests/test_add.py"], [], facts(files, pytest_importable=False))


@pytest.mark.parametrize(("manifest", "run"), [
    ({"devDependencies": {"vitest": "2"}}, "npx vitest run src/sum.test.ts"),
    ({"dependencies": {"jest": "29"}}, "npx jest src/sum.test.ts"),
    ({"scripts": {"test": "vitest run"}}, "npx vitest run src/sum.test.ts"),
])
def test_node_uses_the_runner_package_json_names(manifest: dict[str, object], run: str) -> None:
    files = {"package.json": json.dumps(manifest).encode(), "src/sum.test.ts": b"", "package-lock.json": b""}
    check = draft_check(["src/sum.test.ts"], ["package.json", "package-lock.json"], facts(files))
    assert check.run == run
    assert check.protect[:3] == ("src/*.test.ts", "package.json", "package-lock.json")
    assert unprotected_config(check.run, check.protect) == []  # the runner's configs too


def test_node_without_a_known_runner_is_refused() -> None:
    files = {"package.json": b'{"devDependencies": {"mocha": "10"}}', "test/a.test.js": b""}
    with pytest.raises(NotDraftable, match="names neither vitest nor jest"):
        draft_check(["test/a.test.js"], [], facts(files))


def test_go_runs_the_changed_test_functions_per_package() -> None:
    files = {"go.mod": b"module x\n", "pkg/calc/calc_test.go": b"package calc\n\n"
             b"func TestAdd(t *testing.T) {}\nfunc TestSub(t *testing.T) {}\nfunc helper() {}\n",
             "root_test.go": b"package x\nfunc TestRoot(t *testing.T) {}\n"}
    check = draft_check(["pkg/calc/calc_test.go", "root_test.go"], ["go.mod"], facts(files))
    assert check.run == "go test . -run '^(TestRoot)$' && go test ./pkg/calc -run '^(TestAdd|TestSub)$'"
    assert check.protect == ("pkg/calc/*_test.go", "*_test.go", "go.mod", "go.work")


def test_rust_runs_the_changed_integration_tests() -> None:
    files = {"Cargo.toml": b"", "tests/cli.rs": b""}
    assert draft_check(["tests/cli.rs"], [], facts(files)).run == "cargo test --test cli"


def test_a_project_of_no_known_kind_is_refused_naming_what_to_write() -> None:
    with pytest.raises(NotDraftable) as caught:
        draft_check(["test/answer.sh"], [], facts({"test/answer.sh": b""}))
    assert "cannot tell how this project runs test/answer.sh" in caught.value.message
    assert "Write the task by hand: check.run" in caught.value.message


def test_titles_ids_and_issue_references() -> None:
    assert draft_title("fix(auth)!: reject expired tokens, fixes #3", "F") == "reject expired tokens"
    assert draft_title("Fix #12: crash on empty input", "F") == "crash on empty input"
    assert draft_title("fix: (#4)", "fallback") == "fallback"
    assert issue_refs("fix: x (#4)", "Closes #9, see #4") == ["4", "9"]
    assert slug("Reject expired refresh tokens!", "c") == "reject-expired-refresh-tokens"
    assert slug("___", "commit-abc1234") == "commit-abc1234"
    assert slug("../../etc/passwd; rm -rf ~", "c") == "etc-passwd-rm-rf"  # a file name, never a path
    assert len(slug("word " * 40, "c")) <= 48


def test_the_prompt_is_the_message_as_a_request_without_code_or_trailers() -> None:
    title, prompt = draft_prompt(
        "fix: add() subtracted", "Users saw -1.\n\n    return a + b\n```\nx = 1\n```\n"
        "+ added_line()\nCo-authored-by: x <x@y>\n", ["return a + b"], issues=["Issue: 2 + 3 is -1"],
        fallback="F")
    assert title == "add() subtracted"
    assert prompt.startswith("add() subtracted.\n\nUsers saw -1.\n\n")
    assert prompt.endswith(f"Users saw -1.\n\nIssue: 2 + 3 is -1\n\n{CLOSING}\n")
    for leaked in ("return a + b", "x = 1", "added_line", "Co-authored-by"):
        assert leaked not in prompt


line = st.text(alphabet=st.characters(codec="ascii", categories=("L", "N", "P", "Zs")), max_size=30)


@given(subject=line, body=st.lists(line, max_size=8), added=st.lists(line, max_size=6),
       issue=st.lists(line, max_size=4))
def test_no_telling_added_line_ever_reaches_the_prompt(subject: str, body: list[str], added: list[str],
                                                       issue: list[str]) -> None:
    _, prompt = draft_prompt(subject, "\n".join(body), added, issues=["\n".join(issue)],
                             fallback="Fix what commit abc1234 fixed")
    ours = f"Fix what commit abc1234 fixed.\n\n{CLOSING}"  # armbench's own words
    for leak in telling_lines(added):
        assert leak not in prompt or leak in ours, (leak, prompt)


def test_a_rendered_draft_is_a_valid_task_file() -> None:
    draft = TaskDraft(task_id="add", title="add() subtracted", prompt="add() subtracted.\n\nFix it.\n",
                      starting_commit="a" * 40, run="python3 -m unittest -q tests.test_add",
                      protect=("tests/**",), add=("tests/test_add.py",), fix="b" * 40,
                      origin="commit " + "b" * 40)
    task, found = parse_task(render_task(draft).encode(), file="add.yaml", task_id="add")
    assert task is not None and not [d for d in found if d.severity == "error"], found
    assert task.prompt == draft.prompt and task.source is not None and task.source.fix == "b" * 40
    assert task.check is not None and task.check.add == ("tests/test_add.py",)


def test_a_runner_file_the_fix_changes_is_never_protected() -> None:
    """protect puts a file back as the starting commit has it: the fix's own pyproject.toml
    would lose its change, and the draft would fail at its own fix."""
    files = {"tests/test_add.py": b"", "pyproject.toml": b"[tool.pytest]\n", "calc/ops.py": b""}
    check = draft_check(["tests/test_add.py"], ["calc/ops.py"], facts(files))  # the fix changes pyproject
    assert "pyproject.toml" not in check.protect and "conftest.py" in check.protect
