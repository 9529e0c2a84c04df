"""`armbench replay <run> --rescore`, for a scorer whose rubric or labels changed since the plan
froze: every trial that scorer judged is judged again by the run's judge, from the trial's kept
diff and transcript (applied to a fresh clone at its starting commit, as `judge calibrate` does),
without running any agent again. The verdicts are appended to the run marked `rescored`
(`aggregates.runrecord.decide_rescore`), so the replay's tables come from the log like any other,
and a second replay with the same scorer file pays for nothing: a verdict under the same rubric,
judge, diff and transcript is not asked again.

Composition: it uses the host's sources and the run's tools (from the composition root), so it
sits next to `run.py` and `calibrate.py`.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial

from armbench.aggregates.runrecord import RecordRescore, decide_rescore
from armbench.benchmark.agents.base import ToolAdapter
from armbench.benchmark.agents.judge import JudgeCall, Verdict, applies_to, judge_trial, read_evidence
from armbench.benchmark.host import BenchmarkHost
from armbench.benchmark.records.decided import append_decided
from armbench.benchmark.records.evidence import trial_diff_transcript
from armbench.benchmark.run import require_sandbox
from armbench.benchmark.trials.workspace import discard, work_root
from armbench.edge.gitclone import apply_diff
from armbench.edge.sandbox import Sandbox
from armbench.engine.service import Engine
from armbench.ledger.errors import Refusal, UnknownRun
from armbench.ledger.events import (
    Event,
    JudgeFailed,
    LabelRecorded,
    PlanFrozen,
    PlannedJudge,
    PlannedScorer,
    PlannedTask,
    RunEnded,
)
from armbench.projections.results import RunView, fold_run

__all__ = ["finished_run", "judge_kept", "rescore_run"]


def rescore_run(*, engine: Engine, run: str, scorers: Mapping[str, PlannedScorer], sandbox: bool,
                isolation: Sandbox, tools: Mapping[str, ToolAdapter],
                progress: Callable[[str], None]) -> int:
    """Judge again, with `scorers` (today's version of each scorer whose rubric or labels
    changed), every trial of the finished run they judged; the number of verdicts appended."""
    store = engine.store
    host, events, view, plan = finished_run(engine, run, "so not all of its trials are judged",
                                            "rescore")
    if plan.judge is None:  # pragma: no cover - a plan with scorers always froze a judge
        raise Refusal(f"Run {run} froze no judge, so nothing can judge its trials again.",
                      code="judge_missing")
    judged = [(tv.trial.prompt_step, tv.trial.task, wanted) for tv in view.trials
              if (wanted := [s for name, s in scorers.items() if name in tv.labels])]
    if not judged:
        return 0
    require_sandbox(sandbox, host.config, isolation)
    evidence = host.evidence_store()
    tasks = {t.id: t for t in plan.tasks}
    known = [v for v in view.rescored if isinstance(v, LabelRecorded)]
    given = {(v.step, v.scorer, v.rubric_hash) for v in view.rescored}
    appended = 0
    try:
        for step, task_id, wanted in judged:
            found = (trial_diff_transcript(events, step, evidence)
                     or read_evidence(host.evidence_dir(run), step))  # a run before EvidenceKept
            verdicts: list[Verdict]
            if found is None:
                verdicts = [JudgeFailed(
                    step=step, scorer=s.name, rubric_hash=s.rubric_hash, cause="no_evidence",
                    rescored=True, at=host.clock(),
                    message="The trial kept no diff to judge again (the run kept no evidence, or "
                            "`armbench gc` collected it).")
                    for s in wanted if (step, s.name, s.rubric_hash) not in given]
            else:
                verdicts = judge_kept(host, run, tasks[task_id], step, found, plan.judge, wanted,
                                      tools, known, rescored=True)
            if not verdicts:
                continue
            append_decided(store, run, partial(decide_rescore, command=RecordRescore(
                verdicts=verdicts)))
            appended += len(verdicts)
            known += [v for v in verdicts if isinstance(v, LabelRecorded)]
            said = [f'{v.scorer} "{v.label}"' if isinstance(v, LabelRecorded)
                    else f"{v.scorer} no label ({v.cause})" for v in verdicts]
            progress(f"{step.removesuffix('.prompt')}: judged again: {', '.join(said)}")
    finally:
        host.finished(run)
        shutil.rmtree(work_root(run), ignore_errors=True)
    return appended


def finished_run(engine: Engine, run: str, why: str, then: str
                 ) -> tuple[BenchmarkHost, list[Event], RunView, PlanFrozen]:
    """The host, the log, the view and the plan of a finished run, for judging its trials again;
    a run not found or not finished is refused (`why` it must have finished, what to do `then`)."""
    host = engine.host
    if not isinstance(host, BenchmarkHost):  # pragma: no cover - compose always wires one
        raise TypeError(f"{then} needs the benchmark host")
    events = engine.store.events(run)
    if not events:
        raise UnknownRun(run)
    view = fold_run(events)
    if view.plan is None or not any(isinstance(e, RunEnded) for e in events):
        raise Refusal(f"Run {run} has not finished, {why}. Let it finish (or `armbench resume "
                      f"{run} --sandbox`), then {then}.", code="run_not_finished")
    return host, events, view, view.plan


def judge_kept(host: BenchmarkHost, run: str, task: PlannedTask, step: str,
               kept: tuple[bytes, bytes], judge: PlannedJudge, scorers: Sequence[PlannedScorer],
               tools: Mapping[str, ToolAdapter], known: list[LabelRecorded], *, calibration: bool = False,
               rescored: bool = False) -> list[Verdict]:
    """A trial judged from its kept diff and transcript: a fresh clone at the task's starting
    commit with the diff applied, shown to the judge as the trial's own clone was."""
    diff, transcript = kept
    scorers = [s for s in scorers if applies_to(s, task.id)]
    clone = host.sources(run).fresh_clone(f"{step}#{'calibrate' if calibration else 'rescore'}",
                                          task.starting_commit)
    try:
        apply_diff(clone, diff)
        call = JudgeCall(run=run, step=step, task=task, clone=clone, diff=diff,
                         transcript=transcript, judge=judge, calibration=calibration,
                         rescored=rescored)
        return judge_trial(call, scorers, tools, known, clock=host.clock,
                           cancel=threading.Event())
    finally:
        discard(clone)
