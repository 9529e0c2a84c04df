"""Durations as suite files write them (`90s`, `8m`, `6h`, `1h30m`), parsed to whole seconds."""

from __future__ import annotations

import re

__all__ = ["DURATION_EXAMPLES", "DURATION_PATTERN", "format_duration", "parse_duration"]

DURATION_PATTERN = r"^(?=\d)(?:\d{1,9}h)?(?:\d{1,9}m)?(?:\d{1,9}s)?$"
DURATION_EXAMPLES = ("90s", "8m", "6h", "1h30m")
_PARTS = re.compile(r"(?:(\d{1,9})h)?(?:(\d{1,9})m)?(?:(\d{1,9})s)?")


def parse_duration(text: str) -> int:
    """Whole seconds of `90s`, `8m`, `6h` or `1h30m`; ValueError saying what is wrong otherwise."""
    match = _PARTS.fullmatch(text)
    if not text or match is None:
        raise ValueError(_explain(text))
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total == 0:
        raise ValueError(f"expected a duration longer than 0s, found `{text}`")
    return total


def format_duration(seconds: int) -> str:
    """The shortest suite-file spelling of a number of seconds, such as `1h30m`."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n]
    return "".join(parts) or "0s"


def _explain(text: str) -> str:
    expected = "expected a duration such as 90s, 8m, 6h or 1h30m"
    if text.isdigit():
        return f"{expected}, found `{text}` with no unit; write `{text}s` or `{text}m`"
    if re.fullmatch(r"[\d.]+[hms]", text):
        return f"{expected}, found `{text}`; use whole numbers, such as `1h30m` for an hour and a half"
    if re.fullmatch(r"(\d+[hms])+", text.replace(" ", "")):
        return f"{expected}, found `{text}`; write each unit once, largest first, with no spaces"
    return f"{expected} (whole numbers with h, m or s, largest first), found `{text}`"
