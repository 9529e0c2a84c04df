"""A runner's summary read for how many tests ran: none is what makes an exit 0 decide nothing."""

from __future__ import annotations

import pytest

from armbench.suites.runsummary import no_test_ran

NONE_RAN = [
    ("pytest", "ssss\n4 skipped in 0.02s", "4 skipped in 0.02s"),
    ("pytest", "===== 4 skipped, 1 warning in 0.02s =====", "===== 4 skipped, 1 warning in 0.02s ====="),
    ("pytest", "\x1b[33m===== no tests ran in 0.01s =====\x1b[0m", "===== no tests ran in 0.01s ====="),
    ("pytest", "===== 2 deselected in 0.01s =====", "===== 2 deselected in 0.01s ====="),
    ("unittest", "\n----\nRan 0 tests in 0.000s\n\nOK\n", "Ran 0 tests in 0.000s OK"),
    ("unittest", "sss\n----\nRan 3 tests in 0.001s\n\nOK (skipped=3)\n",
     "Ran 3 tests in 0.001s OK (skipped=3)"),
    ("vitest", " Test Files  1 skipped (1)\n      Tests  3 skipped (3)\n", "Tests  3 skipped (3)"),
    ("vitest", "No test files found, exiting with code 1", "No test files found, exiting with code 1"),
    ("jest", "Tests:       3 skipped, 3 total\nTime: 0.5 s", "Tests:       3 skipped, 3 total"),
    ("jest", "No tests found, exiting with code 0", "No tests found, exiting with code 0"),
    ("cargo test", "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 3 ignored; 0 measured; "
     "0 filtered out; finished in 0.00s\n",
     "test result: ok. 0 passed; 0 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.00s"),
    ("go test", "ok  \texample.com/m\t0.002s [no tests to run]\n?   \texample.com/m/x\t[no test files]\n",
     "?   \texample.com/m/x\t[no test files]"),
]

SOME_RAN = [
    "....\n4 passed in 0.02s",
    "F.\n===== 1 failed, 1 passed, 2 skipped in 0.1s =====",
    "x\n1 xfailed, 3 skipped in 0.1s",
    "Ran 3 tests in 0.000s\n\nOK (skipped=2)",
    "Ran 3 tests in 0.000s\n\nFAILED (failures=1, skipped=2)",
    "      Tests  1 failed | 2 passed (3)",
    "Tests:       1 failed, 2 passed, 3 total",
    "test result: ok. 0 passed; 0 failed; 0 ignored\ntest result: ok. 2 passed; 0 failed; 0 ignored;",
    "ok  \texample.com/m\t0.002s\nok  \texample.com/m/x\t0.001s [no tests to run]",
    "ok  \texample.com/m\t(cached)",
]

UNKNOWN = ["", "hello\nall good\n", "OK", "exit 0", "the tests passed in 3s"]


@pytest.mark.parametrize(("runner", "output", "said"), NONE_RAN)
def test_a_summary_that_counts_no_test_that_ran_is_named_with_its_line(runner: str, output: str,
                                                                        said: str) -> None:
    found = no_test_ran(output)
    assert found is not None, output
    assert (found.runner, found.said) == (runner, said)


@pytest.mark.parametrize("output", SOME_RAN)
def test_a_summary_where_some_test_ran_is_not_named(output: str) -> None:
    assert no_test_ran(output) is None


@pytest.mark.parametrize("output", UNKNOWN)
def test_output_without_a_runners_summary_decides_nothing(output: str) -> None:
    assert no_test_ran(output) is None


def test_the_last_summary_counts_when_a_runner_printed_more_than_one() -> None:
    assert no_test_ran("3 passed in 0.1s\n...\n2 skipped in 0.1s") is not None
    assert no_test_ran("2 skipped in 0.1s\n...\n3 passed in 0.1s") is None
