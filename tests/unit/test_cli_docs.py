"""The CLI reference is generated from --help, and says every command."""

from __future__ import annotations

from pathlib import Path

from armbench.cli.docs import command_names, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def test_the_cli_reference_is_not_stale() -> None:
    assert DOC.read_text() == render(), \
        "docs/cli.md is stale: run `python -m armbench.cli.docs > docs/cli.md`"


def test_every_command_is_documented() -> None:
    text = DOC.read_text()
    missing = [name for name in command_names() if f"## armbench {name}\n" not in text]
    assert missing == []
