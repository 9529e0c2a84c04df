"""validate_suite_dir: one suite directory as pull validates and caches it."""

from __future__ import annotations

from suite_texts import START, SUITE, TASK

from armbench.suites.validate import validate_suite_dir

DIR = "benchmarks/auth-fixes"


def test_valid_tasks_come_in_file_name_order() -> None:
    files = {f"{DIR}/suite.yaml": SUITE.encode(), f"{DIR}/tasks/b.yaml": TASK.encode(),
             f"{DIR}/tasks/a-1.yaml": TASK.encode(), f"{DIR}/tasks/A.yaml": TASK,
             "benchmarks/other/suite.yaml": b"\x00", f"{DIR}/tasks/deeper/c.yaml": b"not read"}
    check = validate_suite_dir(files, suite_dir=DIR + "/", aliases={"strong", "fast"})
    assert check.valid and check.diagnostics == ()
    assert [(e.id, e.file) for e in check.tasks] == [
        ("A", f"{DIR}/tasks/A.yaml"), ("a-1", f"{DIR}/tasks/a-1.yaml"), ("b", f"{DIR}/tasks/b.yaml")]
    assert check.suite is not None and check.suite.name == "auth-fixes"


def test_an_invalid_task_is_left_out_and_reported() -> None:
    files = {f"{DIR}/suite.yaml": SUITE.encode(), f"{DIR}/tasks/good.yaml": TASK.encode(),
             f"{DIR}/tasks/bad.yaml": TASK.replace(START, "abc").encode()}
    check = validate_suite_dir(files, suite_dir=DIR)
    assert check.valid and [e.id for e in check.tasks] == ["good"]
    assert [(d.file, d.code) for d in check.diagnostics] == [
        (f"{DIR}/tasks/bad.yaml", "starting_commit_invalid")]


def test_a_suite_with_no_valid_task_is_not_cached() -> None:
    files = {f"{DIR}/suite.yaml": SUITE.encode(), f"{DIR}/tasks/bad.yaml": b"- not a mapping\n"}
    check = validate_suite_dir(files, suite_dir=DIR)
    assert not check.valid and check.suite is not None and check.tasks == ()
    assert [(d.file, d.line, d.code) for d in check.diagnostics] == [
        (f"{DIR}/tasks/bad.yaml", 1, "yaml_not_mapping"), (f"{DIR}/suite.yaml", None, "suite_no_valid_task")]
    assert check.diagnostics[1].message == (
        f"The suite has no valid task under {DIR}/tasks/, so it is not cached and its last valid version is "
        "kept. Fix the task files reported here, or add one.")


def test_a_directory_without_suite_yaml() -> None:
    check = validate_suite_dir({f"{DIR}/tasks/a.yaml": TASK.encode()}, suite_dir=DIR)
    assert not check.valid and [e.id for e in check.tasks] == ["a"]
    assert [(d.file, d.line, d.code, d.message) for d in check.diagnostics] == [
        (f"{DIR}/suite.yaml", None, "suite_missing", f"The suite directory {DIR}/ has no suite.yaml. Add "
                                                     "one, "
         "or move the tasks to a suite's directory.")]


def test_the_suite_is_named_like_its_directory() -> None:
    check = validate_suite_dir({f"{DIR}/suite.yaml": SUITE.replace("name: auth-fixes", "name: auth"),
                                f"{DIR}/tasks/a.yaml": TASK}, suite_dir=DIR)
    assert not check.valid and check.suite is None
    assert [(d.line, d.code, d.message) for d in check.diagnostics] == [
        (2, "suite_name_mismatch", "name: expected `auth-fixes`, the suite's directory name, found `auth`. "
         "Rename the suite or its directory so they match.")]


def test_a_namespaced_suite_directory_uses_its_last_folder() -> None:
    namespaced = "benchmarks/auth/auth-fixes"
    check = validate_suite_dir({f"{namespaced}/suite.yaml": SUITE, f"{namespaced}/tasks/a.yaml": TASK},
                               suite_dir=namespaced)
    assert check.valid


def test_files_that_do_not_end_in_yaml_are_reported_and_skipped() -> None:
    check = validate_suite_dir({f"{DIR}/suite.yaml": SUITE, f"{DIR}/tasks/a.yaml": TASK,
                                f"{DIR}/tasks/b.yml": TASK}, suite_dir=DIR)
    assert check.valid and [e.id for e in check.tasks] == ["a"]
    assert [(d.file, d.severity, d.code) for d in check.diagnostics] == [
        (f"{DIR}/tasks/b.yml", "warning", "task_file_ignored")]
