"""Sizes as suite files write them (`512M`, `4G`, `1.5G`, `2GiB`), parsed to bytes."""

from __future__ import annotations

import re

__all__ = ["SIZE_EXAMPLES", "SIZE_PATTERN", "format_size", "parse_size"]

SIZE_PATTERN = r"^\d+(\.\d+)?([KMGT](i?B)?)?$"
SIZE_EXAMPLES = ("512M", "4G", "1.5G")
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_SIZE = re.compile(r"(\d+(?:\.\d+)?)([KMGT])?(?:i?B)?")


def parse_size(text: str) -> int:
    """Bytes of `512M`, `4G`, `1.5G` or `2GiB` (units of 1024); ValueError saying what is wrong."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"expected a size such as 512M or 4G, found `{text}`")
    size = int(float(match.group(1)) * _UNITS[match.group(2) or ""])
    if size < 1024 * 1024:
        raise ValueError(f"expected a size of at least 1M, found `{text}`")
    return size


def format_size(size: int) -> str:
    """The shortest whole spelling of a byte count: `4G`, `512M`, `1000`."""
    for unit in ("T", "G", "M", "K"):
        if size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return str(size)
