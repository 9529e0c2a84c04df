"""Know when to stop: after each repetition round, whether each pair's interval already excludes
zero, or cannot any more at the planned size whatever the rest of the trials do. Pure.

Descriptive only. It never stops a run and never changes a table: a run stopped at the first
interval that excludes zero would report differences that are not there far more often than its
95% says (the statistics guide, "Stopping early"), so the table is decided at the planned size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import msgspec

from armbench.ledger.events import PlanFrozen
from armbench.projections.arm_keys import arm_pairs
from armbench.projections.record import arm_entries
from armbench.projections.stats import NoData
from armbench.projections.stats.pairs import paired_difference_by_key

__all__ = ["PairSeparation", "round_notes", "separations"]

Key = tuple[str, int]
"""(task, repetition)."""
Verdict = Literal["separated", "cannot", "open"]


class PairSeparation(msgspec.Struct, frozen=True, kw_only=True):
    """One pair of arms after some rounds: its interval so far and what the rest can change."""

    key: str
    """The key the two arms differ in (model, tool, team, ...)."""
    measured_from: str
    measured_to: str
    pairs: int
    """Paired trials so far."""
    estimate: float
    lower: float
    upper: float
    verdict: Verdict
    """`separated`: the 95% interval already excludes zero; `cannot`: it cannot exclude zero at
    the planned size even if every remaining pair went one way; `open`: neither."""


def _excludes_zero(first: Mapping[Key, bool], second: Mapping[Key, bool]) -> bool:
    got = paired_difference_by_key(first, second)
    return not isinstance(got, NoData) and (got.lower > 0 or got.upper < 0)


def separations(plan: PlanFrozen, passed: Mapping[tuple[str, str, int], bool],
                rounds: int) -> list[PairSeparation]:
    """Each pair of the plan's arms over the trials of repetitions below `rounds` that ended
    (`passed`: (task, arm, repetition) -> whether it passed)."""
    planned = [(t.id, r) for r in range(plan.repetitions) for t in plan.tasks]
    found = []
    for source, target, key in arm_pairs(arm_entries(plan)):
        def known(arm: str) -> dict[Key, bool]:
            return {(task, rep): ok for (task, name, rep), ok in passed.items()
                    if name == arm and rep < rounds}

        before, after = known(source.name), known(target.name)
        got = paired_difference_by_key(after, before)
        if isinstance(got, NoData):
            continue
        verdict: Verdict = "open"
        if got.lower > 0 or got.upper < 0:
            verdict = "separated"
        else:
            # the most the rest could do: every pair not yet known goes one way, or the other
            up = [({k: after.get(k, True) for k in planned}, {k: before.get(k, False) for k in planned}),
                  ({k: after.get(k, False) for k in planned}, {k: before.get(k, True) for k in planned})]
            if not any(_excludes_zero(a, b) for a, b in up):
                verdict = "cannot"
        found.append(PairSeparation(key=key, measured_from=source.name, measured_to=target.name,
                                    pairs=got.n_pairs, estimate=got.estimate, lower=got.lower,
                                    upper=got.upper, verdict=verdict))
    return found


def _points(x: float) -> str:
    return f"{round(100 * x):+d}"


_SAYS = {"separated": "the interval already excludes zero",
         "cannot": "the interval cannot exclude zero any more at the planned size, whatever the "
                   "remaining trials do",
         "open": "not separated yet; the remaining trials can still separate it"}


def round_notes(plan: PlanFrozen, passed: Mapping[tuple[str, str, int], bool],
                rounds: int) -> list[str]:
    """The progress lines after `rounds` repetition rounds ended: one per pair of arms."""
    return [f"After repetition {rounds} of {plan.repetitions}, {s.key}: {s.measured_to} against "
            f"{s.measured_from}, {s.pairs} paired trials: {_points(s.estimate)} points (95% "
            f"interval {_points(s.lower)} to {_points(s.upper)}): {_SAYS[s.verdict]}. "
            "Descriptive only: the run goes on to its planned size."
            for s in separations(plan, passed, rounds)]
