"""What the dashboard shows beyond one run's table: the runs list, two runs compared, and a
suite's history. Pure folds of the log (`SUMMARY_KINDS`) and of typed records.

Two runs of the same suite pair arm with arm (the same name, tool, model, effort, workflow and
team choice, as the regression gate compares them), trial by trial on task and repetition; the
difference is the later run's pass rate minus the earlier one's. No arm is recommended.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from armbench.ledger.events import Event, PlanFrozen, PlanSubset, RecordPublished, RecordQueued, RunStarted
from armbench.projections.history import arm_identity, compare_records
from armbench.projections.publication import publication_state
from armbench.projections.record_types import Record, present
from armbench.projections.runs import ROW_KINDS, RunRow, fold_run_row
from armbench.projections.stats import NoData
from armbench.projections.stats.newcombe import wilson_limits
from armbench.projections.stats.pairs import paired_difference_by_key
from armbench.suites.subset import subset_words

__all__ = ["SUMMARY_KINDS", "ArmPoint", "HistoryRun", "RunPair", "RunSummary", "history",
           "published_summary", "run_pairs", "summarize"]

SUMMARY_KINDS: tuple[type, ...] = (*ROW_KINDS, RecordQueued, RecordPublished)
"""The event kinds a run's line on the Benchmarks page is folded from."""


class RunSummary(RunRow, kw_only=True):
    """One run's line: the `armbench runs` row and what the Benchmarks page adds to it."""

    team_revision: str | None = None
    arms: list[str] = []
    isolation: str | None = None
    record: str | None = None
    """pending, published, or None (never queued)."""
    source: str = "ledger"
    """ledger (this checkout's), or published (only on the reports branch)."""
    subset: str | None = None
    """The subset the run ran, in words (`--task`, `--arm`, `--repetitions`); None: the whole
    suite."""


def summarize(run: str, events: Sequence[Event]) -> RunSummary:
    """A ledger run's line from its events (`SUMMARY_KINDS` suffice)."""
    row = fold_run_row(run, list(events))
    out = RunSummary(**msgspec.structs.asdict(row) | {"record": publication_state(events)})
    for e in events:
        if isinstance(e, RunStarted):
            out.isolation = e.isolation
        elif isinstance(e, PlanFrozen):
            out.team_revision, out.arms = e.baseline_team_revision, [a.name for a in e.arms]
            out.subset = subset_words(e.subset) if e.subset is not None else None
    return out


def published_summary(record: Record) -> RunSummary:
    """The line of a run known only from its published record."""
    results = [t.result for t in record.trials]
    outcome: str | None = present(record.outcome)
    return RunSummary(run=record.run, suite=record.suite.name, state=outcome or "unknown",
                      started_at=present(record.started_at), planned=len(results),
                      reported=sum(r not in (None, "not_run") for r in results),
                      not_run=results.count("not_run"),
                      team_revision=record.baseline_team_revision,
                      arms=[a.name for a in record.arms], record="published", source="published",
                      subset=_subset_words(record))


def _subset_words(record: Record) -> str | None:
    """A record's subset in words, or None for a whole run."""
    s = record.subset
    if s is None:
        return None
    return subset_words(PlanSubset(tasks=s.tasks, arms=s.arms, repetitions=s.repetitions or 0))


class RunPair(msgspec.Struct, frozen=True, kw_only=True):
    """One arm in two runs of the same suite, compared over the trials both ran."""

    arm: str
    trials: int
    from_passed: int
    to_passed: int
    tasks: list[dict[str, Any]]
    """Each task's paired trials and passes on both runs."""
    difference: dict[str, Any]
    """`to - from` with its interval (the fields of `projections.arm_pairs.PairDifference`),
    or `{"type": "no_data", ...}`."""


def _passed(record: Record, arm: str) -> dict[tuple[str, int], bool]:
    return {(t.task, t.repetition): t.result == "passed" for t in record.trials if t.arm == arm}


def run_pairs(earlier: Record, later: Record) -> list[RunPair]:
    """Each arm both runs share, measured from the earlier run to the later one."""
    before = {arm_identity(a): a.name for a in earlier.arms}
    pairs = []
    for arm in later.arms:
        if arm_identity(arm) not in before:
            continue
        old, new = _passed(earlier, before[arm_identity(arm)]), _passed(later, arm.name)
        shared = [k for k in new if k in old]
        tasks: dict[str, list[int]] = {}
        for k in shared:
            row = tasks.setdefault(k[0], [0, 0, 0])
            row[0], row[1], row[2] = row[0] + 1, row[1] + old[k], row[2] + new[k]
        got = paired_difference_by_key(new, old)
        diff = msgspec.to_builtins(got)
        if not isinstance(got, NoData):
            diff |= {"from_only_passed": got.second_only_passed,
                     "to_only_passed": got.first_only_passed}
        pairs.append(RunPair(arm=arm.name, trials=len(shared),
                             from_passed=sum(old[k] for k in shared),
                             to_passed=sum(new[k] for k in shared),
                             tasks=[{"task": t, "trials": n, "from_passed": f, "to_passed": p}
                                    for t, (n, f, p) in tasks.items()],
                             difference=diff))
    return pairs


class ArmPoint(msgspec.Struct, frozen=True, kw_only=True):
    """One arm's pass rate in one run, with its 95% Wilson interval (None without trials)."""

    arm: str
    planned: int
    passed: int
    pass_rate: float | None
    lower: float | None
    upper: float | None
    flagged: bool = False
    """The regression gate found this arm dropped against the newest comparable earlier run."""


class HistoryRun(msgspec.Struct, frozen=True, kw_only=True):
    """One run of a suite in its history."""

    run: str
    started_at: str | None
    outcome: str | None
    arms: list[ArmPoint]
    against: str | None
    """The run the gate compared it with (None: nothing comparable before it)."""
    subset: str | None = None
    """The subset the run ran, in words; None: the whole suite (a subset is compared only with
    runs of the same subset)."""


def history(records: Iterable[Record], suite: str) -> list[HistoryRun]:
    """The suite's runs, oldest first: each arm's pass rate with its interval, and the arms
    the regression gate flags against the newest comparable run before each."""
    mine = sorted((r for r in records if r.suite.name == suite),
                  key=lambda r: (r.started_at or "", r.run))
    out = []
    for i, record in enumerate(mine):
        verdict = compare_records(record, mine[:i], branch="")
        dropped = {v.arm for v in verdict.arms if v.dropped}
        points = []
        for arm in record.arms:
            results = [t.result for t in record.trials if t.arm == arm.name]
            n, x = len(results), results.count("passed")
            lower, upper = wilson_limits(x, n, 0.95) if n else (None, None)
            points.append(ArmPoint(arm=arm.name, planned=n, passed=x,
                                   pass_rate=x / n if n else None, lower=lower, upper=upper,
                                   flagged=arm.name in dropped))
        out.append(HistoryRun(run=record.run, started_at=present(record.started_at),
                              outcome=present(record.outcome), arms=points,
                              against=verdict.against,
                              subset=_subset_words(record)))
    return out
