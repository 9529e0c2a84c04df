"""The lines `armbench run` prints after its tables, so the first screen answers its question:
each pair of arms in one sentence, a trial of each result ready to paste into `explain`, and what
to run next. Pure: a fold of what the record already holds, never stored."""

from __future__ import annotations

from collections.abc import Sequence

from armbench.projections.arm_pairs import ArmPair, PairDifference
from armbench.projections.record_types import RecordTrial
from armbench.projections.text import plain

__all__ = ["RESULT_ORDER", "closing_lines", "pair_line"]

RESULT_ORDER = ("passed", "failed", "error", "unscored", "not_run")
"""The results a trial to paste is shown for, in this order."""


def _points(x: float) -> str:
    """Percentage points, whole, with a real minus sign for a drop."""
    value = round(100 * x)
    return f"\u2212{-value}" if value < 0 else f"{value}"


def pair_line(pair: ArmPair) -> str:
    """`hasty vs careful (model): −67 points, 95% interval −90 to −22: careful is better on these
    tasks.`: the second arm's pass rate minus the first's, over their paired trials."""
    to, base = plain(pair.measured_to.arm), plain(pair.measured_from.arm)
    head = f"{to} vs {base} ({pair.key})"
    d = pair.difference
    if not isinstance(d, PairDifference):
        return f"{head}: no paired trials, so no difference can be told."
    if d.lower > 0:
        verdict = f"{to} is better on these tasks"
    elif d.upper < 0:
        verdict = f"{base} is better on these tasks"
    else:
        verdict = "no difference shown on these tasks (the interval includes 0)"
    return (f"{head}: {_points(d.estimate)} points, {round(100 * d.confidence)}% interval "
            f"{_points(d.lower)} to {_points(d.upper)}: {verdict}.")


def closing_lines(run: str, pairs: Sequence[ArmPair], trials: Sequence[RecordTrial]) -> list[str]:
    """The pairs (none for a suite of one arm), one trial id of each result to paste, and the
    next commands, each a line."""
    lines = [pair_line(p) for p in pairs]
    shown: dict[str, RecordTrial] = {}
    for t in trials:
        if t.result in RESULT_ORDER and t.result not in shown:
            shown[t.result] = t
    for result in RESULT_ORDER:
        if result in shown:
            t = shown[result]
            lines.append(f"A {result.replace('_', ' ')} trial: armbench explain {run} "
                         f"r{t.repetition}.{plain(t.task)}.{plain(t.arm)}")
    lines.append(f"Next: armbench dashboard --open to browse this run, or armbench show {run} "
                 "<trial> --check for a trial's check output.")
    return lines
