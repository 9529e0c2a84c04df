"""Trial classification and baselines, folded from a run's events and nothing else.

The rules are the spec's results table, one function each, so `explain` can name the rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from armbench.ledger.events import (
    AttemptFailed,
    CheckRan,
    Event,
    JudgeFailed,
    LabelRecorded,
    PlanFrozen,
    PlannedTrial,
    RunEnded,
    RunStarted,
    StepLeased,
    StepReported,
    StepSkipped,
    WorkspacePrepared,
)
from armbench.suites.values import CORRECTNESS_PREFIX

__all__ = [
    "CHECK_CAUSES",
    "FOLDED",
    "BaselineView",
    "RunView",
    "TrialView",
    "check_cause",
    "classify",
    "fold_run",
]

Result = Literal["passed", "failed", "error", "unscored", "not_run"]


@dataclass(slots=True)
class TrialView:
    """One planned trial and the events that decide its result."""

    trial: PlannedTrial
    prompt: StepReported | None = None
    prompt_skipped: StepSkipped | None = None
    prompt_leased: bool = False
    check: CheckRan | None = None
    check_reported: StepReported | None = None
    check_skipped: StepSkipped | None = None
    labels: dict[str, LabelRecorded | JudgeFailed] = field(default_factory=dict)
    """Each scorer's last verdict on the trial (calibration labels are kept apart)."""
    retried: list[AttemptFailed] = field(default_factory=list)
    """The prompt's earlier attempts, each failed for a transient cause and tried again."""
    preparation: str | None = None
    """How the prompt's last clone was made (`WorkspacePrepared.preparation`)."""

    @property
    def attempts(self) -> int:
        """How many times the prompt ran (its retries and the attempt that settled it)."""
        return len(self.retried) + (self.prompt is not None)

    @property
    def transient(self) -> bool:
        """The trial is an error because its last attempt failed for a transient cause (the
        provider's or the network's, not the agent's)."""
        return self.prompt is not None and self.prompt.transient and self.result == "error"

    @property
    def result(self) -> Result:
        """The trial's result, by the spec's table."""
        return self.verdict[0]

    @property
    def verdict(self) -> tuple[Result, str]:
        """The result and the rule that decided it (through `classify`, the one place)."""
        return classify(self)


@dataclass
class BaselineView:
    """A task's check on a clean clone before any trial."""

    task: str
    check: CheckRan | None = None
    skipped: StepSkipped | None = None

    @property
    def status(self) -> Literal["valid", "invalid", "could_not_run", "not_run"]:
        """valid when the check fails at the starting commit, as a task needs."""
        if self.check is None:
            return "not_run"
        return {"failed": "valid", "passed": "invalid"}.get(self.check.result, "could_not_run")  # type: ignore[return-value]


@dataclass
class RunView:
    """Everything the tables and the record are made of."""

    started: RunStarted | None = None
    plan: PlanFrozen | None = None
    ended: RunEnded | None = None
    trials: list[TrialView] = field(default_factory=list)
    baselines: dict[str, BaselineView] = field(default_factory=dict)
    by_step: dict[str, tuple[TrialView, str]] = field(default_factory=dict)
    report_failed: bool = False
    calibration: list[LabelRecorded | JudgeFailed] = field(default_factory=list)
    """`armbench judge calibrate`'s verdicts, in log order."""
    rescored: list[LabelRecorded | JudgeFailed] = field(default_factory=list)
    """`armbench replay --rescore`'s verdicts, in log order (never a trial's own label)."""

    def apply(self, event: Event) -> None:
        """Fold one event in (incremental and from-scratch folds give the same view)."""
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)


def _plan(view: RunView, e: PlanFrozen) -> None:
    view.plan = e
    for t in e.trials:
        tv = TrialView(trial=t)
        view.trials.append(tv)
        view.by_step[t.prompt_step] = (tv, "prompt")
        view.by_step[t.check_step] = (tv, "check")
    for task in e.tasks:
        view.baselines[task.id] = BaselineView(task=task.id)


def _started(view: RunView, e: RunStarted) -> None:
    view.started = e


def _ended(view: RunView, e: RunEnded) -> None:
    view.ended = e


def _leased(view: RunView, e: StepLeased) -> None:
    hit = view.by_step.get(e.step)
    if hit and hit[1] == "prompt":
        hit[0].prompt_leased = True


def _workspace(view: RunView, e: WorkspacePrepared) -> None:
    hit = view.by_step.get(e.step)
    if hit is not None and hit[1] == "prompt":
        hit[0].preparation = e.preparation


def _reported(view: RunView, e: StepReported) -> None:
    hit = view.by_step.get(e.step)
    if hit is None:
        if e.step == "report" and e.outcome != "succeeded":
            view.report_failed = True
        return
    tv, part = hit
    if part == "prompt":
        tv.prompt = e
    else:
        tv.check_reported = e


def _attempt_failed(view: RunView, e: AttemptFailed) -> None:
    hit = view.by_step.get(e.step)
    if hit is not None and hit[1] == "prompt":
        hit[0].retried.append(e)


def _skipped(view: RunView, e: StepSkipped) -> None:
    hit = view.by_step.get(e.step)
    if hit is not None:
        tv, part = hit
        if part == "prompt":
            tv.prompt_skipped = e
        else:
            tv.check_skipped = e
        return
    if e.step.startswith("trials.baselines."):
        task = e.step.removeprefix("trials.baselines.")
        if task in view.baselines:
            view.baselines[task].skipped = e


def _checked(view: RunView, e: CheckRan) -> None:
    if e.kind == "baseline":
        view.baselines.setdefault(e.task, BaselineView(task=e.task)).check = e
        return
    hit = view.by_step.get(e.step)
    if hit is not None:
        hit[0].check = e


def _labelled(view: RunView, e: LabelRecorded | JudgeFailed) -> None:
    if e.calibration:
        view.calibration.append(e)
        return
    if e.rescored:
        view.rescored.append(e)
        return
    hit = view.by_step.get(e.step)
    if hit is not None:
        hit[0].labels[e.scorer] = e


_HANDLERS: dict[type, Callable[[RunView, Any], None]] = {
    PlanFrozen: _plan,
    RunStarted: _started,
    RunEnded: _ended,
    StepLeased: _leased,
    WorkspacePrepared: _workspace,
    StepReported: _reported,
    AttemptFailed: _attempt_failed,
    StepSkipped: _skipped,
    CheckRan: _checked,
    LabelRecorded: _labelled,
    JudgeFailed: _labelled,
}


FOLDED: tuple[type, ...] = tuple(_HANDLERS)
"""The event kinds the view folds: a reader may leave every other kind undecoded."""


def fold_run(events: list[Event]) -> RunView:
    """A run's view from its events (the same as applying them one by one)."""
    view = RunView()
    handlers = _HANDLERS
    for e in events:
        handler = handlers.get(type(e))
        if handler is not None:
            handler(view, e)
    return view


def classify(tv: TrialView) -> tuple[Result, str]:
    """The trial's result and the rule that decided it, in words one can check against the spec."""
    if tv.prompt_skipped is not None:
        return "not_run", _not_run_rule(tv.prompt_skipped)
    if tv.prompt is None:
        if tv.prompt_leased:
            return "error", ("The prompt was leased but never reported: its driver stopped "
                             "before the run ended.")
        return "not_run", "The run ended before the trial was leased."
    if tv.prompt.outcome != "succeeded":
        return "error", _prompt_error_rule(tv.prompt)
    if tv.check is not None:
        if tv.check.result == "passed":
            return "passed", "The prompt succeeded and the check passed (exit 0)."
        if tv.check.result == "failed" and tv.check.cause is not None:
            return "failed", (f"The prompt succeeded but its check did not pass it: "
                              f"{tv.check.message or 'no message'} ({tv.check.cause}).")
        if tv.check.result == "failed":
            return "failed", (f"The prompt succeeded and the check ran to the end and failed "
                              f"(exit {tv.check.exit_code}).")
        return "error", (f"The check could not run: {check_cause(tv.check.cause)}. No check "
                         "judged the agent's work, so the trial is an error, not a failure.")
    if tv.check_skipped is not None:
        return "error", f"The prompt succeeded but its check never ran ({tv.check_skipped.reason})."
    if not tv.trial.check_step:
        return _judged(tv)
    if tv.check_reported is not None and tv.check_reported.cause == "host_error":
        return "error", (f"The prompt succeeded but armbench itself failed running its check on what "
                         f"the trial left ({tv.check_reported.message or 'no message'}): no check "
                         "judged the work, so the trial is an error, not a failure (host_error).")
    return "error", "The prompt succeeded but no check result was recorded."


def _judged(tv: TrialView) -> tuple[Result, str]:
    """A task without a check: its correctness judge's label decides, or it is unscored."""
    scorer = f"{CORRECTNESS_PREFIX}{tv.trial.task}"
    got = tv.labels.get(scorer)
    if isinstance(got, LabelRecorded):
        if got.passed:
            return "passed", (f'The prompt succeeded and the correctness judge labelled the work '
                              f'"{got.label}", a passing label ({scorer}).')
        return "failed", (f'The prompt succeeded and the correctness judge labelled the work '
                          f'"{got.label}", which does not pass ({scorer}).')
    if isinstance(got, JudgeFailed):
        return "unscored", (f"The prompt succeeded but the correctness judge gave no label "
                            f"({got.cause}: {got.message}). A trial no judge labelled is unscored, "
                            "never passed.")
    return "unscored", ("The task has no check and its correctness judge gave no label, so the "
                        "trial is unscored, never passed.")


CHECK_CAUSES = {
    "setup_failed": "the suite's setup failed in the clone",
    "not_found": "its command was not found, exit 127",
    "not_executable": "its command could not be executed, exit 126",
    "timeout": "it hit its time limit",
    "signal": "it was killed by a signal, or exited 129 to 192",
    "add_missing": "a check.add file is missing at the task's fix commit",
    "trial_prepare_failed": "a check.add file is missing at the task's fix commit",
    "prepare_failed": "its tree, or the protected or added files, could not be put in place",
    "change_unreadable": "git could not read the tool's change in its clone in time",
    "no_tests_ran": "it exited 0 but its runner counted no test that ran",
}


def check_cause(cause: str | None) -> str:
    """Why a check could not run, in words, with its cause word."""
    return f"{CHECK_CAUSES.get(cause or '', 'it could not start or finish')} ({cause})"


def _prompt_error_rule(p: StepReported) -> str:
    if p.cause == "prepare_failed":
        return "The trial's clone could not be prepared, so the tool never ran (prepare_failed)."
    if p.cause == "setup_failed":
        return "The suite's setup failed in the trial's clone, so the tool never ran (setup_failed)."
    if p.cause == "host_error":
        return (f"armbench itself failed on what the trial left ({p.message or 'no message'}), so "
                "its work was never checked: an error, not a failure (host_error).")
    how = _TOOL_ENDINGS.get(p.cause or "")
    if how is None and p.timed_out:
        how = "was stopped at the run's time limit"
    elif how is None and p.signal is not None:
        how = f"was killed by signal {p.signal}"
    elif how is None and p.exit_code is not None:
        how = f"exited {p.exit_code}"
    ending = how or f"could not do its work ({p.cause})"
    if p.transient:
        return (f"The tool failed for a transient cause, the provider's or the network's "
                f"({p.cause}), on its last attempt, so its work was never checked: an error, "
                "not a failure, and not the agent's.")
    return f"The tool {ending}, so its work was never checked: an error, not a failure."


_TOOL_ENDINGS = {
    "cancelled": "was stopped when the run was cancelled",
    "not_found": "could not be found (exit 127)",
    "not_executable": "could not be executed (exit 126)",
    "start_failed": "could not be started",
    "environment_lacks_runtime": "could not start in the task's environment, whose root lacks "
                                 "a file it needs (the step's message names it)",
}


def _not_run_rule(skip: StepSkipped) -> str:
    return {
        "tool_unavailable": f"No driver could run its tool ({skip.detail}).",
        "needs_unmet": f"Its task's baseline ({skip.detail}) did not come out valid, so the "
                       "task's trials do not run.",
        "timed_out": "The run timed out before the trial was reached.",
        "cancelled": "The run was cancelled before the trial was reached.",
        "no_driver": "No driver took the trial.",
        "attempts_exhausted": f"Its step was handed out {skip.detail} times and its driver "
                              "stopped each time, so it was settled instead of tried again.",
        "budget": f"The cost the run's trials stated had reached the run's budget "
                  f"({skip.detail}) before the trial was leased.",
    }[skip.reason]
