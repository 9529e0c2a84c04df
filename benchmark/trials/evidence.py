"""A trial's evidence kept: each piece capped, withheld values redacted, its bytes in the
evidence folder (`edge.evidence`) and an `EvidenceKept` event naming them by hash.

What each piece is and where it is cut:
- a check's (or setup's) output: stdout and stderr as printed (one stream), its last
  `edge.proc.TAIL_BYTES`;
- the diff from the starting commit, read by `TrialSources.diff` (the judge's safe path: no
  config, attributes or textconv of the clone; binary files named, not included), its first
  `DIFF_LIMIT` bytes;
- the transcript: the CLI's session files where it keeps them (`benchmark.agents.judge.
  transcript_of`), else what the tool printed (`tool_output`), each capped;
- a judge's prompt and answer, per scorer.

Keeping never fails a step: a piece that cannot be written is left out (its event with it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Literal

import msgspec

from armbench.edge.evidence import EvidenceStore, redact
from armbench.edge.proc import TAIL_BYTES, WITHHELD, ProcResult
from armbench.edge.sandbox import Room
from armbench.ledger.events import EvidenceKept

__all__ = ["DIFF_LIMIT", "SESSION_LIMIT", "TOOL_OUTPUT", "Keeper", "Kind", "output_of", "read_tool_output",
           "write_tool_output"]

Kind = Literal["check", "setup", "diff", "transcript", "judge_prompt", "judge_answer"]
DIFF_LIMIT = 1024 * 1024
"""The most bytes of a trial's diff kept (its start: the files in path order)."""
SESSION_LIMIT = 4 * 1024 * 1024
"""The most bytes of a CLI's session files read (`benchmark.agents.judge.transcript_of`'s cap)."""
TOOL_OUTPUT = "tool-output.txt"
"""The file in a trial's room (beside its home, outside every sandbox) holding what each tool
step printed, for a tool whose transcript is its output."""
_TOOL_OUTPUT_LIMIT = 4 * TAIL_BYTES


def output_of(proc: ProcResult) -> tuple[bytes, str | None]:
    """What a check or setup printed (stdout and stderr as one stream, see `run_step`'s
    `merge_stderr`; stderr after stdout when they were apart), and what was cut."""
    data = proc.stdout_tail + proc.stderr_tail
    sizes = (("stdout", proc.stdout_bytes, proc.stdout_tail), ("stderr", proc.stderr_bytes,
                                                                proc.stderr_tail))
    cut = [(name, size) for name, size, tail in sizes if size > len(tail)]
    if not cut:
        return data, None
    said = " and ".join(f"{name} ({size} bytes)" for name, size in cut)
    return data, (f"It printed more than {TAIL_BYTES // 1024} KiB on {said}: only the last "
                  f"{TAIL_BYTES // 1024} KiB were kept.")


def write_tool_output(cwd: Path, name: str, proc: ProcResult) -> None:
    """Append what a tool step printed to its trial's room (only a trial's: a judge's copy has
    none). Called once the step ended, so nothing of the tool can write it any more."""
    base = Room.of(cwd).base
    if not base.is_dir() or base.is_symlink() or not (proc.stdout_tail or proc.stderr_tail):
        return
    text = (f"== {name}: stdout ==\n".encode() + proc.stdout_tail
            + f"\n== {name}: stderr ==\n".encode() + proc.stderr_tail + b"\n")
    try:
        fd = os.open(base / TOOL_OUTPUT, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW,
                     0o600)
    except OSError:
        return
    with os.fdopen(fd, "ab") as f:
        f.write(text)


def read_tool_output(clone: Path) -> bytes:
    """What the trial's tool steps printed (`write_tool_output`), its last bytes; b"" if none."""
    try:
        fd = os.open(Room.of(clone).base / TOOL_OUTPUT, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return b""
    with os.fdopen(fd, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - _TOOL_OUTPUT_LIMIT))
        return f.read()


class Keeper:
    """Keeps a run's evidence: `keep` writes one piece and gives its event."""

    def __init__(self, store: EvidenceStore, clock: Callable[[], datetime],
                 env: Mapping[str, str] | None = None) -> None:
        self.store, self.clock = store, clock
        self.env = os.environ if env is None else env

    def keep(self, step: str, kind: Kind, data: bytes, *, cut: str | None = None,
             scorer: str | None = None) -> EvidenceKept | None:
        """Keep `data` (withheld values redacted) as `kind` of `step`; None when it could not be
        written."""
        clean, found = redact(data, self.env, WITHHELD)
        try:
            sha = self.store.put(clean)
        except OSError:
            return None
        return EvidenceKept(step=step, kind=kind, sha256=sha, size=len(clean), scorer=scorer,
                            cut=cut, redacted=found, at=self.clock())

    def output(self, step: str, kind: Kind, proc: ProcResult | None) -> list[EvidenceKept]:
        """A check's or setup's output as evidence ([] when it did not run)."""
        if proc is None:
            return []
        data, cut = output_of(proc)
        got = self.keep(step, kind, data, cut=cut)
        return [got] if got else []

    def diff(self, step: str, read: Callable[[], bytes]) -> list[EvidenceKept]:
        """The trial's diff (`read` is the safe path), its first DIFF_LIMIT bytes."""
        data = read()
        cut = None
        if len(data) > DIFF_LIMIT:
            cut = (f"The diff is {len(data)} bytes; only its first {DIFF_LIMIT // 1024} KiB were "
                   "kept.")
            data = data[:DIFF_LIMIT]
        got = self.keep(step, "diff", data, cut=cut)
        return [got] if got else []

    def transcript(self, step: str, session: bytes, printed: bytes,
                   limit: int) -> list[EvidenceKept]:
        """The CLI's session files when it kept any, else what its steps printed."""
        data = session or printed
        if not data:
            return []
        cut = (f"Only the last {limit // 1024} KiB were kept." if len(data) >= limit and session
               else None)
        got = self.keep(step, "transcript", data, cut=cut)
        if got is not None and not session:
            got = msgspec.structs.replace(got, printed=True)
        return [got] if got else []
