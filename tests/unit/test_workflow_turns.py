"""A workflow arm's trial, turn by turn (benchmark/agents/turns.py), with a fake adapter that
answers from a script: durations and usage summed, outputs carried, a limit skips the rest."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from armbench.benchmark.agents.base import Reading, ToolAdapter
from armbench.benchmark.agents.turns import run_turns
from armbench.engine.protocol import Lease, Report
from armbench.ledger.events import Agent, Cost, PinnedWorkflow, Usage, WorkflowTurn

FLOW = PinnedWorkflow(name="plan-then-fix", file="workflows/plan-then-fix.yaml", source_hash="h",
                      revision="r", steps=[
                          WorkflowTurn(id="plan", prompt="Plan: {{ inputs.task }}", outputs=["plan"]),
                          WorkflowTurn(id="fix", prompt="{{ inputs.task }} / {{ steps.plan.outputs.plan }}")])


class Scripted(ToolAdapter):
    """Answers each turn with the next (report, final message) and keeps the prompts it got."""

    name = "agent"

    def __init__(self, answers: list[tuple[Report, str | None]]) -> None:
        self.answers, self.prompts = list(answers), []

    def run_reading(self, lease: Lease, *, cancel: threading.Event) -> tuple[Report, Reading]:
        self.prompts.append(lease.prompt)
        report, final = self.answers.pop(0)
        return report, Reading(usage=report.usage, final=final)

    def start(self, lease):  # type: ignore[no-untyped-def]
        raise NotImplementedError

    def command(self, lease: Lease) -> str:
        raise NotImplementedError

    def collect(self, step, proc, stdout):  # type: ignore[no-untyped-def]
        raise NotImplementedError


def _lease(**kw: object) -> Lease:
    return Lease(run="r", step="s.prompt", lease="l", kind="prompt", tool="agent", model="m",
                 prompt="Fix add", expires_at=datetime(2026, 1, 1, tzinfo=UTC), **kw)  # type: ignore[arg-type]


def _ok(ms: int, tokens: int, **kw: object) -> Report:
    return Report(outcome="succeeded", cause="ok", duration_ms=ms, agent=Agent(tool="agent"),
                  usage=Usage(tokens={"input": tokens}, cost=Cost(amount=0.5, unit="USD")), **kw)  # type: ignore[arg-type]


def test_both_turns_run_in_order_the_output_reaches_the_second_and_the_turns_are_summed() -> None:
    tool = Scripted([(_ok(300, 10), "  use plus\n"), (_ok(200, 5), "done")])
    report = run_turns(tool, FLOW, _lease(), cancel=threading.Event(), scratch=Path("/nonexistent"))
    assert tool.prompts == ["Plan: Fix add", "Fix add / use plus"]
    assert (report.outcome, report.limit, report.duration_ms) == ("succeeded", None, 500)
    assert report.usage == Usage(tokens={"input": 15}, cost=Cost(amount=1.0, unit="USD"))
    assert report.outputs["workflow"] == {"name": "plan-then-fix", "ran": ["plan", "fix"],
                                          "skipped": []}


def test_a_turn_stopped_at_the_trial_limit_skips_the_rest_and_max_turns_is_unenforced() -> None:
    tool = Scripted([(_ok(900, 10, limit="timeout", timed_out=True), None)])
    report = run_turns(tool, FLOW, _lease(timeout_s=1.0, limit_s=1.0, max_turns=3),
                       cancel=threading.Event(), scratch=Path("/nonexistent"))
    assert tool.prompts == ["Plan: Fix add"]
    assert (report.outcome, report.limit, report.duration_ms) == ("succeeded", "timeout", 900)
    assert report.agent is not None and report.agent.unenforced == ["max_turns"]
    assert report.outputs["workflow"]["skipped"] == ["fix"]


def test_a_failed_turn_makes_the_trial_an_error_naming_the_step() -> None:
    tool = Scripted([(Report(outcome="error", cause="exit", exit_code=3, duration_ms=40,
                             message="agent ended: exit"), None)])
    report = run_turns(tool, FLOW, _lease(), cancel=threading.Event(), scratch=Path("/nonexistent"))
    assert (report.outcome, report.cause, report.limit) == ("error", "exit", None)
    assert report.message == 'Step "plan" of workflow "plan-then-fix": agent ended: exit'


def test_a_declared_output_with_no_final_message_is_an_error() -> None:
    tool = Scripted([(_ok(10, 1), None)])
    report = run_turns(tool, FLOW, _lease(), cancel=threading.Event(), scratch=Path("/nonexistent"))
    assert (report.outcome, report.cause) == ("error", "workflow_output_missing")
    assert tool.prompts == ["Plan: Fix add"]


def test_a_turn_that_failed_for_a_transient_cause_makes_the_whole_trial_transient() -> None:
    tool = Scripted([(_ok(300, 10), "use plus"),
                     (Report(outcome="error", cause="overloaded", exit_code=1, transient=True,
                             message="agent reported an error: API Error: 529"), None)])
    report = run_turns(tool, FLOW, _lease(), cancel=threading.Event(), scratch=Path("/nonexistent"))
    assert (report.outcome, report.cause, report.transient) == ("error", "overloaded", True)
