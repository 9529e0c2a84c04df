"""`armbench try --strength`: how many wrong fixes a task's check rejects.

The check runs at the fix on each mutant of the fix's non-test change (`suites.mutants`), as
`try` runs it at the fix (a fresh clone, setup, protect restored, `check.add` written, then the
mutant's files), in parallel lanes, each with a time limit of five times the fix's own check
(at least 10 s, at most the check's timeout). A mutant the check fails, or that runs past its
limit, is killed; one it passes survives; one it cannot run (it ran no test, say) counts apart.
Strength is killed out of those decided, with an exact (Clopper–Pearson) 95% interval. A
surviving mutant may be equivalent to the fix: then no test can kill it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import msgspec

from armbench.benchmark.tryout.bench import Attempt, TryBench
from armbench.projections.stats.exact import exact_interval
from armbench.suites.mutants import Mutant, mutants_of
from armbench.suites.pathspec import matches_any

__all__ = ["DEFAULT_MUTANTS", "Strength", "Survivor", "measure_strength", "strength_words"]

DEFAULT_MUTANTS = 20
MIN_LIMIT_S = 10.0


class Survivor(msgspec.Struct, frozen=True, kw_only=True):
    """A wrong fix the check passed."""

    kind: str
    file: str
    line: int
    diff: str


class Strength(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What the check made of the fix's mutants (`data.try.strength`)."""

    killed: int
    """Mutants the check failed, or that ran past their time limit."""
    mutants: int
    """Mutants the check decided: killed and survived (the strength's denominator)."""
    could_not_run: int
    """Mutants the check could not decide (it did not run, or ran no test): counted apart."""
    strength: float | None
    """killed / mutants; None when no mutant was decided."""
    lower: float | None
    upper: float | None
    """The exact 95% interval of the strength."""
    survivors: list[Survivor]
    """The mutants the check passed, each with its diff against the fix."""
    made: int
    """Mutants made from the fix (at most --mutants)."""


def measure_strength(bench: TryBench, fix_run: Attempt, *, limit: int, lanes: int) -> Strength:
    """Run the check on at most `limit` mutants of the fix, on `lanes` lanes."""
    assert bench.fix is not None
    task = bench.task
    tests = (*task.protect, *task.add, *task.add_from)
    change = {path: pair for path, pair in bench.sources.changed(bench.start, bench.fix).items()
              if not matches_any(tests, path) and path not in task.add_from}
    mutants = mutants_of(change, seed=bench.fix, limit=limit)
    own = (fix_run.duration_ms or 0) / 1000
    time_limit = max(MIN_LIMIT_S, 5 * own)
    bench.progress(f"Task {bench.files.task_id}: the check on {len(mutants)} mutants of the fix "
                   f"{bench.fix[:7]} ({lanes} lane(s), {time_limit:.0f} s each at most)")

    def run(mutant: Mutant) -> Attempt:
        return bench.attempt(bench.fix or "", restore=True, write=mutant.files, timeout_s=time_limit)

    with ThreadPoolExecutor(max_workers=max(1, lanes)) as pool:
        got = list(pool.map(run, mutants))
    killed = sum(1 for a in got if a.outcome == "failed" or a.cause == "timeout")
    survived = [m for m, a in zip(mutants, got, strict=True) if a.outcome == "passed"]
    decided = killed + len(survived)
    interval = exact_interval(killed, decided)
    return Strength(killed=killed, mutants=decided, could_not_run=len(mutants) - decided,
                    strength=killed / decided if decided else None,
                    lower=interval[0] if interval else None, upper=interval[1] if interval else None,
                    survivors=[Survivor(kind=m.kind, file=m.file, line=m.line, diff=m.diff)
                               for m in survived], made=len(mutants))


def strength_words(task: str, s: Strength) -> list[str]:
    """What the person trying the task reads: the strength, then each survivor and its diff."""
    if s.made == 0:
        return [f"Task {task}: the fix changes no source file armbench can mutate (only tests, "
                "protected or added files, or binary files), so its check's strength is not measured."]
    if s.strength is None or s.lower is None or s.upper is None:
        return [f"Task {task}: the check decided none of the {s.made} mutants of the fix "
                f"({s.could_not_run} could not run), so its strength is not known."]
    apart = f"; {s.could_not_run} could not run, counted apart" if s.could_not_run else ""
    lines = [f"Task {task}: the check killed {s.killed} of {s.mutants} mutants of the fix: strength "
             f"{round(100 * s.strength)}% (95% interval {round(100 * s.lower)}% to "
             f"{round(100 * s.upper)}%){apart}."]
    if s.survivors:
        lines.append(f"{len(s.survivors)} wrong fix(es) pass the check (a survivor may be equivalent "
                     "to the fix; otherwise add a test that fails on it):")
        for v in s.survivors:
            lines.append(f"  {v.kind} at {v.file}:{v.line}")
            lines += [f"    {line}" for line in v.diff.rstrip("\n").splitlines()]
    return lines
