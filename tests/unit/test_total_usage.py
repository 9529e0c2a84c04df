"""A workflow arm's usage over its turns (`benchmark.agents.turns.total_usage`)."""

from __future__ import annotations

from armbench.benchmark.agents.turns import total_usage
from armbench.ledger.events import Cost, Usage


def _usage(amount: float | None, tokens: int = 10, unit: str = "USD") -> Usage:
    return Usage(tokens={"input": tokens, "output": 1},
                 cost=None if amount is None else Cost(amount=amount, unit=unit))


def test_costs_add_up_as_the_decimals_they_were_stated_in() -> None:
    got = total_usage([_usage(0.01), _usage(0.00377)])
    assert got is not None and got.cost == Cost(amount=0.01377, unit="USD")
    assert 0.01 + 0.00377 != 0.01377  # what a plain sum would have recorded
    assert got.tokens == {"input": 20, "output": 2} and got.verified


def test_a_missing_cost_or_usage_is_never_zero() -> None:
    assert total_usage([_usage(0.5), _usage(None)]).cost is None  # type: ignore[union-attr]
    assert total_usage([_usage(0.5), _usage(0.5, unit="EUR")]).cost is None  # type: ignore[union-attr]
    partial = total_usage([_usage(0.5), None])
    assert partial is not None and partial.cost is None and not partial.verified
    assert partial.note == "1 of 2 turns stated no usage"
    assert total_usage([None, None]) is None
