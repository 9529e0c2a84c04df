"""A draft tried as `armbench try` tries a task file: written with its suite.yaml into a temporary
suite folder, validated as pull would, and its check run at startingCommit and at the fix."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from armbench.benchmark.tryout.bench import SharedCommits
from armbench.benchmark.tryout.task import TryResult, try_task
from armbench.edge.sandbox import Sandbox
from armbench.suites.draftfile import TaskDraft, render_task

__all__ = ["DraftSuite", "try_draft"]


@dataclass(frozen=True)
class DraftSuite:
    """The suite a draft is tried in: its name and its suite.yaml's bytes."""

    name: str
    text: bytes


def try_draft(draft: TaskDraft, suite: DraftSuite, *, checkout: Path, sandbox: Sandbox, repeat: int,
              progress: Callable[[str], None], shared: SharedCommits | None = None,
              mutants: int | None = None) -> TryResult:
    """The try's result for the draft's text, in a temporary `benchmarks/<suite>/tasks/` folder
    (its commits from `shared`, a harvest's, when given; with `mutants`, its check's strength,
    on one lane: a harvest's lanes are its candidates)."""
    root = Path(tempfile.mkdtemp(prefix="armbench-draft-"))
    try:
        tasks = root / "benchmarks" / suite.name / "tasks"
        tasks.mkdir(parents=True)
        (tasks.parent / "suite.yaml").write_bytes(suite.text)
        task_file = tasks / f"{draft.task_id}.yaml"
        task_file.write_text(render_task(draft))
        return try_task(task_file, cwd=checkout, sandbox=sandbox, repeat=repeat, progress=progress,
                        shared=shared, mutants=mutants)
    finally:
        shutil.rmtree(root, ignore_errors=True)
