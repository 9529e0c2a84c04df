"""A run id the ledger does not hold is refused one way everywhere: `ledger.errors.UnknownRun`,
the only place the code `unknown_run` is written."""

from __future__ import annotations

from pathlib import Path

from armbench.ledger.errors import Refusal, UnknownRun

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("ledger", "aggregates", "engine", "projections", "suites", "edge", "benchmark", "cli")


def test_unknown_run_is_written_in_the_error_root_only() -> None:
    places = sorted(str(path.relative_to(ROOT)) for package in PRODUCT
                    for path in (ROOT / package).rglob("*.py")
                    if '"unknown_run"' in path.read_text())
    assert places == ["ledger/errors.py"]


def test_an_unknown_run_is_a_refusal_naming_the_run_the_ledger_and_the_fix() -> None:
    error = UnknownRun("r9", ledger="The ledger /x/ledger.db", fix="armbench runs lists them")
    assert isinstance(error, Refusal) and error.exit_code == 2
    assert (error.code, error.run) == ("unknown_run", "r9")
    assert error.message == "The ledger /x/ledger.db has no run 'r9' (armbench runs lists them)."
