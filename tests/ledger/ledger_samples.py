"""One event of every kind with every field set to a value that is not its default.

These are only the seeds of new golden fixtures (`python tests/ledger/ledger_golden.py` writes
the fixtures that are missing and never rewrites one): once written, a fixture is the truth.
"""

from __future__ import annotations

from datetime import UTC, datetime

from ledger.events import (
    Agent,
    AttemptFailed,
    CheckRan,
    Cost,
    Event,
    JudgeFailed,
    LabelRecorded,
    LeaseExpired,
    LeaseRenewed,
    PinnedWorkflow,
    PlanFrozen,
    PlannedArm,
    PlannedEnvironment,
    PlannedJudge,
    PlannedLabel,
    PlannedScorer,
    PlannedTask,
    PlannedTrial,
    PulledTeam,
    RecordDeliveryFailed,
    RecordPublished,
    RecordQueued,
    RecordWritten,
    RubricRef,
    RunCancelRequested,
    RunEnded,
    RunStarted,
    StepLeased,
    StepReported,
    StepSkipped,
    StepSpec,
    StepsPlanned,
    Usage,
    WorkflowTurn,
    WorkspacePrepared,
)

__all__ = ["SAMPLES"]

AT = datetime(2026, 11, 30, 8, 41, 37, 695887, tzinfo=UTC)
LATER = datetime(2026, 11, 30, 8, 42, 37, 695887, tzinfo=UTC)
STEP = "trials.lane1.r0.login.careful.prompt"
SPEC = StepSpec(id=STEP, kind="prompt", needs=["trials.baselines.login"], command="run it",
                env={"A": "1"}, tool="claude", model="claude-sonnet-4-5", effort="high",
                prompt="Fix the login.", workspace="clone", lane=1, timeout_s=600, max_turns=40,
                network="none", from_step="plan", independent=True, final=True,
                tags={"task": "login", "arm": "careful", "repetition": "0"}, verb="check_trial",
                retries=3, retry_backoff_s=12.5)
USAGE = Usage(tokens={"input": 1200, "output": 300, "cache_read": 50}, cost=Cost(amount=0.42,
              unit="USD"), verified=False, note="the usage file was not JSON")
AGENT = Agent(tool="claude", tool_version="2.0.1", model_requested="claude-sonnet-4-5",
              model_reported="claude-sonnet-4-5-20250929", effort="high", team_revision="a" * 40,
              project_commit="b" * 40, session_id="s-123", unenforced=["max_turns"],
              skills_used={"release": "loaded", "review": "unknown"}, skill_changes={"release": "changed"})
TASK = PlannedTask(id="login", title="Login works", source_hash="c" * 64, starting_commit="b" * 40,
                   fix="d" * 40, prompt="Fix the login.", check_run="pytest -q tests/test_login.py",
                   check_timeout_s=300, protect=["tests/**"], add=["tests/test_login.py"],
                   add_from={"tests/test_hidden.py": "hidden/test_hidden.py"},
                   success_criteria="The login form accepts a valid password.",
                   environment=PlannedEnvironment(kind="image", source="oci-archive:images/py39.tar",
                                                  digest="sha256:" + "e" * 64,
                                                  path="oci-archive:/team/images/py39.tar"))
ARM = PlannedArm(name="careful", tool="claude", model="claude-sonnet-4-5", alias="strong",
                 effort="high", source="member", team=PulledTeam(revision="a" * 40),
                 workflow="review-then-fix", pinned_workflow=PinnedWorkflow(
                     name="review-then-fix", file="workflows/dev/review-then-fix.yaml",
                     source_hash="f" * 64, revision="a" * 40,
                     runs={"review": "workflows/dev/review.yaml@" + "9" * 64},
                     steps=[WorkflowTurn(id="review.read", prompt="Read: {{ inputs.task }}",
                                         command="make lint", outputs=["notes"], scope="review.")]))
SCORER = PlannedScorer(name="style", rubric=RubricRef(source_hash="7" * 64),
                       labels=[PlannedLabel(value="good", score=0.5)], passing_score=0.5,
                       model="gpt-5", text="Reads well?", task="login", effort="high", alias="strong")
TRIAL = PlannedTrial(task="login", arm="careful", repetition=2, order=7, lane=2,
                     prompt_step=STEP, check_step="trials.lane1.r0.login.careful.check",
                     judge_step="trials.lane1.r0.login.careful.judge")

SAMPLES: dict[str, Event] = {
    "RunStarted": RunStarted(run="r0123456789abcdef", workflow="armbench-benchmark", origin="team",
                             source_hash="e" * 64, inputs={"suite": "web", "aliases": "member"},
                             timeout_s=21600, at=AT, sandbox=True, isolated=False,
                             isolation="bubblewrap", shared=["/srv/evidence"]),
    "StepsPlanned": StepsPlanned(parent="trials", steps=[SPEC]),
    "StepLeased": StepLeased(step=STEP, lease="l0123456789ab", driver="local", attempt=2, at=AT,
                             expires_at=LATER),
    "LeaseRenewed": LeaseRenewed(step=STEP, lease="l0123456789ab", expires_at=LATER),
    "LeaseExpired": LeaseExpired(step=STEP, lease="l0123456789ab", at=LATER),
    "WorkspacePrepared": WorkspacePrepared(step=STEP, lease="l0123456789ab", path="/tmp/w/clone",
                                           commit="b" * 40, duration_ms=231),
    "AttemptFailed": AttemptFailed(step=STEP, lease="l0123456789ab", attempt=2, cause="overloaded",
                                   message="claude reported an error: API Error: 529", exit_code=1,
                                   signal=15, duration_ms=4200, usage=USAGE, agent=AGENT,
                                   retry_at=LATER, at=AT),
    "StepReported": StepReported(step=STEP, lease="l0123456789ab", outcome="error", at=LATER,
                                 exit_code=137, signal=9, timed_out=True, cause="timeout",
                                 limit="timeout", duration_ms=600000, usage=USAGE, agent=AGENT,
                                 outputs={"text": "done", "n": 3}, message="claude ended: timeout",
                                 transient=True),
    "StepSkipped": StepSkipped(step=STEP, reason="tool_unavailable", detail="claude", at=AT),
    "RunCancelRequested": RunCancelRequested(at=AT, by="ci", fault="disk_full"),
    "RunEnded": RunEnded(state="cancelled", at=LATER, outputs={"text": "| Arm |"}),
    "PlanFrozen": PlanFrozen(suite="web", suite_hash="f" * 64, repo="https://example.invalid/web",
                             repetitions=3, parallel=2, timeout_s=21600, setup="npm ci",
                             trial_timeout_s=900, trial_max_turns=40, trial_network="none",
                             baseline_team_revision="a" * 40, aliases_hash="9" * 64,
                             suite_dir="benchmarks/web", suite_revision="8" * 40,
                             aliases="member", scorers=[SCORER], tasks=[TASK],
                             arms=[ARM], trials=[TRIAL], warnings=["arm hasty has no effort"],
                             judge=PlannedJudge(tool="codex", model="gpt-5", effort="high",
                                                timeout_s=300, alias="strong"),
                             trial_retries=3, trial_retry_backoff_s=30),
    "CheckRan": CheckRan(step="trials.lane1.r0.login.careful.check", task="login", kind="trial",
                         result="could_not_run", cause="signal", exit_code=137, signal=9,
                         timed_out=True, duration_ms=1500, restored=["tests/test_login.py"],
                         message="killed"),
    "LabelRecorded": LabelRecorded(step=STEP, scorer="style", rubric_hash="7" * 64, label="good",
                                   score=0.5, passed=True, judge=AGENT, usage=USAGE,
                                   reason="Reads well.", key="6" * 64, calibration=True,
                                   reused_from="trials.r0.login.hasty.prompt", at=LATER),
    "JudgeFailed": JudgeFailed(step=STEP, scorer="style", rubric_hash="7" * 64, cause="not_json",
                               message="no JSON object", judge=AGENT, usage=USAGE, key="6" * 64,
                               calibration=True, at=LATER),
    "RecordWritten": RecordWritten(sha256="1" * 64, at=LATER),
    "RecordQueued": RecordQueued(destination="https://example.invalid/reports.git",
                                 branch="bench-reports", path="benchmarks/runs/r0123456789abcdef.json",
                                 at=LATER),
    "RecordPublished": RecordPublished(destination="https://example.invalid/reports.git",
                                       branch="bench-reports",
                                       path="benchmarks/runs/r0123456789abcdef.json",
                                       sha256="1" * 64, commit="2" * 40, at=LATER),
    "RecordDeliveryFailed": RecordDeliveryFailed(destination="https://example.invalid/reports.git",
                                                 reason="the remote rejected the push", at=LATER),
}
