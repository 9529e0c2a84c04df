"""Real Claude Code against a model that answers its first call 529 (overloaded) once: armbench
takes it for the provider's failure, tries the trial again from scratch, and it passes."""

from __future__ import annotations

import sqlite3

import pytest

from agents.conftest import Runs

pytestmark = pytest.mark.agents
PLAN = "retry-claude"


def test_a_529_once_is_retried_and_the_trial_passes(runs: Runs) -> None:
    run = runs.get("retry-claude")
    assert run.code == 0, run.stderr
    trial = run.trial("fix")
    assert trial["result"] == "passed"
    assert trial["attempts"] == 2 and "transient" not in trial
    assert [(r["attempt"], r["cause"]) for r in trial["retried"]] == [(1, "overloaded")]


def test_the_first_attempt_is_an_event_with_claude_codes_own_words(runs: Runs) -> None:
    run = runs.get("retry-claude")
    with sqlite3.connect(runs.world("retry-claude").checkout / ".armbench" / "ledger.sqlite") as db:
        tags = [t for (t,) in db.execute("SELECT topic FROM events ORDER BY rowid")]
        failed = [bytes(s).decode() for (s,) in db.execute(
            "SELECT state FROM events WHERE topic = 'AttemptFailed'")]
    assert tags.count("AttemptFailed") == 1 and run.code == 0
    assert "API Error: 529" in failed[0] and '"exit_code":1' in failed[0]
