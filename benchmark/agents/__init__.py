"""The agents a trial's arm can name as its tool: the built-in CLIs (claude, codex, opencode,
gemini) and a team's command tool (`command.py`). May import `benchmark.trials` only."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from armbench.benchmark.agents.base import CliAdapter, Reading
from armbench.benchmark.agents.claude import ClaudeCode
from armbench.benchmark.agents.codex import Codex
from armbench.benchmark.agents.gemini import Gemini
from armbench.benchmark.agents.once import tool_version
from armbench.benchmark.agents.opencode import OpenCode
from armbench.edge.homelayout import HomeLayout
from armbench.edge.sandbox import Sandbox

__all__ = ["ADAPTERS", "LAYOUTS", "CliAdapter", "Reading", "builtin_tools", "tool_version"]

ADAPTERS: tuple[type[CliAdapter], ...] = (ClaudeCode, Codex, OpenCode, Gemini)
LAYOUTS: dict[str, HomeLayout] = {cls.name: cls.layout for cls in ADAPTERS}
"""Each built-in CLI's places in a home, as its adapter declares them: what delivery, user scope
and transcripts read."""


def builtin_tools(scratch: Path, sandbox: Sandbox, path: str | None = None) -> dict[str, CliAdapter]:
    """The adapters whose binary is on PATH; a missing one is left out, so its trials are not_run."""
    search = path if path is not None else os.environ.get("PATH", "")
    found = {cls.name: shutil.which(cls.name, path=search) for cls in ADAPTERS}
    return {cls.name: cls(exe, scratch, sandbox) for cls in ADAPTERS if (exe := found[cls.name])}
