"""A drafted task's title, prompt and id, from the fix commit's message (pure).

The prompt is a request, never the solution: it is made of the message's words (and the linked
issue's text, when the team has it on disk), with every line that holds a line the fix added
left out, code blocks and diff lines dropped, and the commit's trailers removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["CLOSING", "draft_prompt", "draft_title", "issue_refs", "prompt_tool_request", "slug",
           "telling_lines", "without_leaks"]

_PREFIX = re.compile(r"^\s*(?:\[[^\]]*\]\s*)?(?:[A-Za-z]+(?:\([^)]*\))?!?:\s*)?")
_REF = re.compile(r"(?:^|[\s(])#(\d+)\b")
_REF_TEXT = re.compile(r"\(\s*(?:[A-Za-z]+\s+)?#\d+\s*\)"
                       r"|(?:\b(?:[Ff]ix(?:es|ed)?|[Cc]loses?|[Rr]esolves?)\s+)?#\d+\b")
_TRAILER = re.compile(r"^(?:Signed-off|Co-authored|Reviewed|Acked|Tested|Reported|Suggested|Helped)-by:"
                      r"|^(?:Change-Id|Cc):", re.IGNORECASE)
CLOSING = ("Make the change this describes in the project's code (for a bug: fix it). Keep the "
            "existing tests passing; tests you do not see check the result.")
_TELLING = 6
"""An added line shorter than this (stripped) says too little to leak a fix (`}`, `pass`)."""


def telling_lines(added: Sequence[str]) -> list[str]:
    """The fix's added lines long enough to give the solution away, stripped."""
    kept = {line.strip() for line in added}
    return sorted(t for t in kept if len(t) >= _TELLING and re.search(r"[A-Za-z0-9]", t))


def draft_title(subject: str, fallback: str) -> str:
    """The subject without its `fix(scope):` prefix, `(#12)` references and final period."""
    title = _REF_TEXT.sub(" ", _PREFIX.sub("", subject, count=1)).strip(" \t.,;:-")
    title = re.sub(r"\s+", " ", title)
    return title or fallback


def draft_prompt(subject: str, body: str, added: Sequence[str], *, issues: Sequence[str] = (),
                 fallback: str) -> tuple[str, str]:
    """(title, prompt): the message as a request, with no line the fix added."""
    leaks = telling_lines(added)
    title = draft_title(subject, fallback)
    if _leaks(subject, leaks) or _leaks(f"{title}.", leaks):
        title = fallback
    parts = [f"{title}."]
    for text in (body, *issues):
        kept = _kept(text, leaks)
        if kept:
            parts.append(kept)
    parts.append(CLOSING)
    return title, "\n\n".join(parts) + "\n"


def prompt_tool_request(subject: str, body: str, added: Sequence[str], *, changed: Sequence[str],
                        failing_output: str) -> str:
    """What `--prompt-tool` is asked: the message (without a line the fix added), the names of
    the files the fix changed and what the hidden test printed before the fix; never the diff."""
    message = "\n\n".join(p for p in (without_leaks(subject, added), without_leaks(body, added)) if p)
    output = "\n".join(failing_output.strip().splitlines()[-60:])
    return ("Write the prompt of a coding task for an AI agent, from a bug fix in a project's history. "
            "The agent starts from the code before the fix, and a test it never sees must pass after "
            "its change. Write a request as a team member would: what is wrong or missing, and what "
            "should happen instead. Do not give the solution: no code, no diff, no test names. Answer "
            "with the prompt's text only.\n\n"
            f"The fix's commit message:\n{message or '(none)'}\n\n"
            f"The files the fix changed: {', '.join(changed) or '(none)'}\n\n"
            f"What the hidden test printed before the fix:\n{output or '(nothing)'}\n")


def without_leaks(text: str, added: Sequence[str]) -> str:
    """`text` without code, diff lines, trailers or lines holding a telling added line."""
    return _kept(text, telling_lines(added))


def issue_refs(subject: str, body: str) -> list[str]:
    """The issue numbers the message names (`#12`, `Fixes #12`), in order, once each."""
    seen: list[str] = []
    for number in _REF.findall(f"{subject}\n{body}"):
        if number not in seen:
            seen.append(number)
    return seen


def slug(title: str, fallback: str) -> str:
    """A task id from a title: lowercase words joined by `-`, at most 48 characters."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    out = ""
    for word in words:
        if len(out) + len(word) + 1 > 48:
            break
        out = f"{out}-{word}" if out else word
    return out or fallback


def _kept(text: str, leaks: Sequence[str]) -> str:
    """The text's paragraphs without code, diff lines, trailers or lines holding an added line."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced or line.startswith(("    ", "\t", "+", "-", ">")) and not line.startswith("- "):
            continue
        if _TRAILER.match(line) or _leaks(line, leaks):
            continue
        lines.append(line.rstrip())
    joined = "\n".join(lines).strip()
    return re.sub(r"\n{3,}", "\n\n", joined)


def _leaks(text: str, leaks: Sequence[str]) -> bool:
    return any(leak in text for leak in leaks)
