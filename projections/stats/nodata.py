"""The answer a statistic gives when it has nothing to work on."""

from __future__ import annotations

import msgspec

__all__ = ["NoData"]


class NoData(msgspec.Struct, frozen=True, kw_only=True, tag="no_data"):
    """Too little data for the statistic: say so instead of returning a number."""

    reason: str
    """Why there is no answer, e.g. "no paired trials"."""
