"""Flags of a suspicious pass (`projections.flags`) from a check's recorded facts, and the facts
from a change's bytes (`suites.suspicion`): each flag on its own evidence, none on an honest
change, none on a trial that did not pass."""

from __future__ import annotations

from armbench.ledger.events import ChangeFacts, CheckRan
from armbench.projections.flags import flags_of
from armbench.suites.suspicion import change_facts, is_test_file

FIX = {"calc.py": (b"def add(a, b):\n    return a - b\n", b"def add(a, b):\n    return a + b\n")}


def _check(change: ChangeFacts | None, restored: list[str] | None = None) -> CheckRan:
    return CheckRan(step="s.check", task="t", kind="trial", result="passed", graded="change",
                    change=change, restored=restored or [])


def _names(change: ChangeFacts | None, restored: list[str] | None = None,
           result: str = "passed") -> list[str]:
    return [f.name for f in flags_of(_check(change, restored), result)]


def facts(files: dict[str, tuple[bytes | None, bytes | None]], **kw: object) -> ChangeFacts:
    args = {"removed": [], "added": [], "protect": ["tests/**"], "fix_paths": ["calc.py"], **kw}
    return change_facts(files, **args)  # type: ignore[arg-type]


def test_an_honest_fix_has_no_flag_and_a_failed_trial_is_never_flagged() -> None:
    assert _names(facts(FIX)) == []
    assert _names(facts({}), result="failed") == []


def test_an_empty_or_cosmetic_change_is_flagged() -> None:
    assert _names(facts({})) == ["empty_change"]
    cosmetic = {"calc.py": (b"x = 1  # one\n", b"x   =   1\n# another comment\n")}
    assert _names(facts(cosmetic)) == ["cosmetic_change"]


def test_a_protected_path_put_back_a_shadowing_module_and_skip_markers_are_flagged() -> None:
    assert _names(facts(FIX), restored=["tests/test_add.py"]) == ["touched_protected"]
    shadow = {**FIX, "lib/json.py": (None, b"x = 1\n")}
    assert _names(facts(shadow, added=["lib/json.py"])) == ["shadows_module"]
    skip = {**FIX, "more/test_x.py": (b"import unittest\n", b"import unittest\n@unittest.skip('x')\n")}
    found = flags_of(_check(facts(skip)), "passed")
    assert [(f.name, f.evidence) for f in found] == [
        ("skips_tests", ["more/test_x.py:2: @unittest.skip('x')"])]
    inside = {**FIX, "tests/test_x.py": (b"", b"@pytest.mark.skip\n")}
    assert _names(facts(inside)) == []  # protect puts it back: what the check runs is not skipped


def test_deleted_tests_and_a_change_off_the_fix_are_flagged() -> None:
    assert _names(facts(FIX, removed=["more/test_y.py"])) == ["deleted_tests"]
    elsewhere = {"other.py": (b"a = 1\n", b"a = 2\n")}
    assert _names(facts(elsewhere)) == ["off_the_fix"]
    assert _names(facts(elsewhere, fix_paths=None)) == []  # no source.fix: nothing to compare


def test_test_file_names() -> None:
    assert all(map(is_test_file, ["test_x.py", "a/x_test.go", "src/a.test.ts", "tests/h.py", "conftest.py"]))
    assert not any(map(is_test_file, ["calc.py", "src/testing_utils.go", "latest.py"]))


def test_a_file_that_was_not_read_is_never_called_cosmetic() -> None:
    cosmetic = {"calc.py": (b"x = 1\n", b"x  =  1\n")}
    assert _names(facts(cosmetic, written=["calc.py", "big.bin"])) == []
