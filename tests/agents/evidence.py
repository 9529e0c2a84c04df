"""What the tests compare a record with: the ledger's reports, the CLI's own output, the agent's `env`."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from agents.clis import MARKER, WITHHELD, Clis
from agents.mock_model import USAGE

__all__ = ["expected_tokens", "leaked", "printed", "prompt_report", "seen_env", "version_of"]


def prompt_report(checkout: Path, step: str) -> dict[str, Any]:
    """The StepReported event of a trial's prompt step, from the ledger."""
    with sqlite3.connect(checkout / ".armbench" / "ledger.sqlite") as db:
        rows = db.execute("SELECT topic, state FROM events ORDER BY rowid").fetchall()
    events = [json.loads(state)["event"] for topic, state in rows if topic == "StepReported"]
    return next(e for e in events if e["step"] == step)


def printed(clis: Clis, name: str, session: str) -> str:
    """What the CLI printed on stdout in the launch whose output names this session."""
    found = [text for text in clis.printed(name) if session in text]
    assert len(found) == 1, f"{len(found)} outputs of {name} name session {session}"
    return found[0]


def version_of(clis: Clis, name: str) -> str:
    """The version the real binary prints for --version."""
    done = subprocess.run([str(clis.real[name]), "--version"], capture_output=True, text=True, timeout=60)
    found = re.search(r"\d+\.\d+\.\d+\S*", done.stdout)
    assert found, done.stdout
    return found.group(0)


def expected_tokens(calls: int, components: tuple[str, ...]) -> dict[str, int]:
    """The tokens `calls` replies of the mock add up to, in armbench's names."""
    return {c: calls * USAGE[c] for c in components}


def seen_env(out: Path, suite: str) -> dict[str, str]:
    """The environment the agent's shell tool saw, as its `env` wrote it outside the clone."""
    text = (out / f"env-{suite}.txt").read_text()
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    env = {k: v for k, v in pairs}
    assert env.get(MARKER) == "visible-to-agents", "the dump is not the agent's environment"
    return env


def leaked(env: dict[str, str]) -> list[str]:
    """The variables holding a withheld variable's test value, under its name or any other."""
    # A tool may set one of those names itself (Gemini CLI sets GIT_ASKPASS and SSH_ASKPASS empty
    # to keep git from prompting); only the value armbench was given would be a leak.
    values = {f"leaked-{name.lower()}" for name in WITHHELD}
    return sorted(k for k, v in env.items() if v in values)
