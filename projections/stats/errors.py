"""The error the statistics raise for input they cannot use."""

from __future__ import annotations

from armbench.ledger.errors import Refusal

__all__ = ["StatisticsInputError"]


class StatisticsInputError(Refusal, ValueError):
    """A count, level or plan a statistic cannot use; the message says what was expected and found."""

    code = "statistics_input_error"
