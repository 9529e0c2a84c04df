"""A trial judged: each of its scorers asks the run's judge tool about the trial's clone, shown
read-only in the judge's sandbox (a read-only bind mount: never a copy, which a sparse file
would fill a disk with), and the answer becomes a `LabelRecorded` or a `JudgeFailed`.

The judge is an agent tool like an arm's (a built-in CLI or a team command tool, run by the same
adapters in the trial's sandbox); its answer is the last JSON object of its final message (a
command tool's stdout). A judge call whose key (rubric hash, judge agent, diff hash, transcript
hash) already has a label in the run is not made again.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import msgspec

from armbench.benchmark.agents import LAYOUTS
from armbench.benchmark.agents.base import ToolAdapter
from armbench.benchmark.agents.command import CommandTool, StdoutCommandTool
from armbench.benchmark.trials.toolstep import ENVIRONMENT_ROOT, READ_ONLY_CLONE
from armbench.benchmark.trials.workspace import discard
from armbench.edge.environment import EnvironmentRefused, root_of
from armbench.edge.proc import WITHHELD
from armbench.edge.tree import copy_read_only, read_files
from armbench.engine.protocol import Lease
from armbench.ledger.events import Agent, JudgeFailed, LabelRecorded, PlannedJudge, PlannedScorer, PlannedTask
from armbench.suites.judging import Answer, cache_key, judge_prompt, read_answer

__all__ = ["JudgeCall", "Verdict", "applies_to", "judge_trial", "read_evidence",
           "transcript_of"]

Verdict = LabelRecorded | JudgeFailed

_TRANSCRIPT_LIMIT = 4 * 1024 * 1024


def applies_to(scorer: PlannedScorer, task: str) -> bool:
    """Whether a scorer of the plan judges a trial of `task`: a correctness scorer its own task's,
    a suite scorer every trial."""
    return isinstance(scorer.task, msgspec.UnsetType) or scorer.task == task


def transcript_of(tool: str | None, home: Path) -> bytes:
    """The tool's session transcript in the trial's private home (its JSON Lines files, oldest
    first, walked at any depth without following a link), or nothing when the tool keeps none
    there."""
    layout = LAYOUTS.get(tool or "")
    below = layout.transcripts if layout is not None else None
    if below is None:
        return b""
    files = read_files(home, below, ".jsonl", _TRANSCRIPT_LIMIT)
    return b"".join(data for _, _, data in files)[-_TRANSCRIPT_LIMIT:]


def read_evidence(folder: Path, step: str) -> tuple[bytes, bytes] | None:
    """A trial's kept diff and transcript, or None when none was kept."""
    try:
        return (folder / f"{step}.diff").read_bytes(), (folder / f"{step}.transcript").read_bytes()
    except OSError:
        return None


@dataclass(frozen=True)
class JudgeCall:
    """One trial to judge: what it was asked, what it changed, and who judges."""

    run: str
    step: str
    """The trial's prompt step."""
    task: PlannedTask
    clone: Path
    diff: bytes
    transcript: bytes
    judge: PlannedJudge
    calibration: bool = False
    rescored: bool = False
    """Judged again by `armbench replay --rescore` (its verdicts are marked so)."""
    keep: Callable[[str, str, bytes], None] | None = None
    """Told each judge prompt (`judge_prompt`) and answer (`judge_answer`) with the scorer's
    name: how the host keeps them as the trial's evidence."""
    network: Literal["host", "private"] = "host"
    """The judge's network: `private` where the run's trials have one, filtered to the judge
    tool's model endpoints alone (never `trial.egress`: a judge answers from its prompt)."""


def judge_trial(call: JudgeCall, scorers: Sequence[PlannedScorer],
                tools: Mapping[str, object], known: Iterable[LabelRecorded], *,
                clock: Callable[[], datetime], cancel: threading.Event) -> list[Verdict]:
    """Every scorer of the trial's task asks the judge once. `known` are the labels the run
    already has: one with the same key is not asked again (on this trial it stands; on another
    trial it is copied to this one, `reused_from` naming it, with no usage)."""
    have: dict[tuple[str, str], LabelRecorded] = {}
    by_key: dict[str, LabelRecorded] = {}
    for label in known:
        have[(label.step, label.key)] = label
        by_key.setdefault(label.key, label)
    out: list[Verdict] = []
    for scorer in scorers:
        if not applies_to(scorer, call.task.id):
            continue
        own = scorer.model  # frozen with its effort (a plan older than that: the judge's)
        effort = scorer.effort
        agent = {"tool": call.judge.tool, "model": own or call.judge.model,
                 "effort": effort if own and not isinstance(effort, msgspec.UnsetType)
                 else call.judge.effort}
        key = cache_key(scorer.rubric_hash, agent, call.diff, call.transcript)
        if (call.step, key) in have:
            continue
        earlier = by_key.get(key)
        if earlier is not None and earlier.scorer == scorer.name:
            verdict: Verdict = msgspec.structs.replace(
                earlier, step=call.step, usage=None, reused_from=earlier.reused_from or earlier.step,
                calibration=call.calibration, rescored=call.rescored, at=clock())
        else:
            verdict = _ask(call, scorer, agent, key, tools, clock, cancel)
        out.append(verdict)
        if isinstance(verdict, LabelRecorded):
            have[(call.step, key)] = verdict
            by_key.setdefault(key, verdict)
    return out


def _ask(call: JudgeCall, scorer: PlannedScorer, agent: Mapping[str, str | None], key: str,
         tools: Mapping[str, object], clock: Callable[[], datetime],
         cancel: threading.Event) -> Verdict:
    base: dict[str, Any] = {"step": call.step, "scorer": scorer.name,
                            "rubric_hash": scorer.rubric_hash, "key": key,
                            "calibration": call.calibration, "rescored": call.rescored}
    tool = tools.get(agent["tool"] or "")
    if not isinstance(tool, ToolAdapter):
        return JudgeFailed(**base, cause="tool_unavailable", at=clock(),
                           message=f"The judge's tool {agent['tool']} is not installed here (not on "
                                   "PATH, nor a valid team command tool).")
    if isinstance(tool, CommandTool):
        tool = StdoutCommandTool(tool, call.clone.parent.parent / "scratch")
    tool = tool.answering()  # no tools, no writes, no network but its model's, where it allows
    prompt = judge_prompt(scorer, call.task.prompt, call.diff.decode(errors="replace"),
                          call.transcript.decode(errors="replace") or None, secrets.token_hex(16))
    dest = call.clone.parent / f"{call.clone.name}.judge-{key[:12]}"  # the judge's own room
    sandboxed = tool.sandbox.isolation != "declared"
    context: dict[str, Any] = {READ_ONLY_CLONE: str(call.clone)} if sandboxed else {}
    env = call.task.environment
    if sandboxed and env is not None:  # the judge sees the task's environment as `/` too
        try:
            context[ENVIRONMENT_ROOT] = str(root_of(env.kind, env.path or env.source, env.digest,
                                                    base=Path("/")))
        except EnvironmentRefused as exc:
            return JudgeFailed(**base, cause="environment_refused", at=clock(), message=str(exc)[:500])
    lease = Lease(run=call.run, step=f"{call.step}:judge:{scorer.name}", lease=f"judge-{key[:16]}",
                  kind="prompt", tool=tool.name, model=agent["model"], effort=agent["effort"],
                  prompt=prompt, cwd=str(dest), withhold=list(WITHHELD),
                  timeout_s=float(call.judge.timeout_s), expires_at=clock(),
                  context=context, network=call.network if sandboxed else "host", egress=[])
    if call.keep is not None:
        call.keep("judge_prompt", scorer.name, prompt.encode())
    try:
        if not sandboxed:  # no sandbox to mount it read-only in: a copy, sparse files kept sparse
            copy_read_only(call.clone, dest)
        report, reading = tool.run_reading(lease, cancel=cancel)
        if call.keep is not None:
            call.keep("judge_answer", scorer.name, (reading.final or report.message or "").encode())
    except OSError as exc:
        return JudgeFailed(**base, cause="host_error", at=clock(),
                           message=f"The judge could not be started: {exc}"[:500])
    finally:
        discard(dest)
    judged = Agent(tool=tool.name, tool_version=reading.version, model_requested=agent["model"],
                   model_reported=reading.model, effort=agent["effort"], session_id=reading.session_id,
                   unenforced=list(report.agent.unenforced) if report.agent else [])
    if report.outcome != "succeeded" or report.limit is not None:
        cause = "timeout" if report.timed_out else (report.cause or "error")
        return JudgeFailed(**base, cause=cause, judge=judged, usage=reading.usage, at=clock(),
                           message=report.message or f"The judge ended: {cause}.")
    labels = [lb.value for lb in scorer.labels]
    answer = read_answer(reading.final, labels)
    if not isinstance(answer, Answer):
        return JudgeFailed(**base, cause=answer.cause, message=answer.message, judge=judged,
                           usage=reading.usage, at=clock())
    score = next(lb.score for lb in scorer.labels if lb.value == answer.label)
    passing = scorer.passing_score
    return LabelRecorded(**base, label=answer.label, score=score,
                         passed=passing is not None and score >= passing, judge=judged,
                         usage=reading.usage, reason=answer.reason, at=clock())
