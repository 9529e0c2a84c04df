"""`armbench judge calibrate <run>`: the correctness judge on every checked trial of a finished
run, its labels appended to the run as calibration events, and how it agreed with the checks.

Each trial is judged in a fresh clone at its task's starting commit with the trial's kept diff
applied (the run kept each checked trial's diff and transcript before its check), with the
task's prompt as the success criteria. Composition: it uses the host's sources and the run's
tools (from the composition root), so it sits next to `run.py`.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from armbench.aggregates.runrecord import RecordCalibration, decide_calibration
from armbench.benchmark.agents.base import ToolAdapter
from armbench.benchmark.agents.judge import read_evidence
from armbench.benchmark.records.decided import append_decided, record_state
from armbench.benchmark.records.evidence import trial_diff_transcript
from armbench.benchmark.rescore import finished_run, judge_kept
from armbench.benchmark.run import require_sandbox
from armbench.benchmark.trials.workspace import work_root
from armbench.edge.sandbox import Sandbox
from armbench.engine.service import Engine
from armbench.ledger.errors import Refusal
from armbench.ledger.events import LabelRecorded, PlannedJudge
from armbench.projections.calibration import calibration_report, render_calibration
from armbench.projections.results import fold_run
from armbench.suites.plan import scorer_entry
from armbench.suites.scorers import correctness_scorer

__all__ = ["calibrate_run"]


def calibrate_run(*, engine: Engine, run: str, sandbox: bool, isolation: Sandbox,
                  tools: Mapping[str, ToolAdapter], progress: Callable[[str], None],
                  tool: str | None = None,
                  model: str | None = None) -> dict[str, Any]:
    """Judge every checked trial of the finished run; the calibration report as data and text."""
    store = engine.store
    host, events, view, plan = finished_run(engine, run, "so its checks are not all in",
                                            "calibrate")
    judge = _judge(plan.judge, tool, model, run)
    checked = [tv for tv in view.trials if tv.check is not None
               and tv.check.result in ("passed", "failed")]
    if not checked:
        raise Refusal(f"Run {run} has no trial whose check passed or failed, so there is nothing "
                      "to calibrate the judge against. Calibrate a run of checked tasks.",
                      code="nothing_to_calibrate")
    evidence = host.evidence_store()

    def kept(step: str) -> tuple[bytes, bytes] | None:
        return (trial_diff_transcript(events, step, evidence)
                or read_evidence(host.evidence_dir(run), step))  # a run before EvidenceKept

    if all(kept(tv.trial.prompt_step) is None for tv in checked):
        raise Refusal(f"Run {run} kept no evidence of its trials' work (each trial's diff and "
                      f"transcript under {evidence.root}), so the judge has nothing to read. A "
                      "run keeps it unless it ran with `--no-evidence` (or `workflows.evidence: "
                      "false`), and `armbench gc` removes it: run the suite again, then calibrate "
                      "that run.", code="no_evidence")
    require_sandbox(sandbox, host.config, isolation)
    tasks = {t.id: t for t in plan.tasks}
    known = [v for v in view.calibration if isinstance(v, LabelRecorded)]
    since = record_state(store, run).calibrated_at  # no other calibration may append after it
    missing = 0
    try:
        for tv in checked:
            task = tasks[tv.trial.task]
            found = kept(tv.trial.prompt_step)
            if found is None:
                missing += 1
                continue
            scorer = scorer_entry(correctness_scorer(task.id, task.success_criteria or task.prompt),
                                  task.id)
            verdicts = judge_kept(host, run, task, tv.trial.prompt_step, found, judge, [scorer],
                                  tools, known, calibration=True)
            if verdicts:
                command = RecordCalibration(verdicts=verdicts, since=since)
                _, since = append_decided(store, run, partial(decide_calibration, command=command))
                known += [v for v in verdicts if isinstance(v, LabelRecorded)]
                said = [v.label if isinstance(v, LabelRecorded) else f"no label ({v.cause})"
                        for v in verdicts]
                progress(f"{tv.trial.prompt_step.removesuffix('.prompt')}: check "
                         f"{tv.check.result if tv.check else '?'}, judge {', '.join(said)}")
    finally:
        host.finished(run)
        shutil.rmtree(work_root(run), ignore_errors=True)
    report = calibration_report(fold_run(store.events(run)))
    assert report is not None
    report["noEvidence"] = missing
    return {"run": run, "calibration": report, "text": render_calibration(report)}


def _judge(planned: PlannedJudge | None, tool: str | None, model: str | None,
           run: str) -> PlannedJudge:
    if tool is not None:
        return PlannedJudge(tool=tool, model=model)
    if planned is None:
        raise Refusal(f"Run {run}'s suite names no judge. Name one with `--tool claude` (and "
                      "`--model`, if you like), or add `judge: { tool: ... }` to the suite.",
                      code="judge_missing")
    if model is not None:
        return PlannedJudge(tool=planned.tool, model=model, effort=planned.effort,
                            timeout_s=planned.timeout_s)
    return planned
