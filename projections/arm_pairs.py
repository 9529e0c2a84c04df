"""The pairs of a run: arms that differ in exactly one key, compared trial by trial.

Read from a record's `arms[]` and `trials[]` (team-asset-arms.md, "Comparing arms"): two arms
are paired when they differ in exactly one of team, tool, model and workflow; their trials pair
on task and repetition; a trial that is error, unscored or not_run counts as not passed and
stays paired. The difference is `to - from`: for team measured from none, then without, then a
ref, then pulled; otherwise from the arm listed first. No arm is recommended.

Which arms pair, and which way, is `projections.arm_keys`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from armbench.projections.arm_keys import PairKey, arm_pairs
from armbench.projections.record_types import RecordArm, RecordTrial
from armbench.projections.stats import NoData, PairedDifference
from armbench.projections.stats.pairs import paired_difference_by_key
from armbench.projections.usage import StatedUsage, stated_usage, token_components

__all__ = ["ArmPair", "PairArm", "PairDifference", "PairTask", "derive_pairs"]

Entry = RecordTrial


class PairArm(StatedUsage, frozen=True):
    """One arm of a pair, over the paired trials only: in the JSON, these three fields
    (positional, so first), then `StatedUsage`'s six over the paired trials (tokens are the
    table's components)."""

    arm: str
    """The arm's name."""
    passed: int
    """Paired trials that passed."""
    pass_rate: float | None
    """passed / paired trials, or None with no paired trial."""


class PairTask(msgspec.Struct, frozen=True, kw_only=True):
    """One task's pass rate on both arms of a pair."""

    task: str
    """The task id."""
    trials: int
    """Paired trials of the task (its repetitions both arms have)."""
    from_passed: int
    """Of them, passed by the arm measured from."""
    to_passed: int
    """Of them, passed by the arm measured to."""
    from_pass_rate: float
    """from_passed / trials."""
    to_pass_rate: float
    """to_passed / trials."""


class PairDifference(msgspec.Struct, frozen=True, kw_only=True, tag="pair_difference"):
    """The to arm's pass rate minus the from arm's over the paired trials, with its interval."""

    estimate: float
    """to - from pass rate."""
    lower: float
    """Lower limit of the interval for to - from."""
    upper: float
    """Upper limit of the interval for to - from."""
    confidence: float
    """Two-sided confidence level (0.95)."""
    deff: float
    """Design effect of repetitions within tasks; the table was divided by max(1, deff)."""
    effective_pairs: float
    """Paired trials / max(1, deff): the sample size the interval was computed with."""
    n_tasks: int
    """Tasks with paired trials."""
    both_passed: int
    """Paired trials both arms passed."""
    from_only_passed: int
    """Paired trials only the from arm passed."""
    to_only_passed: int
    """Paired trials only the to arm passed."""
    neither_passed: int
    """Paired trials neither arm passed."""
    mcnemar_p: float | None
    """Exact McNemar p-value on the per-trial table (ignores clustering: descriptive)."""
    small_sample: bool
    """True when the effective number of pairs is small."""
    note: str | None = None
    """A short warning for readers, or None."""


class ArmPair(msgspec.Struct, frozen=True, kw_only=True):
    """Two arms that differ in one key, and how the second differs from the first."""

    key: PairKey
    """The one key the arms differ in."""
    measured_from: PairArm = msgspec.field(name="from")
    """The arm the difference is measured from."""
    measured_to: PairArm = msgspec.field(name="to")
    """The arm the difference is measured to."""
    trials: int
    """Paired trials: (task, repetition) both arms have."""
    tasks: list[PairTask]
    """Each task's pass rate on both arms, in plan order."""
    difference: PairDifference | NoData
    """to - from pass rate with its 95% interval (Newcombe, design-effect adjusted with
    repetitions), or NoData "no paired trials": never a number without trials."""


def derive_pairs(arms: Sequence[RecordArm | Mapping[str, Any]],
                 trials: Sequence[RecordTrial | Mapping[str, Any]], *,
                 components: Sequence[str] | None = None,
                 usage: Mapping[str, StatedUsage] | None = None) -> list[ArmPair]:
    """Every pair of arms that differ in exactly one key, in arm order.

    The arms and trials are a record's (`Record.arms`, `Record.trials`), or their plain JSON
    data, typed here once. `usage` is each arm's stated usage over all its trials with these
    `components`, when the caller has it already (the results table does).
    """
    arms, trials = _typed(arms, RecordArm), _typed(trials, RecordTrial)
    by_arm: dict[str, dict[tuple[str, int], Entry]] = defaultdict(dict)
    for t in trials:
        by_arm[t.arm].setdefault((t.task, t.repetition), t)
    if components is None:
        components = token_components(t.tokens for t in trials if t.tokens)
    sides: dict[str, _Arm] = {}

    def side(name: str) -> _Arm:
        if name not in sides:
            sides[name] = _Arm(name, by_arm[name], components, (usage or {}).get(name))
        return sides[name]

    return [_pair(key, side(source.name), side(target.name))
            for source, target, key in arm_pairs(arms)]


T = TypeVar("T", RecordArm, RecordTrial)


def _typed(items: Sequence[T | Mapping[str, Any]], kind: type[T]) -> list[T]:
    """Record entries as their Structs (plain data, such as a record's JSON, converted)."""
    return [i if isinstance(i, kind) else msgspec.convert(i, kind) for i in items]


class _Arm:
    """One arm's trials by (task, repetition), and what every pair it is in reads of them,
    worked out once."""

    def __init__(self, name: str, trials: dict[tuple[str, int], Entry],
                 components: Sequence[str], usage: StatedUsage | None) -> None:
        self.name, self.trials, self.components = name, trials, components
        self.passed = {k: e.result == "passed" for k, e in trials.items()}
        self._whole: PairArm | None = None
        self._usage = usage

    def over(self, shared: list[tuple[str, int]]) -> PairArm:
        """The arm over the shared trials (all of them, the usual case, is worked out once)."""
        if len(shared) == len(self.trials):
            if self._whole is None:
                self._whole = self._figures(shared, self._usage)
            return self._whole
        return self._figures(shared, None)

    def _figures(self, shared: list[tuple[str, int]], usage: StatedUsage | None) -> PairArm:
        passed = sum(1 for k in shared if self.passed[k])
        if usage is None:
            usage = stated_usage([self.trials[k] for k in shared], self.components)
        return PairArm(arm=self.name, passed=passed,
                       pass_rate=passed / len(shared) if shared else None,
                       **msgspec.structs.asdict(usage))


def _pair(key: PairKey, source: _Arm, target: _Arm) -> ArmPair:
    shared = [k for k in source.trials if k in target.trials]
    return ArmPair(
        key=key, measured_from=source.over(shared), measured_to=target.over(shared),
        trials=len(shared), tasks=_tasks(shared, source.passed, target.passed),
        difference=_difference(paired_difference_by_key(target.passed, source.passed)),
    )


def _difference(got: PairedDifference | NoData) -> PairDifference | NoData:
    if isinstance(got, NoData):
        return got
    return PairDifference(
        estimate=got.estimate, lower=got.lower, upper=got.upper, confidence=got.confidence,
        deff=got.deff, effective_pairs=got.effective_pairs, n_tasks=got.n_tasks,
        both_passed=got.both_passed, from_only_passed=got.second_only_passed,
        to_only_passed=got.first_only_passed, neither_passed=got.neither_passed,
        mcnemar_p=got.mcnemar_p, small_sample=got.small_sample, note=got.note)


def _tasks(shared: list[tuple[str, int]], source: dict[tuple[str, int], bool],
           target: dict[tuple[str, int], bool]) -> list[PairTask]:
    counts: dict[str, list[int]] = {}
    for key in shared:
        row = counts.setdefault(key[0], [0, 0, 0])
        row[0] += 1
        row[1] += source[key]
        row[2] += target[key]
    return [PairTask(task=task, trials=n, from_passed=f, to_passed=t, from_pass_rate=f / n,
                     to_pass_rate=t / n) for task, (n, f, t) in counts.items()]
