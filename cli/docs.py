"""Generate docs/cli.md from the commands' own --help: `python -m armbench.cli.docs > docs/cli.md`."""

from __future__ import annotations

import os
import sys

from typer.testing import CliRunner

__all__ = ["command_names", "render"]


def command_names() -> list[str]:
    """Every command the app has, in the order they were added; a group's as `group command`."""
    from armbench.cli.main import app

    names = [c.name or (c.callback.__name__ if c.callback else "") for c in app.registered_commands]
    for group in app.registered_groups:
        sub = group.typer_instance
        if sub is not None:
            names += [f"{group.name or sub.info.name} {c.name or c.callback.__name__}"
                      for c in sub.registered_commands if c.callback is not None]
    return names


def _help(args: list[str]) -> str:
    from armbench.cli.main import app

    os.environ.update(COLUMNS="100", NO_COLOR="1", TERM="dumb")
    result = CliRunner().invoke(app, [*args, "--help"], prog_name="armbench", color=False)
    return "\n".join(line.rstrip() for line in result.output.splitlines()).strip()


def render() -> str:
    """The whole reference page."""
    parts = ["# armbench command reference", "",
             "Generated from each command's `--help` by `python -m armbench.cli.docs > docs/cli.md`;",
             "a test fails when this page is stale.", "", "```", _help([]), "```"]
    for name in command_names():
        parts += ["", f"## armbench {name}", "", "```", _help(name.split()), "```"]
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
