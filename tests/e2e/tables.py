"""Well-formed Markdown tables: what a printed table must stay, whatever a tool or a team wrote.

`cells` splits a row as GitHub-flavoured Markdown does: a `|` after a backslash is text, and a
backslash escapes the character after it. `assert_well_formed` checks every table in a text: a
delimiter row under each header, every row with the header's number of cells, and no control
character anywhere but the line breaks.
"""

from __future__ import annotations

import unicodedata

__all__ = ["assert_well_formed", "cells"]


def cells(line: str) -> list[str]:
    """The cells of one table row (`| a | b |`), unescaped pipes splitting them."""
    assert line.startswith("|") and line.endswith("|"), line
    found, current, i = [], [], 1
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            current.append(line[i:i + 2])
            i += 2
            continue
        if ch == "|":
            found.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
        i += 1
    assert not "".join(current).strip(), f"text after the last cell: {line!r}"
    return found


def assert_well_formed(text: str) -> None:
    """Every Markdown table in `text` keeps its shape, and no line holds a control character."""
    for number, line in enumerate(text.splitlines(), 1):
        bad = [ch for ch in line if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")]
        assert not bad, f"line {number} holds control characters {bad!r}: {line!r}"
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            i += 1
            continue
        header = cells(lines[i])
        assert i + 1 < len(lines) and set(cells(lines[i + 1])) == {"---"}, lines[i:i + 2]
        assert len(cells(lines[i + 1])) == len(header), lines[i:i + 2]
        i += 2
        while i < len(lines) and lines[i].startswith("|"):
            assert len(cells(lines[i])) == len(header), f"{lines[i]!r} under {header}"
            i += 1
