"""The event vocabulary of the ledger: every fact armbench records, as frozen tagged Structs.

Evolution rules (see docs/events.md): a new field gets a default; a tag is never renamed; a
field's type never changes; a breaking change is a new tag plus a pure upcaster.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "Agent",
    "AttemptFailed",
    "CheckRan",
    "Cost",
    "Event",
    "EvidenceKept",
    "JudgeFailed",
    "LabelRecorded",
    "LeaseExpired",
    "LeaseRenewed",
    "NoTeam",
    "PinnedWorkflow",
    "PlanFrozen",
    "PlanSubset",
    "PlannedArm",
    "PlannedEnvironment",
    "PlannedJudge",
    "PlannedLabel",
    "PlannedLimits",
    "PlannedScorer",
    "PlannedTask",
    "PlannedTeam",
    "PlannedTrial",
    "Preparation",
    "PulledTeam",
    "RecordDeliveryFailed",
    "RecordPublished",
    "RecordQueued",
    "RecordWritten",
    "RefTeam",
    "RubricRef",
    "RunCancelRequested",
    "RunEnded",
    "RunStarted",
    "StepLeased",
    "StepReported",
    "StepSkipped",
    "StepSpec",
    "StepsPlanned",
    "Usage",
    "WithoutTeam",
    "WorkflowTurn",
    "WorkspacePrepared",
    "decode_event",
    "encode_event",
    "escape_text",
    "escaped",
    "event_tag",
]


# gc=False on every Struct here: events are frozen trees that never form a cycle, and untracked
# they make reading a 60,000-event run about 3x cheaper (the collector no longer rescans them).
class _Fact(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="type"):
    """Base of every event: frozen, keyword-only, tagged by its class name."""


# ---------------------------------------------------------------- shared value types


class StepSpec(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One step of a workflow, as the engine schedules it."""

    id: str
    """Unique within the run, e.g. `plan`, `trials.lane1.r0.login.baseline.prompt`."""
    kind: Literal["command", "prompt", "workflow"]
    """A command to run, a prompt for a tool, or a sub-workflow filled from another step's output."""
    needs: list[str] = []
    """Steps that must have succeeded first; if one did not, this step is skipped."""
    command: str | None = None
    """For a command step: the command line (an `armbench` verb runs in the host)."""
    env: dict[str, str] = {}
    """For a command step: variables set for it."""
    tool: str | None = None
    """For a prompt step: the tool that runs it."""
    model: str | None = None
    """For a prompt step: the exact model name, passed as given."""
    effort: str | None = None
    """For a prompt step: the exact effort, passed as given."""
    prompt: str | None = None
    """For a prompt step: the text given to the tool."""
    workspace: Literal["clone", "continue"] | None = None
    """`clone`: the host prepares a fresh clone at lease; `continue`: the clone of the previous lane step."""
    lane: int | None = None
    """Steps of one lane run one after another, in plan order."""
    timeout_s: int | None = None
    """The step's own time limit."""
    max_turns: int | None = None
    """For a prompt step: the tool's turn limit."""
    network: Literal["host", "none", "private"] | None = None
    """For a prompt step: `none` runs the tool with no network, `private` in a network namespace
    of its own (user-mode networking, only the tool's loopback ports forwarded); None or `host`
    keeps the host's."""
    egress: list[str] | None = None
    """For a prompt step in a `private` network: the hosts the tool may reach beyond its model
    endpoints (`trial.egress`), `["*"]` for any host; None (plans frozen before egress existed):
    any host."""
    from_step: str | None = None
    """For a workflow step: the step whose output `definition` fills it."""
    independent: bool = False
    """For a workflow step: its children's failures are measurements, not the run's failure."""
    final: bool = False
    """A `finally` step: runs once everything else settled, however the run ended."""
    tags: dict[str, str] = {}
    """Opaque labels for the host (e.g. task, arm, repetition); the engine never reads them."""
    verb: Literal["plan", "check_baseline", "check_trial", "judge", "report"] | None = None
    """For a command step armbench runs itself: which of its verbs `command` is (steps
    recorded before this field said it only in `command`)."""
    retries: int = 0
    """For a prompt step: how many times an attempt that failed for a transient cause (a
    provider's rate limit, overload or 5xx, a dropped connection) is tried again from scratch."""
    retry_backoff_s: float = 0.0
    """For a prompt step: the wait before the first retry, doubled for each one after it (with
    jitter)."""
    budget: Cost | None = None
    """For a prompt step: the run's budget. Once the cost the run's prompt steps stated (in its
    unit) reaches it, the step is not leased but skipped (`budget`)."""
    max_tokens: int | None = None
    """For a prompt step: the most tokens it may use (`trial.budget.tokens`), for tools with
    such a limit."""
    max_cost: Cost | None = None
    """For a prompt step: the most it may cost (`trial.budget.cost`), for tools with such a
    limit."""


class Cost(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A cost as the tool stated it; never estimated."""

    amount: float
    """The amount, in `unit`."""
    unit: str
    """The unit the tool gave, e.g. `USD`."""


class Usage(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What a tool said it used."""

    tokens: dict[str, int] = {}
    """Token counts by component: input, output, cache_read, cache_write, reasoning."""
    cost: Cost | None = None
    """The cost, only where the tool stated one."""
    verified: bool = True
    """False when the tool's output could not be read as expected."""
    note: str | None = None
    """Why usage is not verified, when it is not."""


class Agent(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The agent a prompt step ran as: what was asked for and what was observed."""

    tool: str | None = None
    """The tool's name as launched."""
    tool_version: str | None = None
    """The tool's version, where it says."""
    model_requested: str | None = None
    """The model passed to the tool."""
    model_reported: str | None = None
    """The model the tool reported, where it did."""
    effort: str | None = None
    """The effort passed to the tool."""
    team_revision: str | None = None
    """The team revision installed in the trial's home, read from its install (None: no team)."""
    project_commit: str | None = None
    """The commit the clone started at."""
    session_id: str | None = None
    """The tool's session id, where it gave one."""
    unenforced: list[str] = []
    """Limits of the suite the tool could not enforce, e.g. `max_turns`."""
    skills_used: dict[str, Literal["loaded", "unknown"]] | None = None
    """The team's skills the tool's own output shows it loaded (`loaded`), or could not tell
    (`unknown`); a delivered skill not listed was not loaded. None: nothing was observed."""
    skill_changes: dict[str, Literal["added", "removed", "changed"]] = {}
    """The skills the trial's team install adds, removes or changes against the baseline team
    revision, by name."""
    credentials: list[str] = []
    """The login files copied from the member's home into the trial's private home, as paths
    relative to it (never their contents): a CLI's own logins or a command tool's
    `credentials`."""
    limits: Literal["cgroup2", "cgroup1", "rlimit"] | None = None
    """How the step's memory and process limits were enforced: a cgroup v2 or v1 group of its
    own, or only rlimits (weaker: see the guide). None: no limits (declared isolation, or
    recorded before limits existed)."""
    network: Literal["private", "host", "none"] | None = None
    """The network the step had: `private` (a namespace of its own, user-mode networking, only
    the listed loopback ports forwarded), the `host`'s, or `none`. None: recorded before this
    field (the host's, or `none` as the plan said)."""
    ports: list[int] = []
    """The host loopback ports forwarded into a `private` network (the model endpoint's)."""
    egress: list[str] | None = None
    """The hosts beyond its forwarded ports a `private` network let the tool reach, through
    armbench's proxy: its model endpoints and the suite's `trial.egress`; `["*"]`: any host
    (unfiltered: `trial.egress: any`, or recorded before egress existed). None: not a private
    network."""
    assets_hash: str | None = None
    """sha256 of the tree of team assets the step's install delivered (`PlannedArm.assets_hash`,
    checked against it). None: no team, or recorded before it."""
    roles: list[str] | None = None
    """The member's roles and projects the install's assets were delivered for (the plan's).
    None: no team, or recorded before it."""
    disk: Literal["guard"] | None = None
    """How the step's disk was held: `guard`, the free-space guard (a file may not outgrow the
    step's `disk`, and a step whose writes pass it or that fills the disk below its reserve is
    stopped: see the guide). None: no limits, or recorded before disk had one."""


# ---------------------------------------------------------------- the workflow engine's events


class RunStarted(_Fact, frozen=True, kw_only=True, tag="RunStarted"):
    """A workflow run was started."""

    run: str
    """The run id."""
    workflow: str
    """The workflow's name, e.g. `armbench-benchmark`."""
    origin: Literal["default", "team"] = "default"
    """Whether armbench's own workflow ran, or a team's override."""
    source_hash: str
    """sha256 of the workflow definition."""
    inputs: dict[str, str] = {}
    """The run's inputs, e.g. suite and aliases."""
    timeout_s: int
    """The run's time limit."""
    at: datetime
    """When it started (timezone-aware)."""
    sandbox: bool = False
    """Whoever started it declared the machine a sandbox."""
    isolated: bool = True
    """Always true; nothing reads it (the record writes `isolated: true` itself). Kept: logs carry
    it, and a field is never removed (docs/events.md, rule 2)."""
    isolation: Literal["bubblewrap", "declared"] = "declared"
    """How its steps were isolated: armbench's bubblewrap sandbox, or only as declared (runs
    before the sandbox existed were declared)."""
    shared: list[str] = []
    """Host folders every sandboxed step could write (`workflows.sandbox_write`)."""
    enforced: bool = True
    """Whether its isolation was enforced: False for a best-effort run, a team's override whose
    trials step does not require `strict` started where no sandbox was declared; its trials'
    credentials were not withheld (the record says `isolation: unenforced`)."""


class StepsPlanned(_Fact, frozen=True, kw_only=True, tag="StepsPlanned"):
    """Steps were added to the run: the workflow's own, or a sub-workflow's from a step's output."""

    parent: str | None
    """The workflow step these fill, or None for the top level."""
    steps: list[StepSpec]
    """The steps, in plan order."""


class StepLeased(_Fact, frozen=True, kw_only=True, tag="StepLeased"):
    """A driver (or the host) took a step."""

    step: str
    """The step id."""
    lease: str
    """The lease id."""
    driver: str
    """Who took it."""
    attempt: int = 1
    """1 for the first lease of the step."""
    at: datetime
    """When."""
    expires_at: datetime
    """When the lease lapses unless renewed."""


class LeaseRenewed(_Fact, frozen=True, kw_only=True, tag="LeaseRenewed"):
    """A driver still working a step extended its lease."""

    step: str
    """The step id."""
    lease: str
    """The lease id."""
    expires_at: datetime
    """The new expiry."""


class LeaseExpired(_Fact, frozen=True, kw_only=True, tag="LeaseExpired"):
    """A lease lapsed without a report: its driver is taken to be gone."""

    step: str
    """The step id."""
    lease: str
    """The lapsed lease."""
    at: datetime
    """When it was found lapsed."""


Preparation = Literal["overlay", "reflink", "copy", "clone"]
"""How a trial's clone was made: an overlay over the task's pristine tree, a reflinked or a
plain copy of it (`trial: {setup: once}`), or a clone checked out from git."""


class WorkspacePrepared(_Fact, frozen=True, kw_only=True, tag="WorkspacePrepared"):
    """The host prepared a fresh clone for a leased step."""

    step: str
    """The step id."""
    lease: str
    """The lease id."""
    path: str
    """Where the clone is on this machine (never published)."""
    commit: str
    """The commit it was cloned at."""
    duration_ms: int
    """Clone and setup time."""
    prepared_tree: str | None = None
    """The key of the task's prepared tree the clone was copied from (`trial: {setup: once}`);
    None for a fresh clone with setup run in it."""
    prepared_origin: Literal["built", "cached", "rebuilt"] | None = None
    """Where that prepared tree came from: `built` in this run, `cached` (kept between runs by
    `workflows.setup_cache: true`, no setup ran), or `rebuilt` in this run because the tree found
    failed its manifest check; None without a prepared tree (and in logs from before it was kept)."""
    preparation: Literal["overlay", "reflink", "copy", "clone"] | None = None
    """How the clone was made (`Preparation`): `overlay`, `reflink`, `copy` or `clone` (checked
    out from git). None: recorded before armbench said."""


class StepReported(_Fact, frozen=True, kw_only=True, tag="StepReported"):
    """A step's outcome, as the driver or the host reported it."""

    step: str
    """The step id."""
    lease: str
    """The lease it was run under."""
    outcome: Literal["succeeded", "failed", "error"]
    """succeeded, failed (ran and said no), or error (could not do its work)."""
    at: datetime
    """When it was reported."""
    exit_code: int | None = None
    """The process's exit code, where there was one."""
    signal: int | None = None
    """The signal that ended it, where one did."""
    timed_out: bool = False
    """It was stopped by a time limit."""
    cause: str | None = None
    """A short machine-readable cause: exit, signal, timeout, not_found, setup_failed,
    host_error (an exception of armbench's own; the run goes on), ..."""
    limit: str | None = None
    """A limit the tool hit, e.g. `timeout`, `max_turns`, or one of armbench's own: `pids`,
    `memory` (cause `limit`)."""
    duration_ms: int | None = None
    """Measured around the tool's launch only (prompt steps) or the command."""
    usage: Usage | None = None
    """What the tool said it used (prompt steps)."""
    agent: Agent | None = None
    """What the step ran as (prompt steps)."""
    outputs: dict[str, Any] = {}
    """The step's named outputs."""
    message: str | None = None
    """A sentence for people."""
    transient: bool = False
    """The error's cause is the provider's or the network's (a rate limit, an overload, a 5xx, a
    dropped connection), not the agent's: the step's last attempt, its retries spent."""


class AttemptFailed(_Fact, frozen=True, kw_only=True, tag="AttemptFailed"):
    """An attempt at a prompt step failed for a transient cause and the step has retries left: it
    goes back to pending, to be leased again in a fresh clone from `retry_at`."""

    step: str
    """The step id."""
    lease: str
    """The lease the attempt ran under."""
    attempt: int
    """Which attempt failed, counting from 1."""
    cause: str
    """The transient cause, e.g. `rate_limited`, `overloaded`, `server_error`, `network`,
    `tempfail`."""
    message: str | None = None
    """A sentence for people: what the tool said."""
    exit_code: int | None = None
    """The tool's exit code, where there was one."""
    signal: int | None = None
    """The signal that ended it, where one did."""
    duration_ms: int | None = None
    """How long the attempt ran."""
    usage: Usage | None = None
    """What the attempt said it used (spent whatever came of it)."""
    agent: Agent | None = None
    """What the attempt ran as."""
    retry_at: datetime
    """When the step may be leased again (after a backoff that doubles, with jitter)."""
    at: datetime
    """When it was reported."""


class StepSkipped(_Fact, frozen=True, kw_only=True, tag="StepSkipped"):
    """A step was settled without running."""

    step: str
    """The step id."""
    reason: Literal["needs_unmet", "tool_unavailable", "timed_out", "cancelled", "no_driver",
                    "attempts_exhausted", "budget"]
    """Why it never ran (`attempts_exhausted`: its leases lapsed that many times, its driver
    gone each time, so it settles instead of being handed out forever; `budget`: the cost the
    run's prompts stated had reached the run's budget, `StepSpec.budget`)."""
    detail: str | None = None
    """E.g. the tool no driver can run, or the need that failed."""
    at: datetime
    """When."""


class RunCancelRequested(_Fact, frozen=True, kw_only=True, tag="RunCancelRequested"):
    """Someone asked the run to stop (Ctrl-C, or a cancel)."""

    at: datetime
    """When."""
    by: str = "member"
    """Who asked."""
    fault: str | None = None
    """Set when a fault stopped the run, not a person (e.g. `disk_full`): the run ends failed."""


class RunEnded(_Fact, frozen=True, kw_only=True, tag="RunEnded"):
    """The run ended; its finally steps have settled."""

    state: Literal["succeeded", "failed", "timed_out", "cancelled"]
    """How it ended."""
    at: datetime
    """When."""
    outputs: dict[str, Any] = {}
    """The workflow's outputs, from its steps' outputs."""


# ---------------------------------------------------------------- the benchmark's events


class PlannedEnvironment(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A task's environment as frozen at plan time: what it is and the digest of its root."""

    kind: Literal["image", "rootfs"]
    """`image` (an image file unpacked into armbench's cache) or `rootfs` (a folder)."""
    source: str
    """The image reference or the folder, as the suite or task file wrote it."""
    digest: str
    """`sha256:<hex>`: the image's manifest digest, or the hash of the folder's file manifest."""
    path: str = ""
    """The absolute reference armbench read at plan time (a relative path resolved)."""


class PlannedTask(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A task as frozen at plan time."""

    id: str
    """The task file's name without `.yaml`."""
    title: str
    """The task's title."""
    source_hash: str
    """sha256 of the task file's bytes."""
    starting_commit: str
    """The full commit the task starts from."""
    fix: str | None = None
    """source.fix, where the task has one."""
    prompt: str
    """The prompt given to every arm (never published)."""
    check_run: str | None = None
    """The check command (never published)."""
    check_timeout_s: int | None = None
    """The check's own time limit."""
    protect: list[str] = []
    """Paths restored before a trial's check."""
    check_tree: Literal["change", "clone"] = "change"
    """What a trial's check runs on: the tool's change written onto a tree made from the
    starting commit and setup's work (`change`), or the tool's own clone (`check.tree: clone`)."""
    add: list[str] = []
    """Paths written from source.fix before every check."""
    add_from: dict[str, str] = {}
    """Paths written before every check from a file of the suite directory: repo path -> file."""
    success_criteria: str | None = None
    """For a task judged by a correctness judge instead of a check."""
    environment: PlannedEnvironment | None = None
    """The root filesystem every step of the task sees as `/`; None: the host's."""


class WorkflowTurn(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One step of a pinned arm workflow: a turn of the arm's tool, or a command, in the
    trial's clone."""

    id: str
    """The step's id; a sub-workflow's steps are `<step>.<id>`."""
    prompt: str | None = None
    """The prompt template (`{{ inputs.task }}`, `{{ steps.<id>.outputs.<name> }}`)."""
    command: str | None = None
    """A command line run in the clone (`workspace: continue`), instead of a prompt."""
    outputs: list[str] = []
    """The outputs it declares, each the turn's final message."""
    scope: str = ""
    """The prefix its `steps.<id>` references resolve under (a sub-workflow's step id and a dot)."""


class PinnedWorkflow(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A team workflow an arm runs, pinned by plan at the arm's team revision."""

    name: str
    """The workflow's name."""
    file: str
    """The file it was read from, e.g. `workflows/dev/plan-then-fix.yaml`."""
    source_hash: str
    """sha256 of that file's bytes."""
    revision: str
    """The team commit it was read at."""
    steps: list[WorkflowTurn] = []
    """Its steps in run order, the sub-workflows it runs spliced in."""
    runs: dict[str, str] = {}
    """Each sub-workflow it runs: name -> `<file>@<sha256>`."""


class PulledTeam(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="kind",
                 tag="pulled"):
    """An arm on the team revision this checkout pulled (`team: pulled`, the default)."""

    kind: ClassVar[Literal["pulled"]] = "pulled"
    """Its tag (the JSON's `kind`), to read in code."""

    revision: str | None = None
    """The pulled team commit (every plan writes it; None: the plan's baseline revision)."""


class RefTeam(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="kind", tag="ref"):
    """An arm on a team branch, tag or commit, resolved from the team mirror at plan."""

    kind: ClassVar[Literal["ref"]] = "ref"
    """Its tag (the JSON's `kind`), to read in code."""

    ref: str
    """The ref as the suite wrote it."""
    revision: str
    """The commit it resolved to, which the arm's trials get."""


class WithoutTeam(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="kind",
                  tag="without"):
    """An arm on the pulled team revision without some of its paths (`team: {without: [...]}`)."""

    kind: ClassVar[Literal["without"]] = "without"
    """Its tag (the JSON's `kind`), to read in code."""

    paths: list[str]
    """The team repo paths left out, as the suite listed them."""
    revision: str
    """The pulled team commit (what the record and the trials name)."""
    commit: str
    """The commit plan made of the pulled tree without `paths`: what the trials get."""


class NoTeam(msgspec.Struct, frozen=True, kw_only=True, gc=False, tag_field="kind", tag="none"):
    """An arm that gets no team asset (`team: none`)."""

    kind: ClassVar[Literal["none"]] = "none"
    """Its tag (the JSON's `kind`), to read in code."""


PlannedTeam = PulledTeam | RefTeam | WithoutTeam | NoTeam
"""An arm's frozen team, one of four kinds told apart by `kind`."""


class PlannedArm(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """An arm as frozen at plan time: its model resolved, never to be re-resolved."""

    name: str
    """The arm's name."""
    tool: str
    """The tool it runs."""
    model: str | None = None
    """The resolved model name."""
    alias: str | None = None
    """The alias the model was resolved from, where it was one."""
    effort: str | None = None
    """The resolved effort."""
    source: Literal["team", "member"] = "team"
    """Whose aliases decided the model."""
    team: PlannedTeam = PulledTeam()
    """The team frozen for the arm, tagged by `kind`: `{kind: pulled, revision}`, `{kind: ref,
    ref, revision}`, `{kind: without, paths, revision, commit}` (revision the pulled one, commit
    the pulled tree without `paths`, which trials get) or `{kind: none}`; the JSON is the one
    plans wrote as a plain object before it was typed."""
    workflow: str | None = None
    """The name of the team workflow the arm runs instead of one prompt (None: the task's one
    prompt); what it runs is `pinned_workflow`."""
    pinned_workflow: PinnedWorkflow | None = None
    """The team workflow plan pinned for the arm at its team revision, its steps in run order
    (None: the arm runs the task's one prompt; runs planned before arms ran workflows)."""
    assets_hash: str | None = None
    """sha256 of the tree of team assets the arm's trials get (`suites.teamassets.assets_hash`),
    read at plan from the arm's team commit for the plan's `roles`: a driver whose checkout
    delivers another tree fails the lease. None: `team: none`, or plans frozen before it."""


class PlannedTrial(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One trial: a task, an arm, a repetition."""

    task: str
    """The task id."""
    arm: str
    """The arm name."""
    repetition: int
    """Counting from 0."""
    order: int
    """Its place in the plan, counting from 0."""
    lane: int
    """The lane it runs in, counting from 1."""
    prompt_step: str
    """The id of its prompt step."""
    check_step: str
    """The id of its check step."""
    judge_step: str = ""
    """The id of its judge step (its scorers and correctness judge), or empty when none judges it."""


class PlannedLimits(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """armbench's own limits on each sandboxed step, as frozen at plan time."""

    memory: int
    """Bytes of memory (with swap) a step's processes may use together."""
    pids: int
    """Processes and threads a step may have at once."""
    disk: int | None = None
    """Bytes a step may write to the host's disk (None: a plan frozen before disk had a limit,
    which armbench's default holds)."""


class PlannedJudge(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The suite's judge, as frozen at plan time."""

    tool: str
    """The tool that judges: a built-in agent CLI or a team command tool."""
    model: str | None = None
    """Its model, resolved through the model aliases (a scorer's own model overrides it)."""
    effort: str | None = None
    """Its effort."""
    timeout_s: int = 600
    """The longest one judge call may take."""
    alias: str | None = None
    """The model alias its model was resolved from (None: the model as the suite wrote it)."""


class PlanSubset(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """The part of a suite a run was asked to run (`--task`, `--arm`, `--repetitions`)."""

    tasks: list[str]
    """The tasks it runs, in the suite's order."""
    arms: list[str]
    """The arms it runs, in the suite's order."""
    repetitions: int
    """The repetitions of each trial."""


class PlannedLabel(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """One label a frozen scorer's judge may give."""

    value: str
    """The label's word, e.g. `correct`."""
    score: float
    """Its score, from 0 to 1."""


class RubricRef(msgspec.Struct, frozen=True, kw_only=True, gc=False, rename="camel"):
    """Which rubric a frozen scorer judges by."""

    source_hash: str
    """sha256 of the scorer file's bytes (a generated scorer's: of its generated rubric)."""


class PlannedScorer(msgspec.Struct, frozen=True, kw_only=True, gc=False, rename="camel"):
    """A scorer as frozen at plan time; keys it was frozen without stay out of its JSON (UNSET),
    so it is the plain object plans wrote before it was typed."""

    name: str
    """The scorer's name (`armbench:correctness:<task>` for a generated one)."""
    rubric: RubricRef | UnsetType = UNSET
    """Its rubric's hash (published)."""
    labels: list[PlannedLabel] = []
    """The labels its judge may give, with their scores."""
    passing_score: float | None = None
    """A label scored at or above it passes."""
    model: str | None = None
    """The judge's model for this scorer, resolved through the aliases (None: the judge's)."""
    text: str = ""
    """The rubric the judge reads (never published)."""
    task: str | UnsetType = UNSET
    """For a generated correctness scorer, the one task it judges (UNSET: every trial)."""
    effort: str | None | UnsetType = UNSET
    """The effort frozen with the scorer's own model (UNSET: a plan older than that, or no own
    model: the judge's effort)."""
    alias: str | UnsetType = UNSET
    """The alias the scorer's model was resolved from, where it was one."""

    @property
    def rubric_hash(self) -> str:
        """Its rubric's sourceHash ("" for a scorer frozen without one)."""
        return "" if isinstance(self.rubric, UnsetType) else self.rubric.source_hash


class PlanFrozen(_Fact, frozen=True, kw_only=True, tag="PlanFrozen"):
    """The plan step froze the run's plan: nothing edited or pulled later changes it."""

    suite: str
    """The suite's name."""
    suite_hash: str
    """sha256 of suite.yaml's bytes."""
    repo: str
    """The project repo the tasks start from (credentials stripped)."""
    repetitions: int
    """Repetitions of every task on every arm."""
    parallel: int
    """Lanes the suite asked for."""
    timeout_s: int
    """The suite's timeout."""
    setup: str | None = None
    """The setup command (never published)."""
    trial_timeout_s: int | None = None
    """Each trial prompt's time limit."""
    trial_max_turns: int | None = None
    """Each trial prompt's turn limit."""
    trial_network: Literal["host", "none", "private"] | None = None
    """Each trial prompt's network (`trial.network`, `private` unless the suite says); None (plans
    frozen before `private` existed) is the host's."""
    trial_egress: list[str] | None = None
    """What each trial's tool may reach in a `private` network beyond its model endpoints
    (`trial.egress`): these hosts (none unless the suite lists them), or `["*"]`, any host
    (`trial.egress: any`); None (plans frozen before egress existed): any host."""
    trial_limits: PlannedLimits | None = None
    """armbench's own limits on each sandboxed step of a trial (`trial.limits`, or armbench's
    defaults); None (plans frozen before limits existed): armbench's defaults."""
    baseline_team_revision: str
    """The full team commit this checkout had pulled."""
    roles: list[str] | None = None
    """The member's roles and projects (`.armbench/config.yaml`'s `roles`) on the machine that
    froze the plan: every driver delivers each arm's team assets for these, whatever the
    leasing machine's config says. None (plans frozen before roles were): the leasing
    machine's."""
    suite_dir: str | None = None
    """The suite's folder in the team repo, e.g. `benchmarks/auth-fixes`."""
    suite_revision: str | None = None
    """The team commit the suite's files were read at (its last valid pull)."""
    aliases_hash: str | None = None
    """sha256 of the models/aliases.yaml that resolved the arms (under member aliases, of the
    team's text after `# team` and the member's after `# member`: both decided)."""
    aliases: Literal["team", "member"] = "team"
    """Whose aliases file won."""
    scorers: list[PlannedScorer] = []
    """The scorers of the run: `{name, rubric: {sourceHash}}` (published), with `labels`
    (`[{value, score}]`), `passingScore`, `model`, `text` (the rubric, never published) and, for a
    generated correctness scorer, `task` (the one task it judges; else it judges every trial)."""
    tasks: list[PlannedTask]
    """The tasks, in file-name order."""
    arms: list[PlannedArm]
    """The arms, in suite order."""
    trials: list[PlannedTrial]
    """Every trial, in plan order."""
    warnings: list[str] = []
    """Validation warnings at plan time."""
    judge: PlannedJudge | None = None
    """Who judges the scorers, where the suite has any."""
    trial_retries: int = 0
    """How many times a trial whose attempt failed for a transient cause is tried again
    (`trial.retries`; runs planned before retries had none)."""
    trial_retry_backoff_s: int = 0
    """The wait before a trial's first retry, in seconds (`trial.retry_backoff`), doubled for
    each one after it."""
    trial_budget_tokens: int | None = None
    """Each trial prompt's token cap (`trial.budget.tokens`)."""
    trial_budget_cost: Cost | None = None
    """Each trial prompt's cost cap (`trial.budget.cost`)."""
    budget_cost: Cost | None = None
    """The run's budget (`budget.cost`): once the trials' stated cost reaches it, no new trial
    is leased; None: no cap (and every run planned before budgets)."""
    subset: PlanSubset | None = None
    """The part of the suite this run runs, when it was asked for less than the whole (`--task`,
    `--arm`, `--repetitions`); None: the whole suite (and every run planned before subsets)."""
    trial_setup: Literal["once", "each"] = "each"
    """How setup runs (`trial.setup`): `each` in every trial's fresh clone, or `once` per task in
    a clean clone whose tree every trial of the task starts from a copy of (runs planned before
    it ran setup in each)."""


class ChangeMarker(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """A line a trial's change added that skips a test or marks it expected to fail."""

    path: str
    """The changed file."""
    line: int
    """1-based, in the changed file."""
    text: str
    """The line, stripped (at most 200 characters)."""


class ChangeFacts(msgspec.Struct, frozen=True, kw_only=True, gc=False):
    """What a trial's graded change shows (`suites.suspicion`): the facts its flags are read from
    (`projections.flags`); none of them changes the result."""

    written: list[str] = []
    """Paths the change wrote (added or changed)."""
    removed: list[str] = []
    """Paths it removed."""
    added: list[str] = []
    """Paths it added (the starting commit had none there)."""
    cosmetic: list[str] = []
    """Written paths whose change is only whitespace or comments."""
    markers: list[ChangeMarker] = []
    """Lines it added outside protect that skip a test or mark one expected to fail (50 at most)."""
    shadowing: list[str] = []
    """Modules it added outside protect named like the standard library's or a test runner's."""
    deleted_tests: list[str] = []
    """Test files outside protect it removed."""
    fix_paths: list[str] | None = None
    """The non-test files the task's fix changes (None: the task has no `source.fix`)."""


class CheckRan(_Fact, frozen=True, kw_only=True, tag="CheckRan"):
    """A task's check ran (or could not), on a clean baseline clone or after a trial."""

    step: str
    """The check step's id."""
    task: str
    """The task id."""
    kind: Literal["baseline", "trial"]
    """Before any trial, on a clean clone; or after a trial's prompt."""
    result: Literal["passed", "failed", "could_not_run"]
    """What the check said."""
    cause: str | None = None
    """For could_not_run: setup_failed, not_found, timeout, signal, limit (stopped by its step's
    pids or memory limit, named in `message`), trial_prepare_failed (a check.add file missing;
    add_missing before), prepare_failed (also: the check's tree could not be made),
    change_unreadable (git could not read the tool's change in time), no_tests_ran (a
    baseline's check that exited 0 having run no test). For failed: shadows_module (the change
    adds a root module named like the standard library's or a runner's, named in `message`;
    the check did not run), no_tests_ran
    (a trial's check exited 0 but its runner's summary counts no test that ran)."""
    exit_code: int | None = None
    """The check's exit code."""
    signal: int | None = None
    """The signal that ended it."""
    timed_out: bool = False
    """It was stopped by its time limit."""
    duration_ms: int | None = None
    """How long the check ran."""
    restored: list[str] = []
    """Protected paths the agent had changed, put back before the check (trial checks)."""
    message: str | None = None
    """A sentence for people."""
    graded: Literal["change", "clone"] | None = None
    """What a trial's check ran on: `change`, the tool's change written onto a tree made from
    the starting commit and setup's work; `clone`, the tool's own clone (`check.tree: clone`);
    None for a baseline, or a trial's check recorded before armbench graded changes (it ran on
    the clone)."""
    ungraded: list[str] = []
    """Paths the tool left that git showed but the check did not get (ignored by the starting
    tree's rules, or neither a file nor a link), the first 50."""
    change: ChangeFacts | None = None
    """What the graded change shows (a trial's check on `change`); None for a baseline, a check
    on the clone, or one recorded before it."""


class LabelRecorded(_Fact, frozen=True, kw_only=True, tag="LabelRecorded"):
    """A judge labelled a trial's work for one scorer."""

    step: str
    """The trial's prompt step (the step the label judges)."""
    scorer: str
    """The scorer's name (`armbench:correctness:<task>` for a generated one)."""
    rubric_hash: str
    """The scorer's rubric.sourceHash."""
    label: str
    """One of the scorer's label values."""
    score: float
    """That label's score, as the frozen plan mapped it."""
    passed: bool
    """Whether it passed as judged (score at or above passingScore then): stored, not derived."""
    judge: Agent | None = None
    """What judged: the judge's tool, model and version."""
    usage: Usage | None = None
    """What the judge said it used (scoring cost, apart from the prompt's)."""
    reason: str = ""
    """The judge's reason (stays in the ledger; never in the record)."""
    key: str = ""
    """The judge call's cache key: sha256 of (rubric hash, judge agent, diff hash, transcript
    hash); a later judge step with the same key reuses this label."""
    calibration: bool = False
    """Given by `armbench judge calibrate`, against a task's check, not to score the trial."""
    reused_from: str = ""
    """The step whose label with the same key this one reuses (no judge was asked, nothing paid)."""
    rescored: bool = False
    """Given by `armbench replay --rescore`, with a scorer file changed since the plan froze, from
    the trial's kept diff and transcript: the replay shows it in the trial's own label's place;
    the run's record never counts it."""
    at: datetime
    """When."""


class JudgeFailed(_Fact, frozen=True, kw_only=True, tag="JudgeFailed"):
    """A judge gave no label for a trial and a scorer (it crashed, timed out or answered badly)."""

    step: str
    """The trial's prompt step."""
    scorer: str
    """The scorer's name."""
    rubric_hash: str
    """The scorer's rubric.sourceHash."""
    cause: str
    """no_label, not_json, unknown_label, timeout, exit, signal, not_found, tool_unavailable, ..."""
    message: str = ""
    """A sentence for people."""
    judge: Agent | None = None
    """What judged."""
    usage: Usage | None = None
    """What the failed attempt used (scoring cost counts failed attempts)."""
    key: str = ""
    """The judge call's cache key."""
    calibration: bool = False
    """Part of `armbench judge calibrate`."""
    rescored: bool = False
    """Part of `armbench replay --rescore` (`no_evidence`: the trial kept nothing to judge again)."""
    at: datetime
    """When."""


class EvidenceKept(_Fact, frozen=True, kw_only=True, tag="EvidenceKept"):
    """A file of a step's evidence was kept on this machine (never published): the check's or
    setup's output, the trial's diff or transcript, a judge's prompt or answer. The bytes are in
    the evidence folder under their SHA-256, which `verify` checks them against."""

    step: str
    """The step the evidence is of: a check step (its output), a baseline, or a trial's prompt
    step (its setup, diff, transcript, and each judge's prompt and answer)."""
    kind: Literal["check", "setup", "diff", "transcript", "judge_prompt", "judge_answer"]
    """What the file holds."""
    sha256: str
    """The SHA-256 of the kept bytes (the file's name in the evidence folder)."""
    size: int
    """How many bytes were kept."""
    scorer: str | None = None
    """For a judge's prompt or answer: the scorer it was for."""
    cut: str | None = None
    """What was left out, in a sentence (None: nothing)."""
    redacted: int = 0
    """How many withheld variables' values were replaced in it."""
    printed: bool = False
    """For a transcript: what the tool's steps printed, kept because its CLI wrote no session
    files; the trial's judge never read it, so a judge that judges the trial again does not."""
    at: datetime
    """When it was kept."""


class RecordWritten(_Fact, frozen=True, kw_only=True, tag="RecordWritten"):
    """The report step wrote the run's benchmark record."""

    sha256: str
    """sha256 of the record's bytes."""
    at: datetime
    """When."""


class RecordQueued(_Fact, frozen=True, kw_only=True, tag="RecordQueued"):
    """The report step queued the run's record for publication on the reports branch."""

    destination: str
    """The reports repo it is meant for: a local path or a git URL, credentials stripped."""
    branch: str = "armbench-reports"
    """The branch it is published on."""
    path: str
    """Its path on that branch, `benchmarks/runs/<run id>.json`."""
    at: datetime
    """When."""


class RecordPublished(_Fact, frozen=True, kw_only=True, tag="RecordPublished"):
    """The run's record reached the reports branch: it is no longer pending."""

    destination: str
    """The reports repo it was pushed to: a local path or a git URL, credentials stripped."""
    branch: str = "armbench-reports"
    """The branch it is on."""
    path: str
    """Its path on that branch, `benchmarks/runs/<run id>.json`."""
    sha256: str
    """sha256 of the bytes published (those of the last RecordWritten)."""
    commit: str
    """The commit of the branch that holds it."""
    at: datetime
    """When."""


class RecordDeliveryFailed(_Fact, frozen=True, kw_only=True, tag="RecordDeliveryFailed"):
    """A try to publish the run's record failed; it stays queued and is tried again later."""

    destination: str
    """The reports repo it was meant for, credentials stripped."""
    reason: str
    """What went wrong, credentials stripped."""
    at: datetime
    """When."""


Event = (
    RunStarted
    | StepsPlanned
    | StepLeased
    | LeaseRenewed
    | LeaseExpired
    | WorkspacePrepared
    | StepReported
    | AttemptFailed
    | StepSkipped
    | RunCancelRequested
    | RunEnded
    | PlanFrozen
    | CheckRan
    | LabelRecorded
    | JudgeFailed
    | EvidenceKept
    | RecordWritten
    | RecordQueued
    | RecordPublished
    | RecordDeliveryFailed
)

_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(Event)


def encode_event(event: Event) -> bytes:
    """The event's JSON bytes, tag included (text that is not UTF-8 escaped: `escaped`)."""
    try:
        return _ENCODER.encode(event)
    except UnicodeEncodeError:
        return _ENCODER.encode(escaped(event))


E = TypeVar("E", bound=Event)


def escaped(event: E) -> E:
    """The event itself, or, where some of its text cannot be UTF-8 (a file name that is not
    UTF-8, as Python decodes it from the file system: with surrogate escapes), a copy with each
    such byte written `\\xNN` (`escape_text`), so the log can carry it and every reader shows it."""
    try:
        _ENCODER.encode(event)
        return event
    except UnicodeEncodeError:
        builtins = _escape_all(msgspec.to_builtins(event))
        return msgspec.convert(builtins, type=type(event))


def escape_text(text: str) -> str:
    """Text that is valid UTF-8: a surrogate-escaped byte (`os.fsdecode` of a name that is not
    UTF-8) becomes `\\xNN`, any other lone surrogate `\\uNNNN`."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def _escape_all(value: Any) -> Any:
    if isinstance(value, str):
        return escape_text(value)
    if isinstance(value, list):
        return [_escape_all(v) for v in value]
    if isinstance(value, dict):
        return {_escape_all(k): _escape_all(v) for k, v in value.items()}
    return value


def decode_event(data: bytes) -> Event:
    """One event from its JSON bytes, with the one reused decoder."""
    return _DECODER.decode(data)


def event_tag(event: Event) -> str:
    """The tag an event is stored under."""
    return type(event).__struct_config__.tag  # type: ignore[return-value]
