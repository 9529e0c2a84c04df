"""A harvest's state: every candidate already tried, kept beside the tasks in the output folder.

A small JSON file rather than ledger events: a harvest is not a run (no plan, no lease, no trials
to replay), needs no `armbench init`, and its state belongs to the folder it fills: delete the
file (or a task) and the next harvest tries again. Written whole after each candidate, through a
temporary file and a rename, so a stopped harvest keeps every verdict it reached."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import msgspec

from armbench.ledger.errors import Refusal

__all__ = ["STATE_FILE", "Tried", "HarvestState"]

STATE_FILE = ".armbench-harvest.json"


class Tried(msgspec.Struct, frozen=True, kw_only=True):
    """One candidate's verdict, as the table shows it."""

    commit: str
    subject: str
    verdict: str
    """`valid`, `passes before`, `fails after`, `could not run`, `flaky`, `not drafted`, or
    `weak check` (valid, but below `--min-strength`: not written)."""
    detail: str
    """The try's sentence, or why the commit could not be drafted."""
    seconds: float
    """How long drafting and trying it took."""
    file: str | None = None
    """The task file written for a valid candidate, relative to the output folder."""
    strength: float | None = None
    """With `--strength`, its check's strength (killed / decided mutants of the fix)."""
    survivors: list[str] = []
    """With `--strength`, the mutants its check passed (`kind at file:line`)."""
    earlier: bool = False
    """Tried by an earlier harvest into the same folder (not tried again)."""


class _File(msgspec.Struct, kw_only=True):
    version: int = 1
    tried: dict[str, Tried] = {}


class HarvestState:
    """The state file of one output folder; `kept` is safe from several lanes."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / STATE_FILE
        self._lock = threading.Lock()
        self._file = _File()
        if self.path.exists():
            try:
                self._file = msgspec.json.decode(self.path.read_bytes(), type=_File)
            except msgspec.DecodeError as error:
                raise Refusal(f"Expected {self.path} to be the state armbench task harvest writes; "
                              f"found {error}. Delete it to try every candidate again.",
                              code="harvest_state_invalid") from None

    def tried(self, commit: str) -> Tried | None:
        """The earlier verdict of a commit, if any."""
        return self._file.tried.get(commit)

    def kept(self, row: Tried) -> Tried:
        """Keep a verdict and write the file at once (from any lane); the verdict."""
        with self._lock:
            self._file.tried[row.commit] = row
            temporary = self.path.with_name(f"{STATE_FILE}.{os.getpid()}.tmp")
            temporary.write_bytes(msgspec.json.format(msgspec.json.encode(self._file)))
            os.replace(temporary, self.path)
        return row
