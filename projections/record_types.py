"""The record as a reader decodes it: one typed `Record`, for every record armbench reads back.

`projections.record` writes the record; this is what the gate, `plan --detect` and anything
else that reads a stored or published record decode it with. Fields an old record may lack have
defaults, unknown fields are kept out of the way (never refused), and a record that does not fit
is reported with msgspec's path (``Expected `int`, got `str` - at `$.trials[0].repetition` ``)
so the reader can skip it and say why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ["Record", "RecordAgent", "RecordAgentModel", "RecordAgentTool", "RecordAliases",
           "RecordArm", "RecordArmWorkflow", "RecordAttempt", "RecordBaseline", "RecordChain", "RecordCommit",
           "RecordCost", "RecordJudge", "RecordLabel", "RecordRevision", "RecordRubric", "RecordSandbox",
           "RecordScorer",
           "RecordSkillChange", "RecordSkillChanges", "RecordSubset", "RecordSuite", "RecordTask",
           "RecordTeam",
           "RecordTrial", "RecordWorkflow", "as_record", "decode_record", "decode_records",
           "present"]

T = TypeVar("T")

# Writing: `projections.record` builds these and `encode_record` writes their JSON, byte for byte
# what it wrote as plain dicts: fields in the record's order; a key written only when it has a
# value is a field whose default is omitted (`omit_defaults`), and one written even as null
# defaults to UNSET (never omitted once set, absent when an old record lacks it).


class RecordChain(msgspec.Struct, frozen=True, kw_only=True):
    """The record's `chain`: the run's chain head when the record was projected."""

    kind: str
    """`hmac-sha256` (keyed with the ledger key) or `sha256` (a ledger written before keys)."""
    event: int
    """The version of the run's last event when the report read the log (always before the
    `RecordWritten` that names this record's bytes)."""
    head: str
    """That event's chain value."""


class RecordWorkflow(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The record's `workflow`: the workflow the run ran."""

    name: str | None = None
    """Its name, e.g. `armbench-benchmark`."""
    origin: str | None = None
    """`default` (armbench's own) or `team` (the team's override)."""
    source_hash: str | None = None
    """sha256 of its definition."""


class RecordSuite(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The record's `suite`."""

    name: str | None = None
    """The suite's name."""
    source_hash: str | None = None
    """sha256 of its suite.yaml."""


class RecordAliases(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The record's `aliases`: whose model aliases resolved the arms."""

    source: str | None = None
    """`team` or `member`."""
    source_hash: str | None = None
    """sha256 of the aliases that decided."""


class RecordRubric(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A scorer's `rubric`."""

    source_hash: str
    """sha256 of the scorer file."""


class RecordScorer(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One of the record's `scorers[]`."""

    name: str
    """The scorer's name."""
    rubric: RecordRubric | None = None
    """Its rubric's hash (a plan frozen before rubric hashes has none)."""


class RecordTask(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One of the record's `tasks[]`."""

    id: str
    """The task id."""
    starting_commit: str | None = None
    """The commit its trials started from."""
    source_hash: str
    """sha256 of the task file: tasks compare by it."""
    fix: str | None = None
    """Its source.fix, when it has one."""
    environment: str | None = None
    """The digest of the root its steps saw (`sha256:...`), when it had an environment."""


class RecordBaseline(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One of the record's `baselines[]`: a checked task's check on a clean clone."""

    task: str
    """The task id."""
    status: str
    """What its baseline check said."""
    cause: str | None = None
    """Why it could not run, where it could not."""


class RecordTeam(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """An arm's `team` as the record carries it (never the plan's own commit of a without arm)."""

    kind: str
    """`pulled`, `ref`, `without` or `none`."""
    ref: str | None = None
    """A ref arm's ref, as written."""
    paths: list[str] | None = None
    """A without arm's paths."""
    revision: str | None = None
    """The team commit (a ref's, or the pulled one)."""
    assets: str | None = None
    """sha256 of the tree of team assets the plan froze for the arm's trials (absent for `none`,
    and in records of plans that froze none)."""


class RecordArmWorkflow(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A workflow arm's pinned workflow."""

    name: str
    """The workflow's name."""
    source_hash: str
    """sha256 of its file."""


class RecordArm(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One of the record's `arms[]`."""

    name: str
    """The arm's name."""
    tool: str
    """Its tool."""
    model: str | None = None
    """The model it resolved to."""
    alias: str | None = None
    """The alias it was written with."""
    effort: str | None = None
    """Its effort."""
    source: str | None = None
    """Whose aliases decided the model (team or member)."""
    team: RecordTeam | None = None
    """The team choice: `{kind, ref?, paths?, revision?}`."""
    workflow: str | RecordArmWorkflow | None = None
    """The workflow it ran: a name, or `{name, sourceHash}`."""
    roles: list[str] | None = None
    """The member's roles and projects its team assets were delivered for, as the plan froze
    them (absent for `team: none`, and in records of plans that froze none)."""


class RecordCost(msgspec.Struct, frozen=True, kw_only=True):
    """A trial's stated cost."""

    amount: float
    unit: str


class RecordAgentTool(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The tool an agent ran as, as far as observed."""

    name: str | None = None
    version: str | None = None


class RecordAgentModel(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The model asked for and the one the tool reported."""

    requested: str | None = None
    reported: str | None = None


class RecordRevision(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A team revision observed in a trial's install, and the assets it delivered."""

    revision: str
    assets: str | None = None
    """sha256 of the tree of team assets delivered (absent in records from before it)."""


class RecordCommit(msgspec.Struct, frozen=True, kw_only=True):
    """The project commit a trial's clone started at."""

    commit: str


class RecordSandbox(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """How a trial's tool step was confined: its limits' mechanism, its network and its egress."""

    limits: str | None = None
    """`cgroup2`, `cgroup1` or `rlimit`."""
    network: str | None = None
    """`private`, `host` or `none`."""
    ports: list[int] | None = None
    """The host loopback ports forwarded into a `private` network."""
    egress: list[str] | None = None
    """The hosts beyond those ports a `private` network let the tool reach (its model endpoints
    and `trial.egress`), or `["*"]`: any host, unfiltered."""
    disk: str | None = None
    """How its disk was held: `guard` (the free-space guard)."""


class RecordAgent(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A trial's `agent`: only what was observed."""

    tool: RecordAgentTool | None = None
    model: RecordAgentModel | None = None
    effort: str | None = None
    team: RecordRevision | None = None
    project: RecordCommit | None = None
    session_id: str | None = None
    sandbox: RecordSandbox | None = None
    roles: list[str] | None = None
    """The member's roles and projects the team assets were delivered for."""
    fingerprint: str | None = None
    """sha256 over what makes the agent this agent (`projections.record.fingerprint`): written
    only where its tool, the tool's version, its model and its team revision are all known."""


class RecordJudge(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What judged a label: the judge's tool, its version and model, where each is known."""

    tool: str | None = None
    version: str | None = None
    """The version the judge's tool reported (None: it did not say)."""
    model: str | None = None
    """The model the judge's tool reported, else the one it was asked for."""


class RecordLabel(msgspec.Struct, frozen=True, kw_only=True):
    """One scorer's label of a trial: `{scorer, label, score, passed}`, or `{scorer, label: null,
    cause}` when the judge gave none."""

    scorer: str
    """The scorer's name."""
    label: str | None
    """The label given (None: none)."""
    score: float | UnsetType = UNSET
    """Its score."""
    passed: bool | UnsetType = UNSET
    """Whether it passed as judged."""
    cause: str | UnsetType = UNSET
    """Why no label was given."""
    unenforced: list[str] | UnsetType = UNSET
    """What the judge's tool could not hold itself to (`answer_only:tools`, `answer_only:writes`,
    `answer_only:network`), when anything."""
    judge: RecordJudge | UnsetType = UNSET
    """What judged (a label recorded before labels named their judge has none)."""
    rubric_hash: str | UnsetType = msgspec.field(default=UNSET, name="rubricHash")
    """The scorer's rubric.sourceHash the judge was given."""


class RecordAttempt(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """An earlier attempt of a trial's prompt, failed for a transient cause and tried again."""

    attempt: int
    """Its number, from 1."""
    cause: str
    """The transient cause it failed for."""
    duration_ms: int | None = None
    tokens: dict[str, int | float] | None = None
    cost: RecordCost | None = None
    usage_verified: bool | None = None


class RecordFlag(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """A passed trial's flag: its name and where to look."""

    name: str
    evidence: list[str] | None = None


class RecordTrial(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """One of the record's `trials[]`."""

    task: str
    """The task id."""
    arm: str
    """The arm's name."""
    repetition: int
    """The repetition, from 0."""
    order: int | None = None
    """Its place in the plan."""
    step: str | None = None
    """Its prompt step."""
    result: str | None = None
    """passed, failed, error, unscored or not_run."""
    duration_ms: int | None = None
    limit: str | None = None
    tokens: dict[str, int | float] | None = None
    cost: RecordCost | None = None
    usage_verified: bool | None = None
    unenforced: list[str] | None = None
    credentials: list[str] | None = None
    """The login files the trial's home got, relative to it (names, never contents)."""
    agent: RecordAgent | None = None
    used: dict[str, str] | None = None
    """The team's skills the tool loaded (`loaded`) or could not tell (`unknown`)."""
    deviation: bool = False
    attempts: int | None = None
    """How many times the prompt ran, where it was retried (None: once)."""
    retried: list[RecordAttempt] | None = None
    """Each earlier attempt: `{attempt, cause, durationMs, tokens, cost, usageVerified}`."""
    transient: bool = False
    """An error whose last attempt failed for the provider's or the network's cause."""
    check_exit: int | None = None
    labels: list[RecordLabel] | None = None
    """Each scorer's label: `{scorer, label, score, passed}`, or `{scorer, label: null, cause}`."""
    scoring_tokens: dict[str, int | float] | None = None
    scoring_cost: list[RecordCost] | None = None
    environment: str | None = None
    """The digest of the root every step of the trial saw (`sha256:...`); None: the host's."""
    clone: str | None = None
    """How the trial's clone was made: `overlay`, `reflink`, `copy` or `clone` (checked out from
    git); None: the log does not say."""
    graded: str | None = None
    """What its check ran on: `change` (the tool's change written onto a tree made from the
    starting commit and setup's work) or `clone` (the tool's own clone, `check.tree: clone`);
    None: no check ran, or the log does not say."""
    flags: list[RecordFlag] | None = None
    """A passed trial's reasons to look (`projections.flags`): `{name, evidence}` each, never a
    change of its result."""


class RecordSubset(msgspec.Struct, frozen=True, kw_only=True):
    """A subset run's `subset`: the tasks, arms and repetitions it ran."""

    tasks: list[str]
    arms: list[str]
    repetitions: int


class RecordSkillChange(msgspec.Struct, frozen=True, kw_only=True):
    """A skill an arm's team adds, removes or changes."""

    name: str
    change: str


class RecordSkillChanges(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One of the record's `skillChanges[]`: an arm whose team changes skills."""

    arm: str
    defaults: str | None = None
    """The defaults arm it is compared with, where the suite has one."""
    skills: list[RecordSkillChange]


class Record(msgspec.Struct, frozen=True, kw_only=True, rename="camel", omit_defaults=True):
    """A benchmark record (`armbench.record/v1`): as `projections.record` builds it, as its JSON
    is written, and as every reader decodes a stored or published one."""

    schema: str | None = None
    """`armbench.record/v1`."""
    run: str
    """The run id: the one field every record has."""
    workflow: RecordWorkflow | UnsetType = UNSET
    """The workflow the run ran."""
    outcome: str | None | UnsetType = UNSET
    """How the run ended (succeeded, failed, ...); `present(outcome)` reads it."""
    started_at: str | None | UnsetType = UNSET
    """UTC ISO 8601, which sorts as text; `present(started_at)` reads it."""
    isolated: bool | UnsetType = UNSET
    """Always true."""
    isolation: str | None | UnsetType = UNSET
    """`bubblewrap` or `declared` (a record from before the sandbox has none), or `unenforced`:
    a best-effort run (a team's override without strict, where no sandbox was declared), whose
    trials' credentials were not withheld."""
    shared_folders: int | None = None
    """How many host folders every sandboxed step could write, when any."""
    setup: str | None = None
    """How the suite's setup ran, when it has one: `each` (in every trial's clone) or `once`
    (per task, in a tree every trial copied)."""
    chain: RecordChain | None = None
    """The run's chain head when the record was projected."""
    suite: RecordSuite = RecordSuite()
    repetitions: int | None = None
    subset: RecordSubset | None = None
    """The part of the suite the run ran (`--task`, `--arm`, `--repetitions`); None: the whole."""
    baseline_team_revision: str | None = None
    aliases: RecordAliases | None = None
    scorers: list[RecordScorer] | UnsetType = UNSET
    """`{name, rubric: {sourceHash}}` of every scorer of the frozen plan (with a plan: always
    written, even empty)."""
    tasks: list[RecordTask] = []
    baselines: list[RecordBaseline] | UnsetType = UNSET
    """Each checked task's baseline (with a plan: always written, even empty)."""
    arms: list[RecordArm] = []
    trials: list[RecordTrial] = []
    skill_changes: list[RecordSkillChanges] = []
    """Per arm that adds, removes or changes skills: `{arm, defaults?, skills: [{name, change}]}`."""


def present(value: T | UnsetType) -> T | None:
    """A field written even as null, None where a record lacks it."""
    return None if isinstance(value, UnsetType) else value


_DECODER = msgspec.json.Decoder(Record)


def decode_record(data: bytes) -> Record:
    """A record from its JSON bytes; msgspec's error (with the path) when they are not one."""
    return _DECODER.decode(data)


def decode_records(named: Iterable[tuple[str, bytes]]) -> tuple[list[Record], list[tuple[str, str]]]:
    """The records that decode, and (name, what was wrong) for each that does not."""
    records, bad = [], []
    for name, data in named:
        try:
            records.append(_DECODER.decode(data))
        except msgspec.DecodeError as exc:  # ValidationError is a DecodeError
            bad.append((name, _problem(exc)))
    return records, bad


def _problem(exc: msgspec.DecodeError) -> str:
    text = str(exc)
    if isinstance(exc, msgspec.ValidationError):
        return text
    return f"not JSON ({text})"


def as_record(record: Record | Mapping[str, Any]) -> Record:
    """A record: one built in memory (`projections.record.build_record`) as it is, or its plain
    data (a dashboard document's) typed the same way."""
    if isinstance(record, Record):
        return record
    return msgspec.convert(record, Record)
