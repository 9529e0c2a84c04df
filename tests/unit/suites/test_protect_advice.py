"""`try` and `review` warn about weak protection (issue 22, point 8): for each test runner a
check starts, the files at the repo root it reads that `check.protect` leaves to the agent."""

from __future__ import annotations

import pytest

from armbench.suites.protect_advice import path_first_open, unprotected_config
from armbench.suites.validate import parse_task, parse_task_advised, protect_advice

START = "a" * 40


@pytest.mark.parametrize(("run", "runner", "open_"), [
    ("pytest -q tests", "pytest",
     ["conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"]),
    ("cd app && py.test -x", "pytest",
     ["conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"]),
    ("npx vitest run test/a.test.ts", "vitest",
     ["vitest.config.*", "vite.config.*", "vitest.workspace.*", "package.json"]),
    ("npx jest test/a", "jest", ["jest.config.*", "babel.config.*", "package.json"]),
    ("npm test", "npm test", ["package.json"]),
    ("go test ./...", "go test", ["go.mod", "go.work"]),
    ("cargo test --release", "cargo", ["Cargo.toml", ".cargo/config.toml", "build.rs"]),
    ("python3 -m unittest -q tests.test_x", "python -m unittest", ["unittest.py", "unittest/"]),
])
def test_each_runner_names_the_files_it_reads_that_protect_leaves_open(
        run: str, runner: str, open_: list[str]) -> None:
    found = unprotected_config(run, ["tests/**", "test/**"])
    assert [(name, paths) for name, paths, _ in found][0] == (runner, open_)


def test_python_m_pytest_names_pytest_and_the_module_it_would_run_in_its_place() -> None:
    found = unprotected_config("python -m pytest -q", ["tests/**"])
    assert [name for name, _, _ in found] == ["pytest", "python -m pytest"]


def test_protected_files_and_globs_close_them_and_a_partial_glob_does_not() -> None:
    protect = ["tests/**", "conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml",
               "setup.cfg", "tox.ini"]
    assert unprotected_config("pytest", protect) == []
    assert unprotected_config("npx vitest run", ["vitest.config.*", "vite.config.*",
                                                 "vitest.workspace.*", "package.json"]) == []
    assert unprotected_config("npx vitest run", ["vitest.config.ts", "vite.config.*",
                                                 "vitest.workspace.*", "package.json"]) == [
        ("vitest", ["vitest.config.*"], "reads {}")]  # a vitest.config.mjs would be read
    assert unprotected_config("python3 -m unittest", ["unittest.py", "unittest/**"]) == []


def test_pytest_also_reads_a_conftest_in_each_folder_above_a_protected_one() -> None:
    found = unprotected_config("pytest", ["src/pkg/tests/**", "conftest.py", "pytest.ini",
                                          ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini"])
    assert found == [("pytest", ["src/conftest.py", "src/pkg/conftest.py"], "reads {}")]


def test_a_command_that_starts_no_known_runner_gets_no_advice() -> None:
    for run in ("bash test/answer.sh", "make check", "./run-pytest-like-tests.sh", "echo jester"):
        assert unprotected_config(run, ["test/**"]) == []


def task(run: str, protect: str) -> bytes:
    return (f"schemaVersion: v1alpha1\ntitle: t\nprompt: p\nstartingCommit: {START}\n"
            f"check:\n  run: {run}\n  protect: {protect}\n").encode()


def test_the_warning_is_at_the_protect_line_names_the_files_and_the_fix() -> None:
    found = protect_advice(task("pytest -q", "['tests/**']"), file="tasks/t.yaml")
    assert [(d.file, d.line, d.severity, d.code) for d in found] == [
        ("tasks/t.yaml", 7, "warning", "protect_weak")]
    message = found[0].message
    assert message.startswith("check.protect: the check runs pytest, which reads `conftest.py`, ")
    assert "Add them to check.protect" in message and "hidden test in check.add" in message


def test_pull_and_plan_stay_silent_only_try_and_review_ask_for_the_advice() -> None:
    _, found = parse_task(task("pytest -q", "['tests/**']"), file="tasks/t.yaml", task_id="t")
    assert found == []
    assert protect_advice(b"not: a task\n", file="tasks/t.yaml") == []


@pytest.mark.parametrize("text", [
    task("pytest -q", "['tests/**']"), task("pytest -q", "['tests/**', 'conftest.py', 'pytest.ini', "
                                              "'.pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini']"),
    task("pytest -q", "7"), b"not: a task\n", b"title: [\n"])
def test_try_reads_the_task_and_the_advice_from_one_decode_as_from_two(text: bytes) -> None:
    advised = parse_task_advised(text, file="tasks/t.yaml", task_id="t")
    assert advised == (*parse_task(text, file="tasks/t.yaml", task_id="t"),
                       protect_advice(text, file="tasks/t.yaml"))


def test_pytest_puts_the_folder_of_a_hidden_or_protected_test_first_and_a_glob_closes_it() -> None:
    # issue 38 point 2: armbench refuses a shadowing module only at the root; pytest's own
    # test folders stay the agent's unless protect covers new files in them
    assert path_first_open("python -m pytest -q", ["tests/test_a.py"],
                           ["tests/unit/test_b.py"]) == ["tests/unit", "tests"]
    assert path_first_open("pytest", ["tests/**"], ["tests/unit/test_b.py"]) == []
    assert path_first_open("pytest", ["tests/*.py", "tests/*/__init__.py"], ["tests/test_b.py"]) == []
    # a protected file that is no test, or a test at the root, opens nothing
    assert path_first_open("pytest", ["data/golden.json", "test_root.py"]) == []
    # unittest does not put a test's folder first: the root is, and the root is refused
    assert path_first_open("python -m unittest tests.test_a", ["tests/test_a.py"]) == []


def test_pythonpath_before_the_command_puts_its_folders_first() -> None:
    assert path_first_open("PYTHONPATH=src:./lib python -m unittest", ["tests/**"]) == ["src", "lib"]
    assert path_first_open("PYTHONPATH='src' pytest", ["tests/**", "src/**"]) == []
    assert path_first_open("PYTHONPATH=.:$HOME/x:/opt/y python -m unittest", []) == []


def test_the_warning_names_the_folders_and_the_glob_that_closes_them() -> None:
    text = (f"schemaVersion: v1alpha1\ntitle: t\nprompt: p\nstartingCommit: {START}\n"
            "check:\n  run: python -m pytest -q tests\n"
            "  protect: [tests/test_a.py, tests/conftest.py, conftest.py, pytest.ini, .pytest.ini,"
            " pyproject.toml, setup.cfg, tox.ini, pytest.py, 'pytest/**']\n")
    found = protect_advice(text, file="t.yaml")
    assert [d.code for d in found] == ["protect_weak"], found
    assert "`tests/`" in found[0].message and "`tests/**`" in found[0].message
    assert "`tests/difflib.py`" in found[0].message
