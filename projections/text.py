"""Text from outside armbench (a tool's usage file or output, a team file) made safe to show.

A tool or a team file can hold any character. Before such a string reaches a terminal or a
Markdown table it passes through here: every character Python does not call printable (a control
character such as an escape sequence's ESC or a bell, a Unicode format character such as a
bidirectional override, a line separator, a space other than ` `) is shown as a visible escape
such as `\\x1b`, so nothing is interpreted; a line break or a tab becomes a space. In a table
cell `\\` and `|` are escaped too, so a row keeps its cells.
"""

from __future__ import annotations

__all__ = ["cell", "plain", "printable"]

_SPACES = {"\n": " ", "\r": " ", "\t": " "}


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _safe(ch: str) -> str:
    if ch.isprintable():
        return ch
    return _SPACES.get(ch) or _escape(ch)


def plain(text: object) -> str:
    """One line a terminal shows as written: characters that are not printable escaped, line
    breaks and tabs as spaces."""
    s = str(text)
    return s if s.isprintable() else "".join(map(_safe, s))


def printable(text: object) -> str:
    """Like `plain`, but line breaks (`\\n`) are kept: for a message of several lines."""
    return "\n".join(plain(line) for line in str(text).split("\n"))


def cell(text: object) -> str:
    """A Markdown table cell: `plain`, with `\\` and `|` escaped so the row keeps its cells."""
    return plain(text).replace("\\", "\\\\").replace("|", "\\|")
