"""A run's kept evidence read back: each trial's pieces by its `EvidenceKept` events, whether
their files are intact (`verify`), and their collection (`armbench gc`).

The evidence never leaves the machine: nothing here is in the record or on the reports branch;
`armbench export --with-evidence` is the one way it is written anywhere else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from armbench.edge.evidence import EvidenceStore
from armbench.ledger.errors import Refusal
from armbench.ledger.events import Event, EvidenceKept, RunEnded
from armbench.ledger.store import EventStore

__all__ = ["Collected", "Piece", "collect", "collect_runs", "evidence_problems", "kept_of",
           "parse_age", "pieces_of", "trial_diff_transcript"]


@dataclass(frozen=True)
class Piece:
    """One piece of a step's evidence: its event, its bytes (None: not on this machine), and
    whether `gc` collected it."""

    kept: EvidenceKept
    data: bytes | None
    collected: bool

    def text(self) -> str:
        """The bytes as text (undecodable bytes replaced)."""
        return (self.data or b"").decode(errors="replace")


def kept_of(events: Iterable[Event]) -> list[EvidenceKept]:
    """The run's EvidenceKept events, in log order."""
    return [e for e in events if isinstance(e, EvidenceKept)]


def pieces_of(events: Iterable[Event], steps: Sequence[str], store: EvidenceStore,
              collected: bool) -> dict[str, Piece]:
    """The last piece of each kind kept for any of `steps` (a judge's by `judge_prompt:<scorer>`
    and `judge_answer:<scorer>`), with its bytes."""
    out: dict[str, Piece] = {}
    for e in kept_of(events):
        if e.step not in steps:
            continue
        name = f"{e.kind}:{e.scorer}" if e.scorer is not None else e.kind
        data = None if collected else store.get(e.sha256)
        out[name] = Piece(kept=e, data=data, collected=collected)
    return out


def trial_diff_transcript(events: Iterable[Event], prompt_step: str,
                          store: EvidenceStore) -> tuple[bytes, bytes] | None:
    """A trial's kept diff and transcript as its judge read them (for `judge calibrate` and
    `replay --rescore`), or None when no diff is kept."""
    got = pieces_of(events, [prompt_step], store, collected=False)
    diff = got.get("diff")
    if diff is None or diff.data is None:
        return None
    transcript = got.get("transcript")
    if transcript is None or transcript.kept.printed:  # the trial's judge read no transcript
        return diff.data, b""
    return diff.data, transcript.data or b""


def evidence_problems(events: Iterable[Event], store: EvidenceStore, run: str) -> list[str]:
    """Evidence files the log names that are altered, or missing from a run `gc` never
    collected."""
    if run in store.collected():
        return []
    problems = []
    for e in kept_of(events):
        state = store.state(e.sha256)
        if state == "altered":
            problems.append(f"the kept {e.kind} of {e.step} ({store.path(e.sha256)}) differs from "
                            "the bytes the log says were kept")
        elif state == "missing":
            problems.append(f"the kept {e.kind} of {e.step} ({e.sha256[:16]}) is not in "
                            f"{store.root} (removed by hand, or kept on the machine that ran the "
                            "trial)")
    return problems


def collect_runs(store: EvidenceStore, runs: Mapping[str, Sequence[EvidenceKept]],
                 keep: Iterable[str], at: str) -> tuple[list[str], int]:
    """Remove the evidence of every run in `runs` not in `keep` (a file another kept run also
    names stays); mark them collected. The runs collected and the bytes freed."""
    kept_runs = set(keep)
    needed = {e.sha256 for run in kept_runs for e in runs.get(run, ())}
    gone = [run for run in runs if run not in kept_runs and run not in store.collected()]
    shas = {e.sha256 for run in gone for e in runs[run]} - needed
    freed = store.remove(shas)
    store.mark_collected(gone, at)
    return gone, freed


@dataclass(frozen=True)
class Collected:
    """What `armbench gc` did: the runs whose evidence it removed and the bytes it freed, and
    the unpacked image roots it removed (`benchmark.records.cachegc`)."""

    runs: list[str]
    freed: int
    kept: list[str]
    roots: list[str] = field(default_factory=list)
    """The digests of the cached roots removed ("" for an unpack a process left unfinished)."""
    roots_freed: int = 0


_AGE = re.compile(r"(\d{1,6})([dhm])")
_UNIT_S = {"d": 86400, "h": 3600, "m": 60}


def parse_age(text: str) -> float:
    """`30d`, `12h` or `90m` in seconds; a clear refusal otherwise."""
    found = _AGE.fullmatch(text.strip())
    if found is None or int(found.group(1)) == 0:
        raise Refusal(f"--older-than is {text!r}; expected an age such as 30d, 12h or 90m.",
                      code="bad_option")
    return int(found.group(1)) * _UNIT_S[found.group(2)]


def collect(ledger: EventStore, evidence: EvidenceStore, *, keep: int | None,
            older_than: str | None, now: datetime) -> Collected:
    """Remove the evidence of finished runs: all but the newest `keep`, or those started more
    than `older_than` ago (never an event: the log stays whole, and names what was kept); then
    the unpacked image roots no run it keeps uses (`benchmark.records.cachegc`)."""
    if (keep is None) == (older_than is None):
        raise Refusal("armbench gc needs one rule: --keep N (keep the newest N runs' evidence) or "
                      "--older-than 30d (remove what runs started before then kept).",
                      code="bad_option")
    if keep is not None and keep < 0:
        raise Refusal(f"--keep is {keep}; expected 0 or more runs.", code="bad_option")
    age = parse_age(older_than) if older_than is not None else None
    started = [(r.stream, r.event) for r in ledger.all(topics=["RunStarted"])]
    finished: dict[str, Sequence[EvidenceKept]] = {}
    newest_first = sorted(started, key=lambda pair: getattr(pair[1], "at", now), reverse=True)
    protected: list[str] = []
    for index, (run, event) in enumerate(newest_first):
        events = ledger.events(run, kinds=(EvidenceKept, RunEnded))
        kept = [e for e in events if isinstance(e, EvidenceKept)]
        ended = any(isinstance(e, RunEnded) for e in events)
        at = getattr(event, "at", now)
        young = age is not None and (now - at).total_seconds() <= age
        if not ended or young or (keep is not None and index < keep):
            protected.append(run)
        finished[run] = kept
    gone, freed = collect_runs(evidence, finished, protected, now.isoformat(timespec="seconds"))
    from armbench.benchmark.records.cachegc import collect_roots  # gc's alone: tar and the images' cache

    roots = collect_roots(ledger, protected, now=now)
    return Collected(runs=[r for r in gone if finished[r]], freed=freed, kept=protected,
                     roots=roots.digests, roots_freed=roots.freed)
