"""The trial outcomes the statistics read: one arm's trials, or two arms' trials paired."""

from __future__ import annotations

import msgspec

__all__ = ["PairedOutcome", "TrialOutcome"]


class TrialOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """One trial of one arm. A trial the agent failed (crash, timeout) has passed=False."""

    task: str
    """Task id (the same task content in both arms)."""
    repetition: int
    """Repetition index of the task within the arm, e.g. 0..K-1."""
    passed: bool
    """Whether the trial's checks passed."""


class PairedOutcome(msgspec.Struct, frozen=True, kw_only=True):
    """One (task, repetition) run by both the new and the old run, for the regression gate."""

    task: str
    """Task id (the same task content in both runs)."""
    repetition: int
    """Repetition index, the same in both runs."""
    new_passed: bool
    """Whether the new run's trial passed."""
    old_passed: bool
    """Whether the old run's trial passed."""
