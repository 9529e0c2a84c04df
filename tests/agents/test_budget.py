"""A trial's budget for real, against the mock: Claude Code holds `trial.budget.cost` through
its own `--max-budget-usd`: each mock reply costs it about 0.0046 USD, so after the first it is
over the 0.001 cap and stops before running that reply's tool call (Claude Code 2.1.197 weighs
the budget before it acts). The trial is `stopped by a limit` with cause budget, and its check
still runs on what it left, the bug unfixed. It lists the token cap unenforced (it has no such
limit). Codex has neither limit: it works the whole script, fixes the bug, and lists both
unenforced."""

from __future__ import annotations

import pytest

from agents.conftest import Runs

pytestmark = pytest.mark.agents

PLAN = "budget"


def test_claude_code_stops_at_the_trials_cost_cap_and_its_check_still_runs(runs: Runs) -> None:
    run = runs.get("budget")
    trial = run.trial("spend", "claude")
    assert trial["limit"] == "budget"
    assert trial["result"] == "failed" and trial["checkExit"] == 1  # checked on what it left
    assert trial["unenforced"] == ["budget_tokens"]
    assert trial["cost"]["unit"] == "USD" and trial["cost"]["amount"] > 0.001


def test_codex_has_no_spend_limit_and_lists_both_caps_unenforced(runs: Runs) -> None:
    trial = runs.get("budget").trial("spend", "codex")
    assert "limit" not in trial and trial["result"] == "passed"
    assert trial["unenforced"] == ["budget_tokens", "budget_cost"] and trial["deviation"] is True
