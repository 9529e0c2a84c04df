"""What a team file or a tool wrote, shown safely: one line, nothing a terminal obeys, a cell
that keeps its row."""

from __future__ import annotations

import pytest

from armbench.projections.text import cell, plain, printable


@pytest.mark.parametrize(("raw", "shown"), [
    ("claude-opus-4-8", "claude-opus-4-8"),
    ("\x1b[2J\x1b[31mred", "\\x1b[2J\\x1b[31mred"),
    ("a\nb\r\nc\td", "a b  c d"),
    ("bell\x07 and del\x7f", "bell\\x07 and del\\x7f"),
    ("\u202eevil", "\\u202eevil"),  # a right-to-left override
    ("line\u2028sep", "line\\u2028sep"),
    ("naïve 模型", "naïve 模型"),  # printable text stays
    ("no-break\u00a0space", "no-break\\xa0space"),
])
def test_plain_escapes_what_a_terminal_would_obey_and_keeps_the_rest(raw: str, shown: str) -> None:
    assert plain(raw) == shown


def test_printable_keeps_line_breaks_and_escapes_the_rest() -> None:
    assert printable("first\x1b[1m\nsecond\r") == "first\\x1b[1m\nsecond "


@pytest.mark.parametrize(("raw", "shown"), [
    ("a|b", "a\\|b"),
    ("a\\|b", "a\\\\\\|b"),  # a backslash of its own cannot escape the escape
    ("end\\", "end\\\\"),
    ("\x1b|", "\\\\x1b\\|"),
])
def test_cell_escapes_pipes_and_backslashes(raw: str, shown: str) -> None:
    assert cell(raw) == shown
