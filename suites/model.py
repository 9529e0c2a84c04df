"""The team repo's benchmark files as frozen msgspec Structs, named as the files name their keys.

Types carry their JSON-schema constraints in `extra_json_schema` (shown by `armbench schema`, not
enforced at decode) and their diagnostic wording in `extra`; `suites.validate` enforces the
values, so one file's problems are all reported together.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, Struct, field

from armbench.suites.durations import DURATION_EXAMPLES, DURATION_PATTERN, parse_duration
from armbench.suites.sizes import SIZE_EXAMPLES, SIZE_PATTERN

__all__ = [
    "ARMS_MAX", "CHECK_TIMEOUT_DEFAULT", "COMMIT_PATTERN", "MATRIX_ARMS_MAX", "PARALLEL_RANGE",
    "REPETITIONS_RANGE", "RETRIES_DEFAULT", "RETRIES_RANGE", "RETRY_BACKOFF_DEFAULT",
    "SCHEMA_VERSION", "AddFrom", "AliasTarget", "Aliases", "Arm", "ArmValues",
    "Check", "Environment", "Judge", "Matrix", "Resources", "Role", "Roles", "Source", "Suite", "Task",
    "TeamChoice",
    "TeamFile", "TeamWithout", "ToolFile", "TrialLimits",
]

SCHEMA_VERSION = "v1alpha1"
REPETITIONS_RANGE = (1, 10)
PARALLEL_RANGE = (1, 32)
ARMS_MAX = 6
MATRIX_ARMS_MAX = 12
CHECK_TIMEOUT_DEFAULT = 600
COMMIT_PATTERN = r"^[0-9a-f]{40}$"


def _meta(description: str, schema: dict[str, object] | None = None, **extra: str) -> Meta:
    return Meta(description=description, extra_json_schema=schema, extra=extra or None)


def _whole(low: int, high: int, code: str, description: str) -> Meta:
    return _meta(description, {"minimum": low, "maximum": high}, code=code,
                 must=f"a whole number from {low} to {high}", fix="Write a whole number in that range.")


SchemaVersion = Annotated[Literal["v1alpha1"], _meta(
    "The file format's version.", code="schema_version", example=SCHEMA_VERSION,
    fix=f"Set `schemaVersion: {SCHEMA_VERSION}`, the format this armbench reads.")]
Duration = Annotated[str, _meta(
    "A duration: whole numbers with h, m or s, largest unit first.",
    {"pattern": DURATION_PATTERN, "examples": list(DURATION_EXAMPLES)},
    code="duration_invalid", expected="a duration such as 90s, 8m, 6h or 1h30m", example="8m")]
RunTimeout = Annotated[str, _meta(
    "The longest the whole run may take, as a duration such as 6h.", {"pattern": DURATION_PATTERN},
    code="duration_invalid", expected="a duration such as 90s, 8m, 6h or 1h30m",
    missing_code="timeout_missing", example="6h",
    missing_fix="Add `timeout: 6h` (or your limit): the longest the whole run may take.")]
StartingCommit = Annotated[str, _meta(
    "The full 40-character commit of `repo` every trial starts from.", {"pattern": COMMIT_PATTERN},
    code="starting_commit_invalid", expected="a full 40-character commit",
    example="3f2c9a7d1e0b4c6a8f5d2e1b0c9a8f7e6d5c4b3a")]
FixCommit = Annotated[str, _meta(
    "The full 40-character commit that fixed the task.", {"pattern": COMMIT_PATTERN},
    code="fix_commit_invalid", expected="a full 40-character commit")]
Protect = Annotated[tuple[str, ...], _meta(
    "Repo paths or git :(glob) patterns the check reads and the agent must not supply.",
    {"minItems": 1}, code="protect_empty", expected="a non-empty list of paths relative to the repo",
    example="['test/**']")]
Repetitions = Annotated[int, _whole(*REPETITIONS_RANGE, "repetitions_range",
                                    "How many times each arm works each task.")]
Parallel = Annotated[int, _whole(*PARALLEL_RANGE, "parallel_range",
                                 "How many lanes baselines and trials run in.")]
MaxTurns = Annotated[int, _meta("The most turns a trial's prompt may take.", {"minimum": 1},
                                code="max_turns_range", expected="a whole number of at least 1")]
RETRIES_RANGE = (0, 10)
RETRIES_DEFAULT = 2
RETRY_BACKOFF_DEFAULT = "10s"
Retries = Annotated[int, _whole(*RETRIES_RANGE, "retries_range",
                                "How many times a trial whose attempt failed for a transient cause "
                                "(a provider's rate limit, overload or 5xx, a dropped connection) is "
                                "tried again from scratch.")]


class _File(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """Common settings of every strictly decoded file Struct."""


class TeamWithout(_File, frozen=True, kw_only=True):
    """The pulled team revision without some team repo paths."""

    without: tuple[str, ...]
    """Team repo paths (files or directories) to leave out, as git lists them."""


TeamChoice = str | TeamWithout
Team = Annotated[TeamChoice, _meta(
    "`pulled`, `none`, a branch, tag or commit of the team repo, or {without: [paths]}.",
    code="team_invalid",
    expected="`pulled`, `none`, a branch, tag or commit of the team repo, or `{without: [paths]}`",
    fix="Write `team: none`, a ref such as `team: bench/no-skill`, or `team: {without: [skills/x]}`.")]


class ArmValues(_File, frozen=True, kw_only=True):
    """A suite's defaults: the baseline arm's tool, model, effort, team and workflow."""

    tool: str
    """The agent CLI, such as `claude` or `codex`."""
    model: str | None = None
    """A model alias from models/aliases.yaml, or a model name; None is the tool's default."""
    effort: str | None = None
    """The reasoning effort passed to the tool, such as `high`; None is the tool's default."""
    team: Team | None = None
    """The team assets trials get; None is `pulled`, the revision this checkout pulled."""
    workflow: str | None = None
    """A team workflow each trial runs instead of the single prompt; None runs the prompt."""


class Arm(_File, frozen=True, kw_only=True):
    """One arm: a name and at most one defaults key it changes."""

    name: str
    """The arm's name, unique in the suite, as the results table shows it."""
    tool: str | None = None
    """The agent CLI this arm uses instead of the defaults' tool."""
    model: str | None = None
    """The model alias or name this arm uses instead of the defaults' model."""
    effort: str | None = None
    """The effort this arm uses instead of the defaults' effort."""
    team: Team | None = None
    """The team assets this arm's trials get instead of the defaults' team."""
    workflow: str | None = None
    """The team workflow this arm's trials run instead of the defaults' workflow."""


class Matrix(_File, frozen=True, kw_only=True):
    """Values crossed into one arm each, named after its values joined by `-`."""

    tool: tuple[str, ...] | None = None
    """Tools to cross."""
    model: tuple[str, ...] | None = None
    """Model aliases or names to cross."""
    team: tuple[Team, ...] | None = None
    """Team choices to cross."""
    workflow: tuple[str, ...] | None = None
    """Team workflow names to cross."""


Size = Annotated[str, _meta(
    "A size in bytes with K, M, G or T (units of 1024), such as 4G.",
    {"pattern": SIZE_PATTERN, "examples": list(SIZE_EXAMPLES)},
    code="size_invalid", expected="a size such as 512M or 4G", example="4G")]
Pids = Annotated[int, _meta("The most processes and threads a step may have at once.",
                            {"minimum": 16}, code="pids_range",
                            expected="a whole number of at least 16")]


DEFAULT_MEMORY = "4G"
"""Each sandboxed step's memory unless `trial.limits.memory` says: half of an 8 GB machine, so the
host and a second lane live."""
DEFAULT_DISK = "8G"
"""What each sandboxed step may write to the host's disk unless `trial.limits.disk` says: a Node or
Python project's install and build fit many times over, and two lanes leave a 2-core CI machine
(14 GB free) its own room."""
DEFAULT_PIDS = 1024
"""Each sandboxed step's processes and threads unless `trial.limits.pids` says: a test runner's
workers fit, a fork bomb ends."""


class StepLimits(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """armbench's own limits on each sandboxed step of a trial (setup, the tool, the check)."""

    memory: Size | None = None
    """The memory the step's processes may use together, such as `4G` (the default)."""
    pids: Pids | None = None
    """The processes and threads the step may have at once (default 1024)."""
    disk: Size | None = None
    """What the step may write to the host's disk, such as `8G` (the default)."""


class CostCap(_File, frozen=True, kw_only=True):
    """An amount of money in the unit the tools state their cost in."""

    amount: Annotated[float, _meta("The amount, more than 0.", {"exclusiveMinimum": 0},
                                   code="budget_range", expected="a number more than 0")]
    """The amount, such as `25`."""
    unit: str
    """The unit the tools state their cost in, such as `USD`."""


class TrialBudget(_File, frozen=True, kw_only=True):
    """What one trial's prompt may spend, passed to each built-in CLI that has a limit for it
    (Claude Code: `--max-budget-usd` for a cost in USD); listed in the trial's `unenforced`
    where its tool has none."""

    tokens: Annotated[int, _meta("The most tokens one trial may use, at least 1.", {"minimum": 1},
                                 code="budget_range", expected="a whole number of at least 1")
                      ] | None = None
    """The most tokens one trial's prompt may use (no pinned built-in CLI has such a limit)."""
    cost: CostCap | None = None
    """The most one trial's prompt may cost, such as `{amount: 0.5, unit: USD}`."""


class TrialLimits(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Limits of each trial's prompt, and how its clone is set up."""

    timeout: Duration | None = None
    """The longest one trial's prompt may take, such as `8m`."""
    max_turns: MaxTurns | None = None
    """The most turns one trial's prompt may take."""
    network: Literal["private", "host", "none"] | None = None
    """The tool's network: `private` (the default: a network namespace of its own that reaches
    out, but not the host's loopback services or abstract sockets, except its model endpoint's
    loopback port), `host` (the host's network as it is) or `none`."""
    egress: tuple[str, ...] | Literal["any"] = ()
    """What the tool may reach in its `private` network beyond its model endpoints: more hosts
    (`[pypi.org, '*.example.com']`, a `*.` entry every name below it), through armbench's
    filter; `any` for any host, unfiltered. The model endpoints (the tool's provider's API hosts
    and the hosts its `*_BASE_URL` variables name) are always reachable."""
    limits: StepLimits | None = None
    """armbench's own limits on each sandboxed step's memory and processes."""
    retries: Retries = RETRIES_DEFAULT
    """How many times a trial whose attempt failed for a transient cause is tried again, in a
    fresh clone from scratch (0: never)."""
    retry_backoff: Duration = RETRY_BACKOFF_DEFAULT
    """The wait before the first retry, such as `10s`; doubled for each retry after it, with
    jitter."""
    budget: TrialBudget | None = None
    """What one trial's prompt may spend (tokens, cost); None: no cap."""
    setup: Literal["once", "each"] = "each"
    """How the suite's setup runs: `each` (the default) in every trial's fresh clone, or `once`
    per task in one clean clone whose tree (ignored files included) every trial of the task
    starts from a copy of. `once` assumes setup gives the same tree each time."""

    @property
    def timeout_seconds(self) -> int | None:
        """`timeout` in seconds, or None when unset."""
        return None if self.timeout is None else parse_duration(self.timeout)

    @property
    def retry_backoff_seconds(self) -> int:
        """`retry_backoff` in seconds."""
        return parse_duration(self.retry_backoff)


class Environment(_File, frozen=True, kw_only=True):
    """The root filesystem every step of a task sees as `/`: an image or a root folder."""

    image: Annotated[str | None, _meta(
        "An image file: `oci-archive:<file.tar>`, `docker-archive:<file.tar>` or `oci:<folder>`, "
        "relative to the team repo or absolute, optionally pinned with `@sha256:<digest>`.",
        code="environment_invalid", example="oci-archive:images/py39.tar")] = None
    """An image file (never pulled from a registry), unpacked once into armbench's cache."""
    rootfs: str | None = None
    """A root filesystem folder, relative to the team repo or absolute (such as mmdebstrap's)."""

    @property
    def kind(self) -> Literal["image", "rootfs"]:
        """`image` or `rootfs`."""
        return "image" if self.image is not None else "rootfs"

    @property
    def source(self) -> str:
        """The image reference or the folder, as written."""
        return self.image if self.image is not None else (self.rootfs or "")


class RunBudget(_File, frozen=True, kw_only=True):
    """What the whole run may spend: once the cost the trials stated reaches it, no new trial
    starts; the rest are not run."""

    cost: CostCap
    """The most the trials' stated cost may reach, such as `{amount: 25, unit: USD}`."""


class Judge(_File, frozen=True, kw_only=True):
    """Who judges the suite's trials for its scorers and successCriteria tasks."""

    tool: str
    """A built-in agent CLI (claude, codex, ...) or a team command tool."""
    model: str | None = None
    """The judge's model; a scorer's own `model` overrides it."""
    effort: str | None = None
    """The judge's effort."""
    timeout: Duration | None = None
    """The longest one judge call may take, such as `5m` (default 10m)."""

    @property
    def timeout_seconds(self) -> int:
        """`timeout` in seconds (600 when unset)."""
        return 600 if self.timeout is None else parse_duration(self.timeout)


class Suite(_File, frozen=True, kw_only=True):
    """`benchmarks/<suite>/suite.yaml`: which arms work the suite's tasks, how often and how long."""

    schema_version: SchemaVersion
    """The file format's version: `v1alpha1`."""
    name: str
    """The suite's name, the name of its directory."""
    description: str | None = None
    """What the suite measures, for people."""
    repo: str
    """The project the tasks start from, such as `https://github.com/acme/api`."""
    defaults: ArmValues
    """The baseline arm's values, which every arm starts from."""
    arms: Annotated[tuple[Arm, ...], _meta(
        "1 to 6 arms, each changing at most one defaults key.", {"maxItems": ARMS_MAX},
        code="arms_count", expected="a list of 1 to 6 arms")] = ()
    """The arms, in the order the table shows them; may be empty when a matrix is given."""
    matrix: Matrix | None = None
    """Values crossed into more arms, after `arms`."""
    repetitions: Repetitions = 3
    """How many times each arm works each task, 1 to 10."""
    timeout: RunTimeout
    """The longest the whole run may take, such as `6h`; required."""
    parallel: Parallel = 1
    """How many lanes baselines and trials run in, 1 to 32."""
    setup: str | None = None
    """A shell command run in each fresh clone before the agent and the check, such as `npm ci`."""
    scorers: tuple[str, ...] = ()
    """Team scorers that judge every trial."""
    trial: TrialLimits | None = None
    """Limits of each trial's prompt, and how its clone is set up."""
    judge: Judge | None = None
    """Who judges the scorers and the successCriteria tasks; required when there are any."""
    environment: Environment | None = None
    """The root filesystem every task's steps see (a task's own wins); None: the host's."""


    budget: RunBudget | None = None
    """What the whole run may spend (the trials' stated cost); None: no cap."""

    @property
    def timeout_seconds(self) -> int:
        """`timeout` in seconds."""
        return parse_duration(self.timeout)


class AddFrom(_File, frozen=True, kw_only=True):
    """A `check.add` file taken from the suite directory instead of `source.fix`."""

    from_: str = field(name="from")
    """The file's path relative to the suite directory."""
    to: str
    """The repo path it is written to, under `protect`."""


class Check(_File, frozen=True, kw_only=True):
    """The command that decides a trial, and the files it must see as the task's author wrote them."""

    run: str
    """The shell command; exit 0 passes."""
    protect: Protect
    """Paths or globs restored to `startingCommit` before the check, and files added there removed."""
    add: tuple[str | AddFrom, ...] = ()
    """Repo files written before the check from `source.fix` (a path) or the suite directory."""
    timeout: Duration | None = None
    """armbench extension: the check's own time limit, such as `10m`; None means 10 minutes."""
    tree: Literal["change", "clone"] = "change"
    """armbench extension: what a trial's check runs on. `change` (the default): a new tree made
    from the starting commit and what setup made, with the tool's change written onto it (its
    tracked files and the untracked files the starting tree's rules do not ignore), so nothing
    the tool did to setup's work, an ignored file or a cache is graded. `clone`: the tool's own
    clone, as armbench did before (what the tool left anywhere in it reaches the check); the
    record and its caption say so."""

    @property
    def timeout_seconds(self) -> int:
        """`timeout` in seconds, 600 (10 minutes) when unset."""
        return CHECK_TIMEOUT_DEFAULT if self.timeout is None else parse_duration(self.timeout)


class Source(_File, frozen=True, kw_only=True):
    """Where the task came from."""

    platform: str | None = None
    """The tool the originating session ran in, such as `claude-code`."""
    session_id: str | None = None
    """The originating session's id."""
    fix: FixCommit | None = None
    """The full commit that fixed the task; string `check.add` entries are read from it."""


class Task(_File, frozen=True, kw_only=True):
    """`benchmarks/<suite>/tasks/<id>.yaml`: one task; its id is the file name without `.yaml`."""

    schema_version: SchemaVersion
    """The file format's version: `v1alpha1`."""
    title: str
    """A one-line title for people."""
    prompt: str
    """What the agent is asked to do."""
    starting_commit: StartingCommit
    """The full 40-character commit of the suite's repo every trial starts from."""
    check: Check | None = None
    """The command that decides each trial; a task has this or `successCriteria`."""
    success_criteria: str | None = None
    """Text a correctness judge reads, for work no command can decide."""
    source: Source | None = None
    """Where the task came from, and the commit that fixed it."""
    environment: Environment | None = None
    """The root filesystem this task's steps see, instead of the suite's."""


class AliasTarget(_File, frozen=True, kw_only=True):
    """A model and effort one alias gives one tool."""

    model: str
    """The model name passed to the tool."""
    effort: str | None = None
    """The effort passed to the tool; None is the tool's default."""


class Aliases(_File, frozen=True, kw_only=True):
    """`models/aliases.yaml`: model aliases that resolve per tool."""

    schema_version: SchemaVersion
    """The file format's version: `v1alpha1`."""
    aliases: dict[str, dict[str, str | AliasTarget]]
    """alias -> tool -> a model name or `{model, effort}`."""


class ToolFile(_File, frozen=True, kw_only=True):
    """`tools/<name>/tool.yaml`: how armbench launches a tool it has no adapter for."""

    schema_version: SchemaVersion
    """The file format's version: `v1alpha1`."""
    name: str
    """The tool's name, equal to its folder's name."""
    description: str | None = None
    """What the tool is, for people."""
    run: str
    """The shell command that runs one prompt."""
    credentials: tuple[str, ...] = ()
    """Login files the tool needs to reach its model, relative to the home (such as
    `.config/mytool/auth.json`): copied read-only into each trial's private home."""


class TeamFile(_File, frozen=True, kw_only=True):
    """`armbench.yaml` at the team repo root: marks the repo as an armbench team repo."""

    schema_version: SchemaVersion
    """The file format's version: `v1alpha1`."""
    name: str | None = None
    """The team's name, for people."""
    description: str | None = None
    """What the team repo holds, for people."""


class Resources(Struct, frozen=True, kw_only=True):
    """The namespaces a role or project receives, by asset type (unknown types are ignored)."""

    benchmarks: tuple[str, ...] = ()
    """Benchmark namespaces: `benchmarks/<ns>/` directories."""
    workflows: tuple[str, ...] = ()
    """Workflow namespaces: `workflows/<ns>/` directories (a benchmark namespace is one too)."""
    skills: tuple[str, ...] = ()
    """Skill namespaces: `skills/<ns>/` directories."""
    rules: tuple[str, ...] = ()
    """Rule namespaces: `rules/<ns>/` directories."""
    agents: tuple[str, ...] = ()
    """Agent namespaces: `agents/<ns>/` directories."""
    claudemd: tuple[str, ...] = ()
    """Instruction-file namespaces: `claudemd/<ns>/` directories."""
    docs: tuple[str, ...] = ()
    """Doc namespaces: `docs/<ns>/` directories."""


class Role(Struct, frozen=True, kw_only=True):
    """One role or project of `manifest/roles.yaml` (other keys are ignored)."""

    id: str
    """The role's or project's id."""
    resources: Resources = field(default_factory=Resources)
    """The namespaces it receives."""


class Roles(Struct, frozen=True, kw_only=True):
    """`manifest/roles.yaml`, read for the namespaces of benchmarks (other keys are ignored)."""

    roles: tuple[Role, ...] = ()
    """The roles."""
    projects: tuple[Role, ...] = ()
    """The projects, shaped like roles."""

