"""The record as a reader decodes it: one typed `Record`, for every record armbench reads back.

`projections.record` writes the record; this is what the gate, `plan --detect` and anything
else that reads a stored or published record decode it with. Fields an old record may lack have
defaults, unknown fields are kept out of the way (never refused), and a record that does not fit
is reported with msgspec's path (``Expected `int`, got `str` - at `$.trials[0].repetition` ``)
so the reader can skip it and say why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

__all__ = ["Record", "RecordArm", "RecordCost", "RecordSuite", "RecordTask", "RecordTrial",
           "as_record", "decode_record", "decode_records"]


class RecordSuite(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The record's `suite`."""

    name: str | None = None
    """The suite's name."""
    source_hash: str | None = None
    """sha256 of its suite.yaml."""


class RecordTask(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One of the record's `tasks[]`."""

    id: str
    """The task id."""
    source_hash: str
    """sha256 of the task file: tasks compare by it."""
    starting_commit: str | None = None
    """The commit its trials started from."""
    fix: str | None = None
    """Its source.fix, when it has one."""


class RecordArm(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
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
    team: dict[str, Any] | None = None
    """The team choice: `{kind, ref?, paths?, revision?}`."""
    workflow: str | dict[str, Any] | None = None
    """The workflow it ran: a name, or `{name, sourceHash}`."""

    def entry(self) -> dict[str, Any]:
        """The arm as the record writes it (what `projections.arm_keys` reads)."""
        return msgspec.to_builtins(self)  # type: ignore[no-any-return]


class RecordCost(msgspec.Struct, frozen=True, kw_only=True):
    """A trial's stated cost."""

    amount: float
    unit: str


class RecordTrial(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
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
    agent: dict[str, Any] | None = None
    deviation: bool = False
    check_exit: int | None = None
    used: dict[str, str] | None = None
    """The team's skills the tool loaded (`loaded`) or could not tell (`unknown`)."""
    labels: list[dict[str, Any]] | None = None
    """Each scorer's label: `{scorer, label, score, passed}`, or `{scorer, label: null, cause}`."""
    scoring_tokens: dict[str, int | float] | None = None
    scoring_cost: list[RecordCost] | None = None
    attempts: int | None = None
    """How many times the prompt ran, where it was retried (None: once)."""
    retried: list[dict[str, Any]] | None = None
    """Each earlier attempt: `{attempt, cause, durationMs, tokens, cost, usageVerified}`."""
    transient: bool = False
    """An error whose last attempt failed for the provider's or the network's cause."""


class Record(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A benchmark record (`armbench.record/v1`), as read back."""

    run: str
    """The run id: the one field every record has."""
    schema: str | None = None
    outcome: str | None = None
    """How the run ended (succeeded, failed, ...)."""
    started_at: str | None = None
    """UTC ISO 8601, which sorts as text."""
    suite: RecordSuite = RecordSuite()
    repetitions: int | None = None
    baseline_team_revision: str | None = None
    tasks: list[RecordTask] = []
    scorers: list[dict[str, Any]] = []
    """`{name, rubric: {sourceHash}}` of every scorer of the frozen plan."""
    arms: list[RecordArm] = []
    trials: list[RecordTrial] = []
    skill_changes: list[dict[str, Any]] = []
    """Per arm that adds, removes or changes skills: `{arm, defaults?, skills: [{name, change}]}`."""


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


def as_record(record: Mapping[str, Any]) -> Record:
    """A record built in memory (`projections.record.build_record`), typed the same way."""
    return msgspec.convert(record, Record)
