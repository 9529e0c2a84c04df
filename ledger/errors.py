"""armbench's one error root, grouped by layer.

Every error a person can cause carries a code (stable, machine-readable, in the envelope) and
a message saying what was expected, what was found, where, and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "ArmbenchError",
    "ConcurrencyConflict",
    "DomainError",
    "EdgeFailure",
    "LeaseRuleBroken",
    "LedgerError",
    "LedgerKeyProblem",
    "Refusal",
    "UnknownLease",
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


class LedgerError(ArmbenchError):
    """The ledger could not be read or written."""

    code = "ledger_error"


class ConcurrencyConflict(LedgerError):
    """Another writer appended to the stream first: reload and decide again."""

    code = "concurrency_conflict"


class LeaseRuleBroken(LedgerError):
    """An append the lease rule refuses: a report or a check's result that no lease holds, or
    a second one under the same lease."""

    code = "lease_rule_broken"


class LedgerKeyProblem(LedgerError):
    """The ledger key cannot be read or made (its file is unreadable, too short, too open)."""

    code = "ledger_key"


class DomainError(ArmbenchError):
    """A command the current state does not allow."""

    code = "domain_error"


class UnknownLease(DomainError):
    """A report for a lease the run does not hold (expired, or never given)."""

    code = "unknown_lease"


class EdgeFailure(ArmbenchError):
    """An effect at the edge failed (git, a process, a file)."""

    code = "edge_failure"
