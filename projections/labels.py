"""Scorer labels, folded from the run's `LabelRecorded` and `JudgeFailed` events: each trial's
labels for the record, each scorer's labels per arm for the table, and the scoring cost, kept
apart from the prompt's. Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ledger.events import Event, JudgeFailed, LabelRecorded, PlanFrozen
from projections.record_types import RecordLabel, RecordRubric, RecordScorer
from projections.results import TrialView
from projections.usage import trusted_usage

__all__ = ["published_scorers", "rescore", "scorer_rows", "scoring_usage", "trial_labels"]


def published_scorers(plan: PlanFrozen) -> list[RecordScorer]:
    """The record's `scorers[]`: every scorer of the frozen plan as `{name, rubric: {sourceHash}}`
    (a run planned before rubric hashes keeps what it froze), even when no label was given."""
    return [RecordScorer(name=s.name, rubric=None if isinstance(s.rubric, msgspec.UnsetType)
                         else RecordRubric(source_hash=s.rubric.source_hash))
            for s in plan.scorers]


def trial_labels(tv: TrialView) -> list[RecordLabel]:
    """The trial's labels for the record, by scorer: the label, its score and whether it passed
    as judged, or the cause when the judge gave none; and what the judge's tool could not hold
    itself to (`unenforced`: `answer_only:tools` and the like), when anything. Never the judge's
    reason."""
    out = []
    for scorer, v in tv.labels.items():
        if isinstance(v, LabelRecorded):
            label = RecordLabel(scorer=scorer, label=v.label, score=v.score, passed=v.passed)
        else:
            label = RecordLabel(scorer=scorer, label=None, cause=v.cause)
        if v.judge is not None and v.judge.unenforced:
            label = msgspec.structs.replace(label, unenforced=list(v.judge.unenforced))
        out.append(label)
    return out


def scoring_usage(tv: TrialView) -> tuple[dict[str, int], dict[str, float]]:
    """What judging the trial cost (failed judge attempts included), as the judges stated it:
    tokens by component, and cost by unit."""
    tokens: Counter[str] = Counter()
    cost: dict[str, float] = {}
    for v in tv.labels.values():
        usage = trusted_usage(v.usage) if v.usage is not None else None
        if usage is None:
            continue
        tokens.update(usage.tokens)
        if usage.cost is not None:
            cost[usage.cost.unit] = cost.get(usage.cost.unit, 0.0) + usage.cost.amount
    return dict(tokens), cost


def scorer_rows(plan: PlanFrozen, trials: list[TrialView]) -> list[dict[str, Any]]:
    """Per scorer and arm: the trials it judges, how many it labelled, each label's count and the
    mean score of the labelled ones (None with none)."""
    rows = []
    for scorer in plan.scorers:
        name, task = scorer.name, scorer.task
        values = [lb.value for lb in scorer.labels]
        for arm in plan.arms:
            judged = [tv for tv in trials if tv.trial.arm == arm.name
                      and (isinstance(task, msgspec.UnsetType) or tv.trial.task == task)]
            given = [v for tv in judged if isinstance(v := tv.labels.get(name), LabelRecorded)]
            failed = sum(1 for tv in judged if isinstance(tv.labels.get(name), JudgeFailed))
            counts = Counter(v.label for v in given)
            rows.append({
                "scorer": name, "arm": arm.name, "trials": len(judged), "labelled": len(given),
                "failed": failed, "labels": {value: counts[value] for value in values},
                "meanScore": sum(v.score for v in given) / len(given) if given else None,
            })
    return rows


def rescore(events: Sequence[Event], scores: Mapping[str, Mapping[str, float]]
            ) -> tuple[list[Event], list[str]]:
    """The events with each label's score taken from `scores` (scorer -> label -> score, e.g. the
    scorer files pulled since), and a line for each label whose score moved. `passed` stays as
    judged: it is stored, never derived, so a new mapping moves scores, not pass rates."""
    out: list[Event] = []
    moved: Counter[tuple[str, str, float, float]] = Counter()
    for e in events:
        if isinstance(e, LabelRecorded) and e.label in scores.get(e.scorer, {}):
            new = float(scores[e.scorer][e.label])
            if new != e.score:
                moved[(e.scorer, e.label, e.score, new)] += 1
                e = msgspec.structs.replace(e, score=new)
        out.append(e)
    lines = [f'scorer {scorer}: label "{label}" scored {old:g}, now {new:g} ({n} label(s) moved)'
             for (scorer, label, old, new), n in sorted(moved.items())]
    return out, lines
