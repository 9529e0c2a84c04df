"""Criterion 20: where a benchmark cannot pin the team, plan and run refuse `team_ref_blocked`.

Single-repo mode (the team repo is the project checkout itself, as `armbench init --team .` or a
path to its root makes it) and a team served over plain HTTP, through the installed command,
before any run exists. `init` runs in process; plan and run run side by side, as the installed
command (each costs seconds of imports).
"""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from typer.testing import CliRunner

from armbench.benchmark.team.planning import SINGLE_REPO_MESSAGE
from armbench.cli.main import app
from e2e.conftest import Result, base_env, make_project, run_armbench

pytestmark = pytest.mark.e2e

HTTP_TEAM = "http://member:s3cret@example.invalid/team.git"


def runs_in(checkout: Path) -> int:
    """How many events the checkout's ledger holds (0 without a ledger)."""
    ledger = checkout / ".armbench" / "ledger.sqlite"
    if not ledger.exists():
        return 0
    with sqlite3.connect(ledger) as db:
        return db.execute("SELECT count(*) FROM events").fetchone()[0]


def test_plan_and_run_refuse_a_team_that_is_the_project_itself_or_served_over_http(tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    env = base_env(tmp_path / "home", tmp_path / "out")
    own, by_path, http = (make_project(tmp_path / name).root for name in ("own", "by-path", "http"))
    for checkout, team in ((own, "."), (by_path, str(by_path)), (http, HTTP_TEAM)):
        monkeypatch.chdir(checkout)
        assert CliRunner().invoke(app, ["init", "--team", team]).exit_code == 0
    calls = [(own, ["plan", "calc"]), (own, ["run", "calc", "--sandbox"]), (by_path, ["plan", "calc"]),
             (http, ["run", "calc", "--sandbox"])]
    with ThreadPoolExecutor(len(calls)) as pool:
        results: list[Result] = list(pool.map(lambda call: run_armbench(call[1], call[0], env), calls))
    for (checkout, args), result in zip(calls, results, strict=True):
        assert result.code == 2, (args, str(result))
        assert result.error["code"] == "team_ref_blocked", (args, str(result))
        assert runs_in(checkout) == 0 and not (checkout / ".armbench" / "runs").exists()
    assert [r.error["message"] for r in results[:3]] == [SINGLE_REPO_MESSAGE] * 3
    assert results[3].error["message"].startswith(
        "The team repo http://***@example.invalid/team.git is served over plain HTTP")
    assert "s3cret" not in results[3].stdout + results[3].stderr
