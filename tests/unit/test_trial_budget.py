"""A trial's budget (`trial.budget`): frozen on each prompt step, passed to Claude Code as
`--max-budget-usd` (the one limit of its kind the pinned CLIs have), and listed in `unenforced`
by every tool that cannot hold it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from armbench.benchmark.agents.claude import ClaudeCode
from armbench.benchmark.agents.codex import Codex
from armbench.benchmark.agents.gemini import Gemini
from armbench.benchmark.agents.opencode import OpenCode
from armbench.edge.sandbox import Sandbox
from armbench.engine.protocol import Lease
from armbench.ledger.events import Cost

AT = datetime(2026, 1, 1, tzinfo=UTC)


def make(adapter: type, tmp_path: Path) -> Any:
    return adapter("tool", tmp_path, Sandbox(isolation="declared"))


def lease(**caps: object) -> Lease:
    return Lease(run="r", step="s", lease="l", kind="prompt", tool="t", prompt="p",
                 expires_at=AT, **caps)  # type: ignore[arg-type]


def test_claude_code_gets_its_cost_cap_in_usd_and_lists_the_token_cap_unenforced(
        tmp_path: Path) -> None:
    claude = make(ClaudeCode, tmp_path)
    capped = lease(max_cost=Cost(amount=0.00001, unit="USD"), max_tokens=5000)
    args = claude.argv(capped)
    assert args[args.index("--max-budget-usd") + 1] == "0.00001"
    assert claude.unenforced(capped) == ["budget_tokens"]


def test_a_cost_cap_in_another_unit_is_unenforced_and_not_passed(tmp_path: Path) -> None:
    claude = make(ClaudeCode, tmp_path)
    capped = lease(max_cost=Cost(amount=2.0, unit="EUR"))
    assert "--max-budget-usd" not in claude.argv(capped)
    assert claude.unenforced(capped) == ["budget_cost"]
    assert claude.unenforced(lease()) == []


@pytest.mark.parametrize("adapter", [Codex, OpenCode, Gemini], ids=lambda a: a.name)
def test_a_cli_without_a_spend_limit_lists_both_caps_unenforced(adapter: type,
                                                                tmp_path: Path) -> None:
    tool = make(adapter, tmp_path)
    capped = lease(max_cost=Cost(amount=0.5, unit="USD"), max_tokens=5000)
    assert tool.unenforced(capped)[-2:] == ["budget_tokens", "budget_cost"]
    assert "budget_tokens" not in tool.unenforced(lease())
