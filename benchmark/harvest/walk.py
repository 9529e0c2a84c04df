"""`armbench task harvest`: every fix commit of the first-parent history drafted, tried in lanes,
and the valid ones written, one file each (resumable through `benchmark.harvest.state`)."""

from __future__ import annotations

import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import msgspec

from armbench.benchmark.harvest.draft import draft_from_commit, split_changes
from armbench.benchmark.harvest.probe import sandbox_imports
from armbench.benchmark.harvest.state import HarvestState, Tried
from armbench.benchmark.harvest.trydraft import DraftSuite, try_draft
from armbench.benchmark.trials.workspace import remove_tree
from armbench.benchmark.tryout.bench import SharedCommits
from armbench.benchmark.tryout.task import TryResult
from armbench.edge.history import CommitFacts, first_parent_facts
from armbench.edge.sandbox import Sandbox
from armbench.ledger.errors import ArmbenchError
from armbench.projections.text import printable
from armbench.suites.draftfile import render_task
from armbench.suites.drafting import NotDraftable
from armbench.suites.pathspec import matches_any

__all__ = ["WEAK", "HarvestOptions", "VERDICTS", "harvest_history", "render_table"]

VERDICTS = {"startup": "valid", "no_fix": "valid", "old_bug": "passes before",
            "bad_fix": "fails after", "could_not_run": "could not run", "stopped": "could not run",
            "flaky": "flaky", "criteria_only": "valid"}
"""The try's row, as the harvest table says it."""
NOT_DRAFTED = "not drafted"
WEAK = "weak check"
"""A valid draft whose check's strength is below `--min-strength`: not written."""


def weak_detail(result: TryResult, floor: float) -> str:
    """Why a valid draft was not kept: its strength, the floor, and its surviving mutants."""
    s = result.strength
    if s is None or s.strength is None:
        return (f"{result.message} Its check's strength could not be measured, so --min-strength "
                f"{floor:g} does not keep it.")
    survivors = "; ".join(f"{v.kind} at {v.file}:{v.line}" for v in s.survivors)
    return (f"{result.message} Its check killed {s.killed} of {s.mutants} mutants of the fix "
            f"(strength {s.strength:.2f}, below --min-strength {floor:g}); wrong fixes that pass: "
            f"{survivors}.")


@dataclass(frozen=True)
class HarvestOptions:
    """Which commits to walk, how many to try, and how."""

    since: str | None = None
    range_: str | None = None
    paths: tuple[str, ...] = ()
    limit: int | None = None
    lanes: int = 2
    repeat: int = 1
    issues_dir: Path | None = None
    mutants: int | None = None
    """With `--strength`, each valid draft's check strength from at most this many mutants."""
    min_strength: float | None = None
    """With `--min-strength`, a valid draft whose strength is below it is not written."""


def candidates(root: Path, options: HarvestOptions) -> list[CommitFacts]:
    """The first-parent commits, oldest first, that change both source and test files (and, with
    `paths`, a path the globs match)."""
    found = []
    for facts in first_parent_facts(root, since=options.since, range_=options.range_):
        if not facts.parents:
            continue
        if not split_changes(facts).candidate:
            continue
        if options.paths and not any(matches_any(options.paths, c.path) for c in facts.changes):
            continue
        found.append(facts)
    return found


def harvest_history(root: Path, out: Path, options: HarvestOptions, *, suite: DraftSuite,
                    sandbox: Sandbox, progress: Callable[[str], None]) -> list[Tried]:
    """Every candidate's verdict, in history order; the valid ones written into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    state = HarvestState(out)
    found = candidates(root, options)
    rows: dict[str, Tried] = {}
    todo: list[CommitFacts] = []
    for facts in found:
        earlier = state.tried(facts.sha)
        if earlier is not None:
            rows[facts.sha] = msgspec.structs.replace(earlier, earlier=True)
        else:
            todo.append(facts)
    todo = todo[:options.limit] if options.limit is not None else todo
    later = len(found) - len(rows) - len(todo)
    plural = "" if len(found) == 1 else "s"
    lanes = min(options.lanes, max(len(todo), 1))
    progress(f"{len(found)} candidate{plural}: {len(rows)} tried before, {len(todo)} to try in {lanes} "
             "lanes" + (f", {later} left for a later harvest" if later else "") + ".")
    if todo:
        commits = Path(tempfile.mkdtemp(prefix="armbench-harvest-"))  # what every try clones from
        try:
            lane = _Lane(root, out, options, suite=suite, sandbox=sandbox, progress=progress,
                         pytest_importable=sandbox_imports(sandbox, "pytest"),
                         shared=SharedCommits.under(commits))
            pool = ThreadPoolExecutor(max_workers=options.lanes, thread_name_prefix="harvest")
            try:
                for row in pool.map(lambda facts: state.kept(lane.one(facts)), todo):
                    rows[row.commit] = row
            finally:  # stopped (Ctrl-C): the candidates under way finish and are kept, none starts
                pool.shutdown(wait=True, cancel_futures=True)
        finally:
            remove_tree(commits)
    return [rows[f.sha] for f in found if f.sha in rows]


class _Lane:
    """What every lane shares: the options, the commits every try clones from (one commit cache,
    each commit's git dir made once, `edge.fetched`), and the lock that names and writes the task
    files."""

    def __init__(self, root: Path, out: Path, options: HarvestOptions, *, suite: DraftSuite,
                 sandbox: Sandbox, progress: Callable[[str], None], pytest_importable: bool,
                 shared: SharedCommits) -> None:
        self.root, self.out, self.options, self.suite = root, out, options, suite
        self.sandbox, self.progress, self.pytest_importable = sandbox, progress, pytest_importable
        self.shared = shared
        self._lock = threading.Lock()

    def one(self, facts: CommitFacts) -> Tried:
        started = time.monotonic()
        short = facts.sha[:7]
        try:
            draft = draft_from_commit(self.root, facts, pytest_importable=self.pytest_importable,
                                      issues_dir=self.options.issues_dir)
        except NotDraftable as why:
            return Tried(commit=facts.sha, subject=facts.subject, verdict=NOT_DRAFTED,
                         detail=why.message, seconds=round(time.monotonic() - started, 3))
        except ArmbenchError as error:  # git could not read the commit: this candidate only
            return Tried(commit=facts.sha, subject=facts.subject, verdict="could not run",
                         detail=error.message, seconds=round(time.monotonic() - started, 3))
        result = try_draft(draft, self.suite, checkout=self.root, sandbox=self.sandbox,
                           repeat=self.options.repeat, progress=lambda line: self.progress(f"{short} {line}"),
                           shared=self.shared, mutants=self.options.mutants)
        verdict = VERDICTS.get(result.row, "could not run") if not result.ok else "valid"
        detail = result.message
        strength = result.strength.strength if result.strength is not None else None
        floor = self.options.min_strength
        if result.ok and floor is not None and (strength is None or strength < floor):
            verdict = WEAK
            detail = weak_detail(result, floor)
        written = self._write(draft.task_id, facts.sha, render_task(draft)) if verdict == "valid" else None
        self.progress(f"{short} {verdict}: {detail}")
        return Tried(commit=facts.sha, subject=facts.subject, verdict=verdict, detail=detail,
                     seconds=round(time.monotonic() - started, 3), file=written, strength=strength,
                     survivors=[f"{v.kind} at {v.file}:{v.line}" for v in result.strength.survivors]
                     if result.strength is not None else [])

    def _write(self, task_id: str, sha: str, text: str) -> str:
        """`<id>.yaml`, or `<id>-<sha7>.yaml` when another commit's task has that name."""
        with self._lock:
            name = f"{task_id}.yaml"
            path = self.out / name
            if path.exists() and path.read_text() != text:
                name = f"{task_id}-{sha[:7]}.yaml"
                path = self.out / name
            path.write_text(text)
            return name


def render_table(rows: Sequence[Tried]) -> str:
    """The candidates' table for people: commit, subject, verdict, time; then the counts."""
    measured = any(r.strength is not None for r in rows)
    header: tuple[str, ...] = ("commit", "subject", "verdict", "time") + (("strength",) if measured else ())
    body = [(r.commit[:7], _cut(printable(r.subject), 50),
             r.verdict + (" (earlier)" if r.earlier else ""), f"{r.seconds:.1f}s")
            + ((f"{round(100 * r.strength)}%" if r.strength is not None else "",) if measured else ())
            for r in rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip()
             for row in [header, *body]]
    counts = Counter(r.verdict for r in rows)
    summary = ", ".join(f"{n} {verdict}" for verdict, n in sorted(counts.items())) or "none"
    lines.append(f"{len(rows)} candidate{'' if len(rows) == 1 else 's'}: {summary}.")
    return "\n".join(lines) + "\n"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
