"""Usage as the tools stated it, over a record's trial entries: tokens, durations and cost."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

__all__ = ["TOKEN_ORDER", "StatedUsage", "stated_usage", "token_components"]

TOKEN_ORDER = ("input", "cache_read", "cache_write", "output", "reasoning")


def token_components(counts: Iterable[Mapping[str, int]]) -> list[str]:
    """The token components a median sums: the known ones in order (reasoning is inside output),
    then any others by name."""
    seen: set[str] = set()
    for tokens in counts:
        seen.update(tokens)
    ordered = [c for c in TOKEN_ORDER if c in seen and c != "reasoning"]
    return ordered + sorted(seen - set(TOKEN_ORDER))


class StatedUsage(msgspec.Struct, frozen=True, kw_only=True):
    """Medians over the trials that stated a value, each with how many did, and the stated cost."""

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


def stated_usage(entries: Sequence[Mapping[str, Any]], components: Sequence[str]) -> StatedUsage:
    """Usage over record trial entries (`tokens`, `durationMs`, `cost: {amount, unit}`)."""
    tokens: list[int] = []
    durations: list[int] = []
    cost: dict[str, float] = defaultdict(float)
    cost_n = 0
    zeros = [0] * len(components)
    for e in entries:
        counts = e.get("tokens")
        if counts:
            tokens.append(sum(map(counts.get, components, zeros)))
        duration = e.get("durationMs")
        if duration is not None:
            durations.append(duration)
        stated = e.get("cost")
        if stated:
            cost[stated["unit"]] += stated["amount"]
            cost_n += 1
    return StatedUsage(
        median_tokens=statistics.median(tokens) if tokens else None, tokens_n=len(tokens),
        median_duration_ms=statistics.median(durations) if durations else None,
        duration_n=len(durations), cost=dict(cost), cost_n=cost_n,
    )
