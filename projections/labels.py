"""Scorer labels, folded from the run's `LabelRecorded` and `JudgeFailed` events: each trial's
labels for the record, each scorer's labels per arm for the table, and the scoring cost, kept
apart from the prompt's. Pure."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from armbench.ledger.events import Event, JudgeFailed, LabelRecorded, PlanFrozen, PlannedScorer
from armbench.projections.record_types import RecordJudge, RecordLabel, RecordRubric, RecordScorer
from armbench.projections.results import TrialView
from armbench.projections.usage import trusted_usage

__all__ = ["asks_again", "published_scorers", "rejudged", "rescore", "scorer_rows", "scoring_usage",
           "trial_labels"]


def published_scorers(plan: PlanFrozen) -> list[RecordScorer]:
    """The record's `scorers[]`: every scorer of the frozen plan as `{name, rubric: {sourceHash}}`
    (a run planned before rubric hashes keeps what it froze), even when no label was given."""
    return [RecordScorer(name=s.name, rubric=None if isinstance(s.rubric, msgspec.UnsetType)
                         else RecordRubric(source_hash=s.rubric.source_hash))
            for s in plan.scorers]


def trial_labels(tv: TrialView) -> list[RecordLabel]:
    """The trial's labels for the record, by scorer: the label, its score and whether it passed
    as judged, or the cause when the judge gave none; and what the judge's tool could not hold
    itself to (`unenforced`: `answer_only:tools` and the like), when anything; what judged
    (`judge`: tool, version, model) and the rubric's hash. Never the judge's reason."""
    out = []
    for scorer, v in tv.labels.items():
        if isinstance(v, LabelRecorded):
            label = RecordLabel(scorer=scorer, label=v.label, score=v.score, passed=v.passed)
        else:
            label = RecordLabel(scorer=scorer, label=None, cause=v.cause)
        if v.judge is not None and v.judge.unenforced:
            label = msgspec.structs.replace(label, unenforced=list(v.judge.unenforced))
        if v.judge is not None:
            label = msgspec.structs.replace(label, judge=RecordJudge(
                tool=v.judge.tool, version=v.judge.tool_version,
                model=v.judge.model_reported or v.judge.model_requested))
        if v.rubric_hash:
            label = msgspec.structs.replace(label, rubric_hash=v.rubric_hash)
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


def asks_again(frozen: PlannedScorer, today: PlannedScorer) -> bool:
    """Whether today's scorer asks its judge something else than the frozen one did: its rubric
    or its label values changed. New scores or a new passing score alone are only a new mapping
    (`rescore`): the labels as judged stand."""
    return (frozen.text != today.text
            or [lb.value for lb in frozen.labels] != [lb.value for lb in today.labels])


def rejudged(events: Sequence[Event], scorers: Mapping[str, PlannedScorer]
             ) -> tuple[list[Event], list[str]]:
    """The events as if the plan had frozen `scorers` (today's version of each scorer that
    `asks_again`): the plan's entry replaced, each trial's own verdict for it replaced by its last
    rescored verdict under the new rubric's hash (none: the trial has no verdict for it), and
    the lines saying, per scorer, how many trials were judged again and whose verdict moved."""
    if not scorers:
        return list(events), []
    own: dict[tuple[str, str], LabelRecorded | JudgeFailed] = {}
    again: dict[tuple[str, str], LabelRecorded | JudgeFailed] = {}
    out: list[Event] = []
    for e in events:
        if isinstance(e, PlanFrozen):
            e = msgspec.structs.replace(e, scorers=[scorers.get(s.name, s) for s in e.scorers])
        elif (isinstance(e, LabelRecorded | JudgeFailed) and e.scorer in scorers
              and not e.calibration):
            if not e.rescored:
                own[(e.step, e.scorer)] = e
            elif e.rubric_hash == scorers[e.scorer].rubric_hash:
                again[(e.step, e.scorer)] = e
            continue
        out.append(e)
    out += [msgspec.structs.replace(v, rescored=False) for v in again.values()]
    lines = []
    for name, scorer in sorted(scorers.items()):
        judged = [key for key in own if key[1] == name]
        moved = [f"  {_trial(step)}: {_said(own[(step, name)])}, now {_said(again[(step, name)])}"
                 for step, _ in judged if (step, name) in again
                 and _said(again[(step, name)]) != _said(own[(step, name)])]
        missing = sum(1 for key in judged if key not in again)
        lines.append(f"scorer {name}: its rubric or labels changed since the plan froze "
                     f"(rubric {scorer.rubric_hash[:12]}); {len(judged) - missing} of "
                     f"{len(judged)} judged trial(s) judged again from their kept evidence, "
                     f"{len(moved)} verdict(s) moved"
                     + (f", {missing} not judged again (no verdict under the new rubric)"
                        if missing else ""))
        lines += moved
    return out, lines


def _trial(step: str) -> str:
    """`r<repetition>.<task>.<arm>`, as `explain` names a trial."""
    return re.sub(r"^trials\.(lane\d+\.)?", "", step).removesuffix(".prompt")


def _said(v: LabelRecorded | JudgeFailed) -> str:
    return f'"{v.label}"' if isinstance(v, LabelRecorded) else f"no label ({v.cause})"
