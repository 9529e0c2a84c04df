"""Loaded by armbench processes the kill tests start (PYTHONPATH=tests/ledger/shim): the report
step calls the test hook (`report`) after writing the record, so a test can kill it right there."""

import os
import subprocess
import sys

if os.environ.get("LEDGERTEST_HOOKS"):
    import armbench.benchmark.records.reporting as reporting  # the host imports it when its report step runs

    _write_report = reporting.write_report

    def _write_report_then_hook(*args, **kwargs):  # type: ignore[no-untyped-def]
        got = _write_report(*args, **kwargs)
        hook = os.path.join(os.environ["LEDGERTEST_HOOKS"], "hook.py")
        subprocess.run([sys.executable, hook, "report", "written"], check=True)
        return got

    reporting.write_report = _write_report_then_hook
