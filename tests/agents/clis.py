"""The real agent CLIs for the tests: installed pinned, wrapped to keep what they print, isolated.

Each CLI runs through a small wrapper, first on PATH, that execs the real binary and copies its
stdout to a log folder, so a test can compare the record with what the CLI itself printed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from agents.world import IDENTITY

__all__ = ["MARKER", "NAMES", "WITHHELD", "Clis", "agent_env", "install"]

REPO = Path(__file__).resolve().parents[2]
PREFIX_BIN = REPO / ".cache" / "agent-clis" / "node_modules" / ".bin"
NAMES = ("claude", "codex", "opencode", "gemini")
WITHHELD = ("GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "GL_TOKEN", "CI_JOB_TOKEN", "SSH_AUTH_SOCK",
            "GIT_ASKPASS", "SSH_ASKPASS")
MARKER = "AGENT_TEST_MARKER"
_OWN_PREFIXES = ("ARMBENCH_", "GIT_", "ANTHROPIC_", "CLAUDE", "CODEX_", "OPENAI_", "GEMINI_", "GOOGLE_",
                 "OPENCODE_", "XDG_")
_WRAPPER = """#!/bin/bash
# Runs the real {name} and keeps a copy of what it prints on stdout (except for --version).
set -o pipefail
[ "$1" = "--version" ] && exec {real} "$@"
{real} "$@" | tee "{logs}/{name}-$(date +%s%N)-$$.out"
"""


def install() -> str:
    """Run scripts/install-agent-clis.sh (fast when the pinned versions are there); its messages."""
    done = subprocess.run(["bash", str(REPO / "scripts" / "install-agent-clis.sh")], capture_output=True,
                          text=True, timeout=600)
    return done.stderr.strip()


class Clis:
    """Where each CLI was found, and a folder of wrappers that log their stdout."""

    def __init__(self, root: Path, install_log: str) -> None:
        self.install_log = install_log
        self.real = {n: p for n in NAMES if (p := _find(n))}
        self.bin, self.logs = root / "bin", root / "logs"
        self.bin.mkdir(parents=True)
        self.logs.mkdir()
        for name, real in self.real.items():
            wrapper = self.bin / name
            wrapper.write_text(_WRAPPER.format(name=name, real=real, logs=self.logs))
            wrapper.chmod(0o755)

    def missing(self, name: str) -> str | None:
        """Why a CLI cannot be tested, or None."""
        if name in self.real:
            return None
        return (f"{name} is neither in {PREFIX_BIN} nor on PATH: scripts/install-agent-clis.sh could "
                f"not install it. Its output: {self.install_log or '(none)'}")

    def printed(self, name: str) -> list[str]:
        """Everything the wrapped CLI printed on stdout, one string per launch."""
        return [p.read_text() for p in sorted(self.logs.glob(f"{name}-*.out"))]


def _find(name: str) -> Path | None:
    local = PREFIX_BIN / name
    if local.exists():
        return local
    found = shutil.which(name)
    return Path(found) if found else None


def agent_env(home: Path, url: str, wrappers: Path, armbench: Path) -> dict[str, str]:
    """`armbench run`'s environment: isolated homes, CLIs at the mock, no retries, the withheld set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_OWN_PREFIXES)} | IDENTITY
    codex_home, gemini = home / ".codex", home / ".gemini"
    for folder in (codex_home, gemini):
        folder.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        "[analytics]\nenabled = false\n\n[features]\nplugins = false\n\n"
        "[shell_environment_policy]\ninherit = \"all\"\nignore_default_excludes = true\n\n"
        "[model_providers.armbench]\nrequest_max_retries = 0\nstream_max_retries = 0\n")
    (gemini / "settings.json").write_text(json.dumps({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "maxAttempts": 1}}))
    env.update({
        "HOME": str(home), "CODEX_HOME": str(codex_home), "ARMBENCH_HOME": str(home / ".armbench"),
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state"),
        "PATH": os.pathsep.join([str(wrappers), str(armbench.parent), os.environ.get("PATH", "")]),
        "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "mock-key", "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": "mock-key", "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "mock-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "0",
        "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1", "npm_config_registry": "http://127.0.0.1:9/",
        MARKER: "visible-to-agents", "PYTHONDONTWRITEBYTECODE": "1",
        **{name: f"leaked-{name.lower()}" for name in WITHHELD},
    })
    return env
