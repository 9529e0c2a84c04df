"""A workflow arm's trial: the arm's pinned team workflow run turn by turn in the trial's clone.

Each prompt step is a launch of the arm's tool with the arm's model and effort, in the same
sandbox and through the same adapter as a one-prompt trial; a command step (`workspace:
continue`) is a command in that sandbox. A step's declared outputs are its final message: a
built-in CLI's final message as its adapter reads it, a command tool's or a command's stdout.
The trial's time limit is the allowance of all its turns together: a turn that spends it ends
the trial with `limit: timeout`, the later steps skipped, and the check still runs. The trial's
duration is the sum of its turns, its usage their sum, and `max_turns` and `trial.budget` are
unenforced (a turn or spend limit does not divide over turns).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import msgspec

from armbench.benchmark.agents.base import Reading, ToolAdapter, budget_unenforced
from armbench.benchmark.agents.command import CommandTool, StdoutCommandTool
from armbench.benchmark.trials.toolstep import ToolStep
from armbench.engine.protocol import Lease, Report
from armbench.ledger.events import Agent, Cost, PinnedWorkflow, Usage, WorkflowTurn
from armbench.suites.armflows import TEMPLATE

__all__ = ["WorkflowRunner", "fill", "pinned_of", "run_turns", "total_usage"]


class WorkflowRunner:
    """A trial's tool runner: the arm's pinned workflow turn by turn when its lease's arm has
    one, else the tool's one prompt."""

    def __init__(self, tool: ToolAdapter, scratch: Path) -> None:
        self.tool, self.scratch = tool, scratch

    def __call__(self, lease: Lease, *, cancel: threading.Event) -> Report:
        pinned = pinned_of(lease)
        if pinned is None:
            return self.tool(lease, cancel=cancel)
        return run_turns(self.tool, pinned, lease, cancel=cancel, scratch=self.scratch)


def pinned_of(lease: Lease) -> PinnedWorkflow | None:
    """The workflow pinned for the lease's arm (its `context.arm`), or None."""
    arm = lease.context.get("arm")
    found = arm.get("pinned_workflow") if isinstance(arm, Mapping) else None
    return msgspec.convert(found, PinnedWorkflow) if found else None


def fill(template: str, task: str, outputs: Mapping[str, str], scope: str) -> str:
    """A step's text with `{{ inputs.task }}` and `{{ steps.<id>.outputs.<name> }}` filled (plan
    refused any other reference)."""
    def value(found: re.Match[str]) -> str:
        ref = found.group(1)
        if ref == "inputs.task":
            return task
        _, step, _, name = ref.split(".", 3)
        return outputs.get(f"{scope}{step}.{name}", "")
    return TEMPLATE.sub(value, template)


def run_turns(tool: ToolAdapter, pinned: PinnedWorkflow, lease: Lease, *,
              cancel: threading.Event, scratch: Path) -> Report:
    """Run the pinned steps in order in the lease's clone; one report for the whole trial."""
    speaker = StdoutCommandTool(tool, scratch) if isinstance(tool, CommandTool) else tool
    outputs: dict[str, str] = {}
    done: list[tuple[WorkflowTurn, Report]] = []
    started = time.monotonic()
    for index, turn in enumerate(pinned.steps):
        spent = time.monotonic() - started
        limit = None if lease.limit_s is None else lease.limit_s - spent
        timeout = None if lease.timeout_s is None else lease.timeout_s - spent
        if limit is not None and limit <= 0:
            return _total(done, pinned, lease, limit="timeout", skipped=pinned.steps[index:])
        text = fill(turn.prompt or turn.command or "", lease.prompt or "", outputs, turn.scope)
        runner = speaker if turn.prompt is not None else _Command(text, tool, scratch)
        turn_lease = msgspec.structs.replace(
            lease, step=f"{lease.step}:{turn.id}", prompt=text if turn.prompt is not None else "",
            timeout_s=timeout, limit_s=limit, max_turns=None, max_tokens=None, max_cost=None)
        report, reading = runner.run_reading(turn_lease, cancel=cancel)
        done.append((turn, report))
        if report.outcome != "succeeded":
            return _total(done, pinned, lease, failed=report, skipped=pinned.steps[index + 1:])
        if report.limit is not None:
            return _total(done, pinned, lease, limit=report.limit, skipped=pinned.steps[index + 1:])
        missing = _outputs(turn, reading, outputs)
        if missing is not None:
            return _total(done, pinned, lease, failed=Report(
                outcome="error", cause="workflow_output_missing", message=missing),
                skipped=pinned.steps[index + 1:])
    return _total(done, pinned, lease)


def _outputs(turn: WorkflowTurn, reading: Reading, outputs: dict[str, str]) -> str | None:
    """Keep a turn's declared outputs (its final message); why not, when it gave none."""
    if not turn.outputs:
        return None
    if reading.final is None:
        return (f'Step "{turn.id}" declares output(s) {", ".join(turn.outputs)}, and its turn '
                "left no final message to read them from.")
    for name in turn.outputs:
        outputs[f"{turn.id}.{name}"] = reading.final.strip()
    return None


def _total(done: list[tuple[WorkflowTurn, Report]], pinned: PinnedWorkflow, lease: Lease, *,
           limit: str | None = None, failed: Report | None = None,
           skipped: list[WorkflowTurn] | None = None) -> Report:
    """The trial's report from its turns: durations and usage summed, the last tool turn's
    agent, `max_turns` unenforced when the suite set it."""
    reports = [r for _, r in done]
    tool_turns = [r for t, r in done if t.prompt is not None]
    agent = next((r.agent for r in reversed(tool_turns) if r.agent is not None), None)
    whole = (["max_turns"] if lease.max_turns is not None else []) + budget_unenforced(lease)
    if whole:  # a cap of the whole trial, which no one turn's tool can hold
        agent = msgspec.structs.replace(agent or Agent(tool=lease.tool, model_requested=lease.model,
                                                       effort=lease.effort),
                                        unenforced=sorted({*(agent.unenforced if agent else []),
                                                           *whole}))
    outputs = {"workflow": {"name": pinned.name, "ran": [t.id for t, _ in done],
                            "skipped": [t.id for t in skipped or []]}}
    last = reports[-1] if reports else None
    total = Report(outcome="succeeded", cause="ok", exit_code=last.exit_code if last else None,
                   duration_ms=sum(r.duration_ms or 0 for r in reports),
                   usage=total_usage([r.usage for r in tool_turns]), agent=agent, outputs=outputs,
                   timed_out=any(r.timed_out for r in reports))
    if failed is not None:
        turn = done[-1][0].id if done else "?"
        return msgspec.structs.replace(
            total, outcome="error", cause=failed.cause, exit_code=failed.exit_code,
            signal=failed.signal, transient=failed.transient,  # the whole trial is tried again
            message=f'Step "{turn}" of workflow "{pinned.name}": '
                    f"{failed.message or failed.cause}"[:500])
    if limit is not None:
        return msgspec.structs.replace(
            total, cause="timeout" if limit == "timeout" else "limit", limit=limit,
            message=f'Workflow "{pinned.name}" stopped at the trial\'s {limit} limit; skipped: '
                    f"{', '.join(t.id for t in skipped or []) or 'nothing'}.")
    return total


def total_usage(usages: list[Usage | None]) -> Usage | None:
    """The usage of several turns: tokens summed by kind, a cost only where every turn stated
    one in one unit (a missing cost is never zero), unverified when any turn's was or was
    missing."""
    stated = [u for u in usages if u is not None]
    if not stated:
        return None
    tokens: dict[str, int] = {}
    for usage in stated:
        for kind, count in usage.tokens.items():
            tokens[kind] = tokens.get(kind, 0) + count
    costs = [u.cost for u in stated if u.cost is not None]
    cost = None
    if len(costs) == len(usages) and len({c.unit for c in costs}) == 1:
        # Summed exactly, then to 12 decimals: 0.01 + 0.00377 is 0.01377, not the binary
        # float's 0.013769999999999998 (a turn's cost is stated in decimals).
        cost = Cost(amount=round(math.fsum(c.amount for c in costs), 12), unit=costs[0].unit)
    unverified = [u.note for u in stated if not u.verified]
    if len(stated) < len(usages):
        unverified.append(f"{len(usages) - len(stated)} of {len(usages)} turns stated no usage")
    return Usage(tokens=tokens, cost=cost, verified=not unverified,
                 note="; ".join(n for n in unverified if n)[:500] or None)


class _Command(StdoutCommandTool):
    """A workflow's command step (`workspace: continue`): its command line in the trial's
    sandbox, its stdout its final message."""

    def __init__(self, command: str, tool: ToolAdapter, scratch: Path) -> None:
        CommandTool.__init__(self, "command", command, Path(scratch), tool.sandbox)
        self.scratch = scratch

    def start(self, lease: Lease) -> ToolStep:
        return ToolStep.start(self.sandbox, lease)

    def hand(self, step: ToolStep, lease: Lease) -> dict[str, str]:
        step.drop_file("usage.json")
        return {"ARMBENCH_USAGE_FILE": step.file("usage.json")[1]}
