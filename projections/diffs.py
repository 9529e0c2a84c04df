"""A kept diff split file by file, for the dashboard's trial view. Pure: it reads the text it is
given."""

from __future__ import annotations

import re

import msgspec

__all__ = ["FileDiff", "files_of"]

_HEAD = re.compile(r"^diff --git a/(.*) b/(.*)$")


class FileDiff(msgspec.Struct, frozen=True, kw_only=True):
    """One file's part of a unified diff: its path and its lines (headers included)."""

    path: str
    lines: list[str]
    added: int
    removed: int


def files_of(diff: str) -> list[FileDiff]:
    """The diff's files in order; text before the first `diff --git` (none from git) is a file
    named `(diff)`."""
    out: list[FileDiff] = []
    path, lines = "", list[str]()

    def close() -> None:
        if lines:
            body = [ln for ln in lines if not ln.startswith(("+++", "---"))]
            out.append(FileDiff(path=path or "(diff)", lines=list(lines),
                                added=sum(1 for ln in body if ln.startswith("+")),
                                removed=sum(1 for ln in body if ln.startswith("-"))))

    for line in diff.splitlines():
        head = _HEAD.match(line)
        if head:
            close()
            path, lines = head.group(2), []
        lines.append(line)
    close()
    return out
