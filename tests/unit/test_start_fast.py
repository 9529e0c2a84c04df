"""Every `armbench` command starts without the heavy libraries only `export` and the statistics
use: pandas and numpy (through sqlite-utils) and statsmodels are imported where they are used."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pandas", "numpy", "statsmodels", "sqlite_utils")


def imported_by(statement: str) -> list[str]:
    """Which of the heavy modules a fresh interpreter has loaded after running `statement`."""
    probe = f"import json, sys\n{statement}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_the_cli_starts_without_pandas_numpy_statsmodels_or_sqlite_utils() -> None:
    assert imported_by("import cli.main") == []


@pytest.mark.slow
def test_the_probe_sees_a_heavy_import_when_there_is_one() -> None:
    assert imported_by("import sqlite_utils") == ["pandas", "numpy", "sqlite_utils"]


def test_psycopg_is_loaded_only_for_a_postgresql_ledger() -> None:
    sqlite = ("import tempfile, pathlib\nfrom ledger.store import EventStore\n"
              "EventStore(pathlib.Path(tempfile.mkdtemp()) / 'l.sqlite').close()")
    probe = (f"import json, sys\nimport cli.main\n{sqlite}\n"
             "print(json.dumps('psycopg' in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True)
    assert json.loads(done.stdout) is False
    loaded = subprocess.run([sys.executable, "-c", "import sys\nimport ledger.rows_postgres\n"
                             "print('psycopg' in sys.modules)"], capture_output=True, text=True,
                            check=True)
    assert loaded.stdout.strip() == "True"  # the probe can see it
