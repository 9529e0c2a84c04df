"""Usage as the tools stated it, over a record's trial entries: tokens, durations and cost."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from armbench.ledger.events import Usage
from armbench.projections.record_types import RecordTrial
from armbench.projections.text import plain

__all__ = ["MAX_COST", "MAX_KEY_LENGTH", "MAX_TEXT", "MAX_TOKENS", "MAX_TOKEN_KEYS", "MAX_UNIT_LENGTH",
           "TOKEN_ORDER", "StatedUsage", "stated_usage", "text_problem", "token_components",
           "trusted_usage", "usage_problem"]

TOKEN_ORDER = ("input", "cache_read", "cache_write", "output", "reasoning")

MAX_TOKEN_KEYS = 32
"""The most token components one trial's usage may name."""
MAX_KEY_LENGTH = 64
"""The longest token component name, in characters."""
MAX_TOKENS = 10**12
"""The largest count of one token component in one trial (a count is a whole number from 0)."""
MAX_COST = 10**6
"""The largest cost of one trial, in its unit (a cost is a finite number from 0)."""
MAX_UNIT_LENGTH = 16
"""The longest cost unit, in characters."""
MAX_TEXT = 256
"""The longest model name, session id or version a tool may report, in characters."""


def _shown(text: str, limit: int = 40) -> str:
    """A value from a tool, quoted in a note: one safe line, cut short."""
    s = plain(text[:limit + 1])
    return f"`{s[:limit]}…`" if len(s) > limit else f"`{s}`"


def _out_of_range(value: object, bound: int) -> str | None:
    """How a stated number misses 0..bound (never printing a huge one), or None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"a {type(value).__name__}"
    if isinstance(value, float) and not math.isfinite(value):
        return "not a finite number"
    if value < 0:
        return "below 0"
    return f"over 1e{len(str(bound)) - 1}" if value > bound else None


def usage_problem(tokens: Mapping[str, object], cost: tuple[object, str] | None) -> str | None:
    """Why a tool's stated tokens and cost (amount, unit) cannot be taken as stated, or None.

    The one rule for stated usage: at most MAX_TOKEN_KEYS components, each named in 1 to
    MAX_KEY_LENGTH characters and a whole count from 0 to MAX_TOKENS; a cost a finite number from
    0 to MAX_COST with a unit of 1 to MAX_UNIT_LENGTH characters. The edge applies it where a
    tool's usage is read, and the projections again, so an older log never renders nonsense.
    """
    if len(tokens) > MAX_TOKEN_KEYS:
        return f"it names {len(tokens)} token components, over the {MAX_TOKEN_KEYS} armbench takes"
    for key, value in tokens.items():
        if not 0 < len(key) <= MAX_KEY_LENGTH:
            return f"the token component name {_shown(key)} is not 1 to {MAX_KEY_LENGTH} characters"
        if isinstance(value, float) or (why := _out_of_range(value, MAX_TOKENS)):
            why = "not a whole number" if isinstance(value, float) else why
            return f"the token count {_shown(key)} is {why} (a count is a whole number from 0 to 1e12)"
    if cost is not None:
        amount, unit = cost
        if why := _out_of_range(amount, MAX_COST):
            return f"the cost is {why} (a cost is a number from 0 to 1e6)"
        if not 0 < len(unit) <= MAX_UNIT_LENGTH:
            return f"the cost unit {_shown(unit)} is not 1 to {MAX_UNIT_LENGTH} characters"
    return None


def text_problem(field: str, value: str | None) -> str | None:
    """Why a model name, session id or version a tool reported is not kept, or None."""
    if value is not None and len(value) > MAX_TEXT:
        return f"its {field} is over {MAX_TEXT} characters ({_shown(value)})"
    return None


def trusted_usage(usage: Usage) -> Usage:
    """The usage as the projections count it: out-of-range values (`usage_problem`, in a log
    written before armbench checked them) make it unverified, with no tokens and no cost."""
    problem = usage_problem(usage.tokens,
                            (usage.cost.amount, usage.cost.unit) if usage.cost else None)
    if problem is None:
        return usage
    return Usage(verified=False, note=f"The stated usage is out of range: {problem}.")


def token_components(counts: Iterable[Mapping[str, int | float]]) -> list[str]:
    """The token components a median sums: the known ones in order (reasoning is inside output),
    then any others by name."""
    seen: set[str] = set()
    for tokens in counts:
        seen.update(tokens)
    ordered = [c for c in TOKEN_ORDER if c in seen and c != "reasoning"]
    return ordered + sorted(seen - set(TOKEN_ORDER))


class StatedUsage(msgspec.Struct, frozen=True, kw_only=True):
    """Medians over the trials that stated a value, each with how many did, and the stated cost.

    The one declaration of these six figures: a row that shows them (the table's `UsageRow`, a
    pair's `PairArm`) subclasses this. Being keyword-only, they come after the row's own
    positional fields in its `__struct_fields__` and so in its JSON (msgspec's order), which
    keeps `outputs.table` as it was when each row declared them itself."""

    median_tokens: float | None
    """Median of the summed token components, or None when no trial stated tokens."""
    tokens_n: int
    """Trials that stated tokens."""
    median_duration_ms: float | None
    """Median prompt duration, or None when none was measured."""
    duration_n: int
    """Trials with a duration."""
    cost: dict[str, float]
    """Total stated cost by unit; empty when no trial stated one (never estimated)."""
    cost_n: int
    """Trials that stated a cost."""


def stated_usage(entries: Sequence[RecordTrial], components: Sequence[str]) -> StatedUsage:
    """Usage over record trial entries (`tokens`, `durationMs`, `cost: {amount, unit}`); the
    cost also counts each earlier attempt's (`retried`), spent whatever came of it."""
    tokens: list[int | float] = []
    durations: list[int] = []
    cost: dict[str, float] = defaultdict(float)
    cost_n = 0
    zeros = [0] * len(components)
    for e in entries:
        counts = e.tokens
        if counts:
            tokens.append(sum(map(counts.get, components, zeros)))
        if e.duration_ms is not None:
            durations.append(e.duration_ms)
        stated = e.cost
        if stated:
            cost[stated.unit] += stated.amount
            cost_n += 1
        for attempt in e.retried or ():
            if spent := attempt.cost:
                cost[spent.unit] += spent.amount
    return StatedUsage(
        median_tokens=statistics.median(tokens) if tokens else None, tokens_n=len(tokens),
        median_duration_ms=statistics.median(durations) if durations else None,
        duration_n=len(durations), cost=dict(cost), cost_n=cost_n,
    )
