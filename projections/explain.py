"""Why a trial (or a task's baseline) got its result: the deciding events and the rule."""

from __future__ import annotations

import msgspec

from armbench.ledger.errors import Refusal
from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    Event,
    JudgeFailed,
    LabelRecorded,
    LeaseExpired,
    StepLeased,
    StepReported,
    StepSkipped,
    WorkspacePrepared,
)
from armbench.projections.flags import flags_of
from armbench.projections.results import BaselineView, RunView, TrialView, check_cause
from armbench.projections.runs import describe

__all__ = ["BASELINE_RULES", "Explanation", "baseline_rule", "explain", "trial_steps"]

BASELINE_RULES = {
    "valid": "The check failed at the starting commit, as a task needs: its trials may run.",
    "invalid": "The check passed at the starting commit without changes, so it cannot tell a fix "
               "from no change: the task is invalid and its trials do not run.",
    "could_not_run": "The check could not run at the starting commit: {cause}. A check that "
                     "cannot run cannot judge a trial, so the task's trials do not run.",
    "not_run": "The baseline never ran (the run ended first).",
    "prepare_failed": "The baseline's clone could not be prepared at the starting commit, so its "
                      "check never ran: {cause}. A check that cannot run cannot judge a trial, "
                      "so the task's trials do not run.",
}
PREPARE_CAUSES = ("prepare_failed", "setup_failed")
"""A trial's prompt step reported with one of these never reached its tool."""


def baseline_rule(base: BaselineView, reported: StepReported | None = None) -> str:
    """The rule that gave a task's baseline its status, with the cause where there is one.
    `reported` is the baseline step's report: when it failed before any check ran, the baseline
    did not run because its preparation failed, and the rule says so."""
    if base.check is None and reported is not None and reported.outcome != "succeeded":
        said = f"{reported.message} ({reported.cause})" if reported.message else f"{reported.cause}"
        return BASELINE_RULES["prepare_failed"].format(cause=said)
    cause = check_cause(base.check.cause if base.check else None)
    return BASELINE_RULES[base.status].format(cause=cause)


def _reported(events: list[Event], step: str) -> StepReported | None:
    """The step's last report, if any."""
    found = [e for e in events if isinstance(e, StepReported) and e.step == step]
    return found[-1] if found else None


class Explanation(msgspec.Struct, frozen=True, kw_only=True):
    """A result, the rule that gave it, and the events it was decided from."""

    subject: str
    result: str
    rule: str
    events: list[str]
    labels: list[str] = []
    """Each scorer's label on the trial: the label, the scorer, the judge and its reason."""
    output: list[str] = []
    """For a result that is not a pass: the last lines of the check's (or setup's) output, from
    the run's kept evidence."""
    output_of: str | None = None
    """Whose output `output` is: `check` or `setup`; or None."""
    evidence: str | None = None
    """Why no output is shown where one would be (none kept, or collected by `armbench gc`)."""
    flags: list[str] = []
    """A passed trial's flags (`projections.flags`), each with its evidence: reasons to look."""


def explain(view: RunView, events: list[Event], subject: str) -> Explanation:
    """Explain `r<rep>.<task>.<arm>` (or a trial's step id) or `baseline:<task>`."""
    if subject.startswith(("baseline:", "baselines.")):
        task = subject.split(":", 1)[-1].removeprefix("baselines.")
        base = view.baselines.get(task)
        if base is None:
            raise Refusal(f"The run has no task {task!r}. Its tasks: "
                          f"{', '.join(view.baselines) or 'none'}.", code="unknown_trial")
        step = f"trials.baselines.{task}"
        return Explanation(subject=f"baseline:{task}", result=base.status,
                           rule=baseline_rule(base, _reported(events, step)),
                           events=_lines(events, {step}))
    tv = _find(view, subject)
    result, rule = tv.verdict
    steps = {tv.trial.prompt_step, tv.trial.check_step, tv.trial.judge_step}
    skip = tv.prompt_skipped
    if skip is not None and skip.reason == "needs_unmet" and skip.detail in _baseline_steps(view):
        base = view.baselines[skip.detail.removeprefix("trials.baselines.")]
        why = baseline_rule(base, _reported(events, skip.detail))
        rule = f"{rule} Baseline {base.task} is {base.status}: {why[:1].lower()}{why[1:]}"
        steps.add(skip.detail)
    prompt = tv.prompt
    if prompt is not None and prompt.cause in PREPARE_CAUSES and prompt.message:
        rule = f"{rule} It said: {prompt.message}"
    return Explanation(subject=tv.trial.prompt_step.removesuffix(".prompt"), result=result,
                       rule=rule, events=_lines(events, steps), labels=label_lines(tv),
                       flags=[f"{f.name}: {', '.join(f.evidence)}" if f.evidence else f.name
                              for f in flags_of(tv.check, tv.result)])


def label_lines(tv: TrialView) -> list[str]:
    """`<scorer>: "<label>" (score, passed or not) by <judge>: <reason>`, or why no label."""
    out = []
    for scorer, v in tv.labels.items():
        judge = v.judge
        who = " ".join(x for x in (judge.tool, judge.model_requested) if x) if judge else "the judge"
        gaps = [g.removeprefix("answer_only:") for g in judge.unenforced
                if g.startswith("answer_only:")] if judge else []
        if gaps:
            who += f" (not answer-only: {', '.join(gaps)})"
        if isinstance(v, LabelRecorded):
            verdict = "passed" if v.passed else "did not pass"
            out.append(f'{scorer}: "{v.label}" (score {v.score:g}, {verdict}) by {who}: '
                       f"{v.reason or '(no reason given)'}")
        else:
            out.append(f"{scorer}: no label by {who} ({v.cause}): {v.message}")
    return out


def trial_steps(view: RunView, subject: str) -> tuple[str, list[str]]:
    """A trial's (or baseline's) name as `explain` gives it and its steps: the prompt step
    (its setup, diff, transcript, judges) then the check step; a baseline's one step."""
    if subject.startswith(("baseline:", "baselines.")):
        task = subject.split(":", 1)[-1].removeprefix("baselines.")
        if task not in view.baselines:
            raise Refusal(f"The run has no task {task!r}. Its tasks: "
                          f"{', '.join(view.baselines) or 'none'}.", code="unknown_trial")
        return f"baseline:{task}", [f"trials.baselines.{task}"]
    tv = _find(view, subject)
    return (tv.trial.prompt_step.removesuffix(".prompt"),
            [tv.trial.prompt_step, tv.trial.check_step])


def _baseline_steps(view: RunView) -> set[str]:
    return {f"trials.baselines.{task}" for task in view.baselines}


def _find(view: RunView, subject: str) -> TrialView:
    for tv in view.trials:
        base = tv.trial.prompt_step.removesuffix(".prompt")
        short = f"r{tv.trial.repetition}.{tv.trial.task}.{tv.trial.arm}"
        if subject in (base, tv.trial.prompt_step, tv.trial.check_step, short,
                       base.removeprefix("trials.")):
            return tv
    examples = ", ".join(f"r{t.trial.repetition}.{t.trial.task}.{t.trial.arm}"
                         for t in view.trials[:3])
    raise Refusal(f"The run has no trial {subject!r}. Name a trial as r<repetition>.<task>.<arm> "
                  f"(for example {examples}) or baseline:<task>.", code="unknown_trial")


def _lines(events: list[Event], steps: set[str]) -> list[str]:
    kinds = (StepLeased, LeaseExpired, WorkspacePrepared, StepReported, AttemptFailed,
             StepSkipped, CheckRan, LabelRecorded, JudgeFailed)
    return [describe(e) for e in events if isinstance(e, kinds) and e.step in steps]
