"""armbench's one error root, grouped by layer.

Every error a person can cause carries a code (stable, machine-readable, in the envelope) and
a message saying what was expected, what was found, where, and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "ArmbenchError",
    "ConcurrencyConflict",
    "DiskFull",
    "DomainError",
    "LedgerUnreachable",
    "EdgeFailure",
    "LeaseRuleBroken",
    "LedgerBusy",
    "LedgerCorrupt",
    "LedgerEmpty",
    "LedgerError",
    "LedgerKeyMismatch",
    "LedgerKeyProblem",
    "LedgerReadOnly",
    "LedgerUnreadable",
    "Refusal",
    "RunQuarantined",
    "RunTampered",
    "StorageFault",
    "UnknownLease",
    "UnknownRun",
]


class ArmbenchError(Exception):
    """The root of every error armbench raises on purpose."""

    code: str = "armbench_error"
    exit_code: int = 1

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class Refusal(ArmbenchError):
    """Bad input or an unmet requirement: nothing was started, nothing lost (exit 2)."""

    code = "refused"
    exit_code = 2


class UnknownRun(Refusal):
    """A run id the ledger does not hold (exit 2): the one place `unknown_run` is raised from."""

    code = "unknown_run"

    def __init__(self, run: str, *, ledger: str = "The ledger", what: str = "run",
                 fix: str = "armbench runs lists them") -> None:
        self.run = run
        """The run id asked for."""
        super().__init__(f"{ledger} has no {what} {run!r} ({fix}).")


class LedgerKeyMismatch(Refusal):
    """A command that writes met a ledger chained with a key this machine lacks (no key here,
    or one with another id): nothing was written, and no key was made."""

    code = "ledger_key_mismatch"


class LedgerError(ArmbenchError):
    """The ledger could not be read or written."""

    code = "ledger_error"


class ConcurrencyConflict(LedgerError):
    """Another writer appended to the stream first: reload and decide again."""

    code = "concurrency_conflict"


class RunTampered(LedgerError):
    """A run's stored events do not hold together under its chain: a row forged without the
    ledger key, edited, removed or unreadable (exit 3). Only that run is refused: commands that
    read other runs go on."""

    code = "run_tampered"
    exit_code = 3

    def __init__(self, run: str, position: int, reason: str) -> None:
        self.run, self.position, self.reason = run, position, reason
        super().__init__(
            f"Run {run}'s log cannot be trusted: its event {position}: {reason}. Nothing of the run "
            f"is shown or folded past that. `armbench verify {run}` says the same; `armbench ledger "
            f"quarantine {run}` sets the run aside (its rows stay in the ledger, unread by every "
            "other command), so the rest of the ledger reads as before.")


class RunQuarantined(LedgerError):
    """A run set aside with `armbench ledger quarantine` (exit 3): its rows are kept, never folded."""

    code = "run_quarantined"
    exit_code = 3

    def __init__(self, run: str, reason: str) -> None:
        self.run, self.reason = run, reason
        super().__init__(
            f"Run {run} was set aside with `armbench ledger quarantine` ({reason}): its events are "
            f"kept in the ledger but no command folds them. `armbench verify {run}` checks them.")


class LeaseRuleBroken(LedgerError):
    """An append the lease rule refuses: a report or a check's result that no lease holds, or
    a second one under the same lease."""

    code = "lease_rule_broken"


class LedgerKeyProblem(LedgerError):
    """The ledger key cannot be read or made (its file is unreadable, too short, too open)."""

    code = "ledger_key"


class StorageFault(LedgerError):
    """The ledger's file or the disk under it failed. SQLite wrote nothing of the failed
    transaction, so nothing already committed is lost; the command stops there (exit 2).

    Raised by `ledger.store.EventStore` for every sqlite3 or file-system failure, so the run
    path can catch `DiskFull` (or any `StorageFault`) and end a run cleanly."""

    code = "ledger_storage"
    exit_code = 2

    def __init__(self, message: str, *, path: str, code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.path = path
        """The file or folder that failed."""


class LedgerCorrupt(StorageFault):
    """The ledger file is not a readable SQLite database: garbage header, truncated, or a
    damaged page."""

    code = "ledger_corrupt"


class LedgerEmpty(StorageFault):
    """The ledger file is empty (0 bytes) while records of its runs exist: opening it as a new
    ledger would orphan them."""

    code = "ledger_empty"


class LedgerUnreadable(StorageFault):
    """The ledger file cannot be opened or read (permissions, a missing disk, an I/O error)."""

    code = "ledger_unreadable"


class LedgerReadOnly(StorageFault):
    """A command that writes met a ledger (or its folder) that cannot be written."""

    code = "ledger_read_only"


class DiskFull(StorageFault):
    """The file system a write needs (the ledger's, or the run's work folder's) is full."""

    code = "disk_full"


class LedgerBusy(StorageFault):
    """Another process held the ledger's write lock past the lock timeout."""

    code = "ledger_locked"


class LedgerUnreachable(StorageFault):
    """A PostgreSQL ledger could not be reached or used: a wrong URL, host, port, database or
    password, or a server that is down."""

    code = "ledger_unreachable"


class DomainError(ArmbenchError):
    """A command the current state does not allow."""

    code = "domain_error"


class UnknownLease(DomainError):
    """A report for a lease the run does not hold (expired, or never given)."""

    code = "unknown_lease"


class EdgeFailure(ArmbenchError):
    """An effect at the edge failed (git, a process, a file)."""

    code = "edge_failure"
