"""The one rule for stated usage (`projections.usage.usage_problem`), at its bounds, and the
projections applying it to a log written before armbench checked: an old log never renders
nonsense."""

from __future__ import annotations

import msgspec
import pytest
from compare.builders import arm, plan, record_of, run_events, task
from e2e.tables import assert_well_formed

from armbench.ledger.events import Agent, Cost, Event, StepReported, Usage
from armbench.projections.results import fold_run
from armbench.projections.table import build_table, render_markdown
from armbench.projections.usage import (
    MAX_COST,
    MAX_KEY_LENGTH,
    MAX_TEXT,
    MAX_TOKEN_KEYS,
    MAX_TOKENS,
    text_problem,
    usage_problem,
)


@pytest.mark.parametrize(("tokens", "cost"), [
    ({}, None),
    ({"input": 0, "output": MAX_TOKENS}, (0, "USD")),
    ({f"k{i}": 1 for i in range(MAX_TOKEN_KEYS)}, (MAX_COST, "USD")),
    ({"k" * MAX_KEY_LENGTH: 1}, (0.25, "x" * 16)),
])
def test_usage_within_the_bounds_is_taken(tokens: dict[str, int], cost: tuple[float, str] | None) -> None:
    assert usage_problem(tokens, cost) is None


@pytest.mark.parametrize(("tokens", "cost", "why"), [
    ({"input": -1}, None, "the token count `input` is below 0"),
    ({"input": -9223372036854775808}, None, "the token count `input` is below 0"),
    ({"input": MAX_TOKENS + 1}, None, "the token count `input` is over 1e12"),
    ({"input": 10 ** 5000}, None, "the token count `input` is over 1e12"),  # never printed whole
    ({"input": 1.5}, None, "the token count `input` is not a whole number"),
    ({"input": True}, None, "the token count `input` is a bool"),
    ({f"k{i}": 1 for i in range(MAX_TOKEN_KEYS + 1)}, None, "it names 33 token components, over the 32"),
    ({"k" * (MAX_KEY_LENGTH + 1): 1}, None, "is not 1 to 64 characters"),
    ({"": 1}, None, "the token component name `` is not 1 to 64 characters"),
    ({}, (float("nan"), "USD"), "the cost is not a finite number"),
    ({}, (float("-inf"), "USD"), "the cost is not a finite number"),
    ({}, (-0.01, "USD"), "the cost is below 0"),
    ({}, (MAX_COST * 1.5, "USD"), "the cost is over 1e6"),
    ({}, (1, ""), "the cost unit `` is not 1 to 16 characters"),
])
def test_usage_out_of_bounds_says_which_value_and_why(tokens: dict[str, object],
                                                      cost: tuple[float, str] | None, why: str) -> None:
    got = usage_problem(tokens, cost) or ""
    assert got.startswith(why) or why.startswith("is not") and why in got, got


def test_a_key_in_a_note_is_one_escaped_line_cut_short() -> None:
    got = usage_problem({"\x1b[31m\n" + "k" * 60: -1}, None) or ""
    assert "\x1b" not in got and "\n" not in got and "\\x1b[31m k" in got and "…`" in got


def test_a_reported_name_over_the_limit_is_not_kept() -> None:
    assert text_problem("model", "m" * MAX_TEXT) is None
    assert (text_problem("model", "m" * (MAX_TEXT + 1)) or "").startswith("its model is over 256 characters")


def old_log(usage: Usage) -> list[Event]:
    """A run of two trials on one arm, as a log written before armbench checked usage: each
    report names the model it ran, and the first holds `usage` as it was stored."""
    the_plan = plan([arm("a")], [task("t")], 2)
    events = run_events(the_plan, lambda *_: "passed", usage=lambda _t: {"cost": 0.5})
    agent = Agent(model_reported="m-1")
    reports = [i for i, e in enumerate(events) if isinstance(e, StepReported)]
    for i in reports:
        events[i] = msgspec.structs.replace(events[i], agent=agent)  # type: ignore[type-var]
    events[reports[0]] = msgspec.structs.replace(events[reports[0]], usage=usage)  # type: ignore[type-var]
    return events


@pytest.mark.parametrize("usage", [
    Usage(tokens={"input": -9223372036854775808, "output": 10}),
    Usage(tokens={"input": 10}, cost=Cost(amount=-1e308, unit="USD")),
    Usage(tokens={f"k{i}": 1 for i in range(5000)}),
], ids=["negative tokens", "absurd cost", "5000 keys"])
def test_an_old_log_with_usage_out_of_bounds_projects_it_as_not_verified(usage: Usage) -> None:
    events = old_log(usage)
    record = record_of(events)
    first, second = record["trials"]
    assert first["usageVerified"] is False and "tokens" not in first and "cost" not in first
    assert second["usageVerified"] is True and second["cost"] == {"amount": 0.5, "unit": "USD"}
    table = build_table(fold_run(events))
    assert table.token_components == ["input", "output"]
    assert (table.arms[0].not_verified, table.usage[0].tokens_n, table.usage[0].cost) == (1, 1, {"USD": 0.5})
    text = render_markdown(table)
    assert_well_formed(text)
    assert "-9223372036854775808" not in text and "e+308" not in text
