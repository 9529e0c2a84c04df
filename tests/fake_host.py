"""The one fake `Host` (engine/protocol.py) the engine's tests and the ledger benchmark share.

Plan fills the trials sub-workflow with `trials` prompt steps in two lanes, each followed by a
host check when `checks`; plan, check and report run at once in the host (or come back as
leases, when `runs_commands` is off); a clone is "prepared" at once as `/ws/<step>`. It keeps
what it ran, released and was told, for the tests to look at.
"""

from __future__ import annotations

import msgspec

from armbench.engine.protocol import HostOutcome, Prepared, Report
from armbench.ledger.events import StepSpec

__all__ = ["FakeHost"]


class FakeHost:
    """A host that does every step at once and remembers what it did."""

    def __init__(self, trials: int = 4, *, tool: str = "t", checks: bool = True,
                 runs_commands: bool = True, retries: int = 0, backoff_s: float = 0.0) -> None:
        self.trials, self.tool, self.checks, self.runs_commands = trials, tool, checks, runs_commands
        self.retries, self.backoff_s = retries, backoff_s
        self.executed: list[str] = []
        self.released: list[str] = []
        self.abandoned_leases: list[str] = []
        self.cancelled: list[str] = []
        self.finished_runs: list[str] = []

    def runs_itself(self, spec: StepSpec) -> bool:
        return self.runs_commands and spec.kind == "command"

    def trial_steps(self) -> list[StepSpec]:
        """What plan fills the trials sub-workflow with."""
        steps = []
        for i in range(self.trials):
            lane = i % 2 + 1
            steps.append(StepSpec(id=f"trials.p{i}", kind="prompt", tool=self.tool,
                                  workspace="clone", lane=lane, retries=self.retries,
                                  retry_backoff_s=self.backoff_s))
            if self.checks:
                steps.append(StepSpec(id=f"trials.c{i}", kind="command", command="check",
                                      needs=[f"trials.p{i}"], workspace="continue", lane=lane))
        return steps

    def execute(self, run: str, spec: StepSpec, *, workspace: str | None,
                run_state: str) -> HostOutcome:
        self.executed.append(spec.id)
        if spec.id == "plan":
            definition = msgspec.to_builtins(self.trial_steps())
            return HostOutcome(report=Report(outcome="succeeded", outputs={"definition": definition}))
        if spec.id == "report":
            return HostOutcome(report=Report(outcome="succeeded", outputs={"text": "done"}))
        assert workspace is not None, f"{spec.id} ran without the clone it continues"
        return HostOutcome(report=Report(outcome="succeeded"))

    def prepare(self, run: str, spec: StepSpec, lease: str) -> Prepared | HostOutcome:
        return Prepared(path=f"/ws/{spec.id}/{lease}" if self.retries else f"/ws/{spec.id}",
                        commit="c" * 40, duration_ms=1)

    def cancel(self, run: str) -> None:
        self.cancelled.append(run)

    def abandoned(self, run: str, lease: str, workspace: str | None) -> None:
        self.abandoned_leases.append(lease)
        if workspace:
            self.release(run, workspace)

    def release(self, run: str, workspace: str) -> None:
        self.released.append(workspace)

    def finished(self, run: str) -> None:
        self.finished_runs.append(run)
