"""`workflow report --usage-file F` (and a `serve` report request's `usageFile`): the driver's
usage file is read as a command tool's is and left where it is (it is the driver's file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from armbench.benchmark.drivers import ReportRequest, driver_report
from armbench.engine.protocol import Report
from armbench.ledger.errors import Refusal
from armbench.ledger.events import Cost


def test_the_usage_file_is_read_and_left_in_place(tmp_path: Path) -> None:
    usage = tmp_path / "usage.json"
    usage.write_text('{"tokens": {"input": 7, "output": 2}, "cost": {"amount": 0.5, "unit": "USD"}}')
    got = driver_report(ReportRequest(lease="l1", outcome="failed", usage_file=str(usage),
                                      duration_ms=12))
    assert got.outcome == "failed" and got.duration_ms == 12
    assert got.usage is not None and got.usage.tokens == {"input": 7, "output": 2}
    assert got.usage.cost == Cost(amount=0.5, unit="USD")
    assert usage.exists(), "reading the driver's usage file removed it"
    again = driver_report(ReportRequest(lease="l1", outcome="failed", usage_file=str(usage)))
    assert again.usage == got.usage  # a retried report reads the same file


def test_the_options_go_over_the_launchs_result(tmp_path: Path) -> None:
    launched = Report(outcome="succeeded", exit_code=0, duration_ms=5, message="ok")
    got = driver_report(ReportRequest(lease="l1", result=launched, cause="late"))
    assert (got.outcome, got.exit_code, got.duration_ms, got.cause) == ("succeeded", 0, 5, "late")
    with pytest.raises(Refusal):
        driver_report(ReportRequest(lease="l1"))
    with pytest.raises(Refusal, match="no such file"):
        driver_report(ReportRequest(lease="l1", outcome="error",
                                    usage_file=str(tmp_path / "missing.json")))
