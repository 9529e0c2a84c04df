"""Agent sessions' local files, found by id where each CLI keeps them on this machine (read only).

Claude Code: `$CLAUDE_CONFIG_DIR` or `~/.claude`, then `projects/<cwd-slug>/<id>.jsonl`. Codex:
`$CODEX_HOME` or `~/.codex`, then `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from armbench.ledger.errors import Refusal

__all__ = ["find_session_file"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{7,63}$")


def _roots(platform: str) -> tuple[Path, str]:
    home = Path(os.environ.get("HOME") or Path.home())
    if platform == "claude-code":
        base = Path(os.environ.get("CLAUDE_CONFIG_DIR") or home / ".claude")
        return base / "projects", "*/{id}.jsonl"
    base = Path(os.environ.get("CODEX_HOME") or home / ".codex")
    return base / "sessions", "*/*/*/rollout-*-{id}.jsonl"


def find_session_file(platform: str, session_id: str) -> Path:
    """The session's file, or a Refusal naming where armbench looked."""
    if not _ID.match(session_id):
        raise Refusal(f"Expected a session id of letters, digits and `-` (as the CLI prints it), "
                      f"found {session_id!r}.", code="invalid_inputs")
    folder, pattern = _roots(platform)
    found = sorted(folder.glob(pattern.format(id=session_id))) if folder.is_dir() else []
    if len(found) != 1:
        what = "no file" if not found else f"{len(found)} files"
        raise Refusal(f"Expected one {platform} session file for {session_id} under {folder} "
                      f"({pattern.format(id=session_id)}); found {what}. Run this on the machine and "
                      "as the user the session ran as, or name a session the CLI kept (not one run "
                      "with --no-session-persistence or --ephemeral).", code="session_not_found")
    return found[0]
