"""Scorer files (`scorers/<name>.md`, `scorers/<ns>/<name>.md`) and the generated correctness
scorer. Pure: it parses bytes it is given.

A scorer file is Warp's `scorer.md`: YAML front matter between `---` lines (name, description,
labels of 1 to 20 `{value, score, description}`, passingScore, model, and samplingRate, which a
benchmark ignores: every scorer samples every trial there), then the rubric as the body.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping
from typing import Annotated

import msgspec
from msgspec import Meta, Struct

from armbench.suites.diagnostics import Diagnostic, has_errors, sorted_by_line
from armbench.suites.findings import Findings
from armbench.suites.namespaced import reachable, resolve
from armbench.suites.shape import decode_file
from armbench.suites.values import CORRECTNESS_PREFIX, name_problem

__all__ = ["CORRECTNESS_PREFIX", "CORRECTNESS_TEMPLATE", "LABELS_MAX", "ScorerFile", "ScorerLabel",
           "check_scorer_files", "correctness_scorer", "parse_scorer", "scorer_file_of",
           "scorer_files", "scorer_names"]

LABELS_MAX = 20
"""The generated correctness scorer's name prefix: a `:` no scorer file name can hold."""

CORRECTNESS_TEMPLATE = (
    "Decide whether the change meets the success criteria below. Answer `correct` when it "
    "meets every criterion and `incorrect` when it misses any.\n\nSuccess criteria:\n{criteria}\n")
"""The generated correctness scorer's rubric; its hash covers this text with the criteria."""


class ScorerLabel(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One label a scorer's judge may give."""

    value: str
    """The label's word, e.g. `correct`."""
    score: float
    """Its score, from 0 to 1."""
    description: str | None = None
    """When the judge gives it."""


class ScorerFile(Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"):
    """A scorer file's front matter, with its rubric (the body) and its source hash."""

    name: str
    """The scorer's name: its file name without `.md`."""
    description: str | None = None
    """What it judges."""
    labels: Annotated[tuple[ScorerLabel, ...], Meta(min_length=1, max_length=LABELS_MAX)]
    """1 to 20 labels."""
    passing_score: float
    """A label at or above it passes."""
    model: str | None = None
    """The judge's model for this scorer (overrides the suite judge's)."""
    sampling_rate: int | None = None
    """Warp's sampling rate; a benchmark samples every trial, whatever it says."""
    agents: list[object] | None = None
    """Warp's agents list, kept so a Warp scorer decodes; a suite's `scorers:` picks the trials."""
    rubric: str = ""
    """The body: the rubric the judge reads (filled by `parse_scorer`)."""
    source_hash: str = ""
    """sha256 of the file's bytes (filled by `parse_scorer`)."""


def _split(text: str) -> tuple[str, str, int] | None:
    """(front matter, body, the body's first line) of a `---` fenced file, or None."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1:]), i + 2
    return None


def parse_scorer(data: bytes, *, file: str, name: str) -> tuple[ScorerFile | None, list[Diagnostic]]:
    """A scorer file: the scorer, or None, with every diagnostic at its file and line."""
    def error(line: int | None, code: str, message: str, path: str | None = None) -> Diagnostic:
        return Diagnostic(file=file, line=line, severity="error", code=code, message=message, path=path)
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return None, [error(None, "scorer_not_text", "expected UTF-8 text, found bytes that are not. "
                            "Save the scorer file as UTF-8.")]
    parts = _split(text)
    if parts is None:
        return None, [error(1, "scorer_front_matter", "expected front matter between two `---` lines "
                            "at the top (name, labels, passingScore), then the rubric. Add them.")]
    head, body, body_line = parts
    value, loaded, found = decode_file(head, ScorerFile, file=file)
    found = [msgspec.structs.replace(d, line=d.line + 1 if d.line else d.line) for d in found]
    if value is None:
        return None, sorted_by_line(found)
    report = Findings(loaded)
    _rules(value, name, report)
    found = [msgspec.structs.replace(d, line=d.line + 1 if d.line else d.line)
             for d in report.diagnostics]
    if not body.strip():
        found.append(error(body_line, "scorer_rubric_empty", "expected the rubric after the front "
                           "matter, found nothing. Write what the judge should look for."))
    found = sorted_by_line(found)
    if has_errors(found):
        return None, found
    return msgspec.structs.replace(value, rubric=body.strip(),
                                   source_hash=hashlib.sha256(data).hexdigest()), found


def _rules(scorer: ScorerFile, name: str, report: Findings) -> None:
    if scorer.name != name:
        report.error("$.name", "scorer_name_mismatch", f"expected `{name}`, the scorer's file name, "
                     f"found `{scorer.name}`. Rename the scorer or its file so they match.")
    seen: set[str] = set()
    for i, label in enumerate(scorer.labels):
        if not label.value.strip():
            report.error(f"$.labels[{i}].value", "label_empty", "expected the label's word, found an "
                         "empty text. Write it, such as `correct`.")
        if label.value in seen:
            report.error(f"$.labels[{i}].value", "label_duplicate", f"`{label.value}` is listed twice. "
                         "Give each label its own value.")
        seen.add(label.value)
        if not 0 <= label.score <= 1:
            report.error(f"$.labels[{i}].score", "label_score_range", f"expected a score from 0 to 1, "
                         f"found {label.score}. Write one in that range.")
    scores = [label.score for label in scorer.labels]
    if not (any(s >= scorer.passing_score for s in scores) and any(s < scorer.passing_score for s in scores)):
        report.error("$.passingScore", "passing_score_split", f"expected at least one label scored at "
                     f"or above passingScore ({scorer.passing_score}) and one below it, found scores "
                     f"{', '.join(f'{s:g}' for s in scores)}. Change passingScore or a label's score.")
    if scorer.sampling_rate is not None and not 0 <= scorer.sampling_rate <= 100:
        report.error("$.samplingRate", "sampling_rate_range", f"expected a whole number from 0 to 100, "
                     f"found {scorer.sampling_rate}. Set it in that range (a benchmark judges every "
                     "trial whatever it says).")


def scorer_file_of(name: str, paths: Collection[str], namespace: str | None) -> str | None:
    """The file a suite's scorer name resolves to among the team tree's scorer files
    (`suites.teamtree.TeamTree.scorers`): `scorers/<ns>/<name>.md` for a namespaced suite, else
    `scorers/<name>.md`; None when neither is there."""
    return resolve(paths, "scorers", name, ".md", own=namespace)


def scorer_names(paths: Iterable[str], namespace: str | None) -> frozenset[str]:
    """The scorer names a suite in `namespace` (None: a shared suite) can name, from the team
    tree's scorer files."""
    mine = () if namespace is None else (namespace,)
    return frozenset(n for n in (reachable(p, "scorers", ".md", mine) for p in paths) if n is not None)


def scorer_files(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(path, name) of each of the team tree's scorer files whose name is a valid one, in path
    order."""
    found = []
    for path in sorted(paths):
        name = path.rsplit("/", 1)[-1].removesuffix(".md")
        if not name_problem(name):
            found.append((path, name))
    return found


def correctness_scorer(task: str, criteria: str) -> ScorerFile:
    """The scorer plan generates for a successCriteria task: correct (1) or incorrect (0),
    passingScore 1, its rubric hash over the generated prompt and the criteria."""
    rubric = CORRECTNESS_TEMPLATE.format(criteria=criteria.strip())
    return ScorerFile(
        name=f"{CORRECTNESS_PREFIX}{task}", description=f"Whether task {task}'s change meets its "
        "successCriteria.", labels=(
            ScorerLabel(value="correct", score=1.0, description="The change meets every criterion."),
            ScorerLabel(value="incorrect", score=0.0, description="The change misses a criterion.")),
        passing_score=1.0, rubric=rubric,
        source_hash=hashlib.sha256(f"{CORRECTNESS_PREFIX}v1\n{rubric}".encode()).hexdigest())


def check_scorer_files(files: Mapping[str, bytes], paths: Iterable[str],
                       namespaces: Collection[str] | None = None) -> list[Diagnostic]:
    """Every diagnostic of the team tree's scorer files `paths` (only the shared ones and those of
    `namespaces`, when given), each at its file and line; `files` holds their bytes."""
    found: list[Diagnostic] = []
    for path, name in scorer_files(paths):
        if reachable(path, "scorers", ".md", namespaces) is not None:
            found += parse_scorer(files[path], file=path, name=name)[1]
    return found
