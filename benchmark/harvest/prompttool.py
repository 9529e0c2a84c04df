"""`--prompt-tool`: an agent CLI the team already uses writes a draft's prompt, in armbench's
sandbox, from what `suites.draftprompt.prompt_tool_request` gives it (the message, the changed
files' names, the failing test's output; never the diff nor the project's code: it runs in an
empty folder). Its answer is kept without any line the fix added."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from armbench.benchmark.agents import builtin_tools
from armbench.benchmark.trials.workspace import remove_tree
from armbench.edge.proc import WITHHELD
from armbench.edge.sandbox import Sandbox
from armbench.engine.protocol import Lease
from armbench.ledger.errors import ArmbenchError, Refusal
from armbench.suites.draftprompt import without_leaks

__all__ = ["PROMPT_TOOLS", "PromptToolFailed", "ask_prompt_tool"]

PROMPT_TOOLS = ("claude", "codex", "opencode", "gemini")
_TIMEOUT_S = 300


class PromptToolFailed(ArmbenchError):
    """The prompt tool did not answer with a prompt (exit 1); nothing was written."""

    code = "prompt_tool_failed"


def ask_prompt_tool(name: str, request: str, added: Sequence[str], *, sandbox: Sandbox) -> str:
    """The tool's prompt for the draft, without a line the fix added."""
    if name not in PROMPT_TOOLS:
        raise Refusal(f"--prompt-tool is {name!r}; expected one of {', '.join(PROMPT_TOOLS)}.",
                      code="invalid_inputs")
    root = Path(tempfile.mkdtemp(prefix="armbench-prompt-"))
    try:
        tool = builtin_tools(root / "scratch", sandbox).get(name)
        if tool is None:
            raise Refusal(f"--prompt-tool {name}: `{name}` is not on PATH. Install it, or leave "
                          "--prompt-tool out to keep the drafted prompt.", code="tool_unavailable")
        folder = root / "clones" / "prompt"
        folder.mkdir(parents=True)
        lease = Lease(run="draft", step="draft.prompt", lease="draft-prompt", kind="prompt", tool=name,
                      prompt=request, cwd=str(folder), withhold=list(WITHHELD), timeout_s=_TIMEOUT_S,
                      expires_at=datetime.now(UTC) + timedelta(seconds=_TIMEOUT_S))
        report, reading = tool.run_reading(lease, cancel=threading.Event())
    finally:
        remove_tree(root)
    answer = without_leaks(reading.final or "", added).strip()
    if report.outcome != "succeeded" or not answer:
        cause = report.message or report.cause or "no text"
        raise PromptToolFailed(f"--prompt-tool {name} gave no prompt ({cause}); nothing was written. "
                               "Leave --prompt-tool out to keep the drafted prompt.")
    return answer + "\n"
