"""What a judge is asked and how its answer is read. Pure: texts in, texts out.

The prompt is built from the scorer's rubric (a correctness scorer's carries the task's
successCriteria), the task's prompt, the diff from startingCommit and the tool's transcript (each
capped). The answer is the last JSON object in the judge's final message:
`{"label": "<one of the scorer's labels>", "reason": "..."}`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ledger.events import PlannedScorer

__all__ = ["DIFF_CAP", "TRANSCRIPT_CAP", "Answer", "NoLabel", "cache_key", "judge_prompt",
           "read_answer"]

DIFF_CAP = 200_000
"""The most characters of the diff a judge's prompt carries (the rest is cut, and said so)."""
TRANSCRIPT_CAP = 60_000
"""The most characters of the tool's transcript a judge's prompt carries (its last ones)."""


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    """A label the judge gave, with its reason."""

    label: str
    reason: str


class NoLabel(msgspec.Struct, frozen=True, kw_only=True):
    """Why the judge's answer gave no label: a cause word and a sentence."""

    cause: str
    message: str


def _cap(text: str, limit: int, *, tail: bool = False) -> str:
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    if tail:
        return f"[... {cut} earlier characters cut ...]\n{text[-limit:]}"
    return f"{text[:limit]}\n[... {cut} more characters cut ...]"


def judge_prompt(scorer: PlannedScorer, task_prompt: str, diff: str,
                 transcript: str | None) -> str:
    """The judge's prompt for one scorer and one trial."""
    labels = "\n".join(f'- "{lb.value}" (score {lb.score:g})' for lb in scorer.labels)
    parts = [
        "You are judging the work of a coding agent. Do not change any file: read, then answer.",
        f"## Rubric ({scorer.name})\n\n{scorer.text}",
        f"## Labels\n\nAnswer with exactly one of these labels:\n{labels}",
        f"## The task the agent was given\n\n{task_prompt}",
        f"## The agent's change (git diff from the starting commit, commits included)\n\n"
        f"```diff\n{_cap(diff, DIFF_CAP) or '(no change)'}\n```",
    ]
    if transcript:
        parts.append(f"## The agent's session transcript (its last part)\n\n"
                     f"{_cap(transcript, TRANSCRIPT_CAP, tail=True)}")
    parts.append('## Your answer\n\nEnd your final message with one JSON object on its own line: '
                 '{"label": "<one of the labels>", "reason": "<one or two sentences>"}')
    return "\n\n".join(parts) + "\n"


def _objects(text: str) -> list[Any]:
    """Every JSON object in the text, in order, each decoded where it starts."""
    decoder = json.JSONDecoder()
    found, i = [], 0
    while (i := text.find("{", i)) != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        found.append(value)
        i = end
    return found


def read_answer(text: str | None, labels: Sequence[str]) -> Answer | NoLabel:
    """The label in the judge's final message, or why there is none."""
    if not text or not text.strip():
        return NoLabel(cause="no_answer", message="The judge's final message was empty.")
    objects = [o for o in _objects(text) if isinstance(o, dict)]
    if not objects:
        return NoLabel(cause="not_json", message="The judge's final message holds no JSON object: "
                       f"{text.strip()[:200]!r}.")
    last = objects[-1]
    label = last.get("label")
    if not isinstance(label, str):
        return NoLabel(cause="no_label", message="The judge's last JSON object has no text "
                       f"`label`: {json.dumps(last)[:200]}.")
    if label not in labels:
        return NoLabel(cause="unknown_label", message=f'The judge answered "{label[:80]}", which is '
                       f"not one of the scorer's labels ({', '.join(labels)}).")
    reason = last.get("reason")
    return Answer(label=label, reason=reason[:4000] if isinstance(reason, str) else "")


def cache_key(rubric_hash: str, judge: Mapping[str, str | None], diff: bytes,
              transcript: bytes) -> str:
    """The judge call's key: the same rubric, judge agent, diff and transcript give the same
    label, so `resume` and a rerun of the step never pay for it twice."""
    digest = hashlib.sha256()
    for part in (rubric_hash, json.dumps(dict(judge), sort_keys=True),
                 hashlib.sha256(diff).hexdigest(), hashlib.sha256(transcript).hexdigest()):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()
