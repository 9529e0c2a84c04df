"""The git CLI for tests: no user or system configuration and a fixed identity, so the
repositories a test makes are the same on every machine (`GIT_ENV`, `git`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["GIT_ENV", "git"]

GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
    """Run git in `cwd`; its stdout, stripped."""
    return subprocess.run(["git", *args], cwd=cwd, env=env or GIT_ENV, check=check,
                          capture_output=True, text=True).stdout.strip()
