"""`--fail-on-regression`: compare a run's record with the newest comparable published one. Pure.

Comparable (benchmark-suites.md): an earlier record whose run ended succeeded, of the same
suite, the same tasks by sourceHash, and the same arms by name, tool, model, effort, workflow
and team choice (never the revision a team resolved to), and a subset run (`--task`, `--arm`,
`--repetitions`) only with a subset run, a whole run only with a whole run. Trials pair by task
and repetition; an arm drops when the whole 95% interval of new - old (`regression_gate`) is below zero.

A drop that the new run's transient errors explain (without the pairs whose new trial failed
for the provider's or the network's cause, the arm does not drop) is no regression, but it is
no pass either: the two runs are not comparable, and the gate fails closed (the run exits 1
with a message of its own) unless the member allows an inconclusive comparison
(`--allow-inconclusive`). A tool's own word is what makes an error transient (an exit of 75, a
provider's status in its output), so a tool that says so on every attempt must not be able to
turn a collapse into a pass through the gate.

A tool whose version differs between the two records (a CLI upgraded between two CI runs) is
still compared, since that is a change a team wants caught, and the lines name it
(`Arm "codex" (codex 0.45.0 → 0.47.1) passed ...`), from the versions the trials reported.

A judged task (its trials carry labels) is compared only where both records name the same
judges for it (tool, version, model and the scorer's rubric hash): a new judge or rubric moves
what passes without the agent changing. Such a task's pairs are left out of every arm's
comparison and a line says so (`not comparable: the judge changed (...)`), as when the old record
predates labels that name their judge: unknown is never taken for the same.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from armbench.projections.arm_keys import team_choice, workflow_name
from armbench.projections.record_types import Record, RecordArm, present
from armbench.projections.stats import GateResult, NoData, PairedOutcome, regression_gate

__all__ = ["ArmVerdict", "GateVerdict", "arm_identity", "comparable", "compare_records",
           "judge_changes", "newest_comparable", "points", "version_change"]

class ArmVerdict(msgspec.Struct, frozen=True, kw_only=True):
    """One arm of the new run against the same arm of the old one."""

    arm: str
    """The arm's name."""
    paired: int
    """Trials paired by task and repetition."""
    new_passed: int
    """Paired trials the new run passed."""
    old_passed: int
    """Paired trials the old run passed."""
    gate: GateResult | NoData
    """new - old with its interval, or NoData without paired trials."""
    transient: int = 0
    """Paired trials of the new run that are transient errors (the provider's, not the agent's)."""
    explained: bool = False
    """The arm dropped, but not without the pairs whose new trial is a transient error: not
    comparable, rather than a regression."""

    @property
    def dropped(self) -> bool:
        """The whole interval of new - old is below zero."""
        return isinstance(self.gate, GateResult) and self.gate.regressed

    @property
    def regressed(self) -> bool:
        """It dropped, and its transient errors do not explain the drop."""
        return self.dropped and not self.explained


class GateVerdict(msgspec.Struct, frozen=True, kw_only=True):
    """What `--fail-on-regression` found, and the lines it prints."""

    against: str | None
    """The run compared with, or None when nothing was comparable."""
    arms: list[ArmVerdict]
    """Each arm's comparison, in the new record's arm order."""
    lines: list[str]
    """The messages for stderr."""

    @property
    def regressed(self) -> bool:
        """Some arm dropped, and not for transient errors: the run exits 1."""
        return any(a.regressed for a in self.arms)

    @property
    def inconclusive(self) -> bool:
        """Some arm dropped, and only its transient errors keep the drop from being decided."""
        return any(a.dropped and a.explained for a in self.arms)

    def exit_code(self, *, allow_inconclusive: bool) -> int:
        """1 for a regression, and for an inconclusive comparison unless it is allowed; else 0."""
        return 1 if self.regressed or (self.inconclusive and not allow_inconclusive) else 0


def arm_identity(arm: RecordArm) -> tuple[Any, ...]:
    """What makes two record arms the same arm: name, tool, model, effort, workflow, team choice."""
    return (arm.name, arm.tool, arm.model, arm.effort, workflow_name(arm), team_choice(arm))


def _tasks(record: Record) -> set[tuple[str, str]]:
    return {(t.id, t.source_hash) for t in record.tasks}


def _started(record: Record) -> str | None:
    """When the run started: armbench writes UTC ISO 8601 (`+00:00`), which sorts as text."""
    return present(record.started_at)


def comparable(new: Record, old: Record) -> bool:
    """Whether `old` is a succeeded run of the same suite, tasks and arms as `new`, and a subset
    run exactly when `new` is one."""
    return _same_runs(new, old) and (old.subset is None) == (new.subset is None)


def _same_runs(new: Record, old: Record) -> bool:
    """Whether `old` is a succeeded run of the same suite, tasks and arms as `new`."""
    return (old.outcome == "succeeded"
            and old.suite.name == new.suite.name
            and _tasks(old) == _tasks(new)
            and _arms(old) == _arms(new)
            and _same_roles(new, old))


def _same_roles(new: Record, old: Record) -> bool:
    """Each arm's team assets went to the same roles and projects in both runs, where both
    records say (a record written before plans froze roles does not): delivered for other roles,
    an arm at the same team revision got other assets."""
    before = {a.name: a.roles for a in old.arms}
    return all(a.roles is None or (was := before.get(a.name)) is None or sorted(a.roles) == sorted(was)
               for a in new.arms)


def _arms(record: Record) -> set[tuple[Any, ...]]:
    return {arm_identity(a) for a in record.arms}


def _earlier(new: Record, published: Iterable[Record]) -> list[Record]:
    """The records started before `new`."""
    start = _started(new)
    return [old for old in published
            if old.run != new.run and (at := _started(old)) is not None
            and (start is None or at < start)]


def newest_comparable(new: Record, published: Iterable[Record]) -> Record | None:
    """The newest record started before `new` that is comparable with it."""
    earlier = [old for old in _earlier(new, published) if comparable(new, old)]
    return max(earlier, key=_started, default=None)  # type: ignore[arg-type]


def _none_line(new: Record, published: Iterable[Record], branch: str) -> str:
    """Why the gate found no comparable record: nothing alike, or only runs on the other side of
    the subset line (a subset never pairs with a whole run, nor the reverse)."""
    suite = new.suite.name
    other = sum(1 for old in _earlier(new, published)
                if old.outcome == "succeeded" and old.suite.name == suite
                and (old.subset is None) != (new.subset is None))
    if new.subset is not None:
        return (f"This run was a subset of suite {suite} (--task, --arm or --repetitions), and no "
                f"earlier succeeded run of the same subset is on {branch}"
                + (f" ({other} whole run(s) of the suite are, but a subset is never compared "
                   "with a whole run)" if other else "")
                + ": --fail-on-regression has nothing to compare with. Run the whole suite for "
                "the gate, or publish a run of this subset first.")
    if other:
        return (f"No earlier succeeded whole run of suite {suite} ran the same tasks on the same "
                f"arms on {branch}; {other} subset run(s) of the suite are there, but a whole run "
                "is never compared with a subset (--task, --arm or --repetitions). "
                "--fail-on-regression has nothing to compare with.")
    return (f"No earlier succeeded run of suite {suite} ran the same tasks on the same arms on "
            f"{branch}: recording is off, or nothing comparable has been published yet. "
            "--fail-on-regression has nothing to compare with.")


def _by_trial(record: Record, arm: str) -> dict[tuple[str, int], bool]:
    return {(t.task, t.repetition): t.result == "passed" for t in record.trials if t.arm == arm}


def _transient(record: Record, arm: str) -> set[tuple[str, int]]:
    """The arm's trials that are errors for a transient cause."""
    return {(t.task, t.repetition) for t in record.trials
            if t.arm == arm and t.result == "error" and t.transient}


def _gate(now: dict[tuple[str, int], bool], before: dict[tuple[str, int], bool],
          keys: list[tuple[str, int]]) -> GateResult | NoData:
    return regression_gate([PairedOutcome(task=task, repetition=rep, new_passed=now[(task, rep)],
                                          old_passed=before[(task, rep)]) for task, rep in keys])


def _judges(record: Record) -> dict[str, set[str] | None]:
    """Per judged task, the judges its labels name (`claude 2.1.0 sonnet, rubric 1a2b3c4d5e6f`);
    None for a task one of whose labels names none (recorded before labels named their judge)."""
    found: dict[str, set[str] | None] = {}
    for t in record.trials:
        for label in t.labels or []:
            judge, rubric = present(label.judge), present(label.rubric_hash)
            if judge is None or rubric is None:
                found[t.task] = None
                continue
            said = " ".join(x for x in (judge.tool, judge.version, judge.model) if x) or "unknown"
            seen = found.setdefault(t.task, set())
            if seen is not None:
                seen.add(f"{said}, rubric {rubric[:12]}")
    return found


def judge_changes(new: Record, old: Record) -> dict[str, str]:
    """The judged tasks not comparable between the two records, each with what changed."""
    now, before = _judges(new), _judges(old)
    changed = {}
    for task in sorted(now.keys() | before.keys()):
        a, b = before.get(task), now.get(task)
        if a is not None and b is not None and a == b:
            continue
        if a is None or b is None:
            changed[task] = (f"run {old.run} does not name its judge" if a is None
                             else "this run does not name its judge")
        else:
            changed[task] = f"{'; '.join(sorted(a))} → {'; '.join(sorted(b))}"
    return changed


def _verdict(new: Record, old: Record, arm: str, left_out: Iterable[str] = ()) -> ArmVerdict:
    now, before = _by_trial(new, arm), _by_trial(old, arm)
    skipped = set(left_out)
    keys = [k for k in now if k in before and k[0] not in skipped]
    gate = _gate(now, before, keys)
    transient = _transient(new, arm) & set(keys)
    explained = False
    if transient and isinstance(gate, GateResult) and gate.regressed:
        rest = _gate(now, before, [k for k in keys if k not in transient])
        explained = not (isinstance(rest, GateResult) and rest.regressed)
    return ArmVerdict(arm=arm, paired=len(keys), new_passed=sum(now[k] for k in keys),
                      old_passed=sum(before[k] for k in keys), gate=gate,
                      transient=len(transient), explained=explained)


def _tool_versions(record: Record, arm: str) -> dict[str, set[str]]:
    """The versions each tool of the arm's trials reported, by tool (unknown ones left out)."""
    found: dict[str, set[str]] = {}
    for t in record.trials:
        tool = t.agent.tool if t.arm == arm and t.agent is not None else None
        if tool is not None and tool.name and tool.version:
            found.setdefault(tool.name, set()).add(tool.version)
    return found


def version_change(new: Record, old: Record, arm: str) -> str | None:
    """`codex 0.45.0 → 0.47.1` where the arm's tool reported one version in each record and
    they differ (a CLI upgraded between two runs, which reads as nothing else in the record),
    and the team assets' change under one team revision; None where they agree or either is
    unknown, never a guess."""
    now, before = _tool_versions(new, arm), _tool_versions(old, arm)
    changed = [f"{tool} {'/'.join(sorted(before[tool]))} → {'/'.join(sorted(versions))}"
               for tool, versions in sorted(now.items())
               if tool in before and versions != before[tool]]
    assets = _assets_change(new, old, arm)
    return ", ".join([*changed, *([assets] if assets else [])]) or None


def _assets_change(new: Record, old: Record, arm: str) -> str | None:
    """`team assets 1a2b3c4d → 5e6f7a8b under team revision 0123456` where both records froze
    the arm's assets at one team revision and they differ (other roles, or another armbench
    reading the team repo otherwise: a change the team revision alone does not show)."""
    now = next((a.team for a in new.arms if a.name == arm), None)
    before = next((a.team for a in old.arms if a.name == arm), None)
    if now is None or before is None or not (now.assets and before.assets):
        return None
    if now.revision != before.revision or now.assets == before.assets:
        return None
    return (f"team assets {before.assets[:8]} → {now.assets[:8]} under team revision "
            f"{(now.revision or '')[:7]}")


def _what_changed(change: str | None) -> str:
    """What a `version_change` line names: the tool's version, its team assets, or both."""
    said = change or ""
    assets = "team assets " in said
    tool = bool(said.split("team assets ")[0].strip(", "))
    return " and ".join(w for w, on in (("its tool's version", tool), ("its team assets", assets)) if on)


def _named(arm: str, change: str | None) -> str:
    return f'Arm "{arm}"' + (f" ({change})" if change else "")


def points(x: float) -> str:
    """A difference in percentage points, whole unless rounding would hide its sign."""
    value = 100 * x
    whole = round(value)
    return f"{value:.1f}" if whole == 0 and value != 0 else f"{whole}"


def _drop_line(v: ArmVerdict, run: str, change: str | None = None) -> str:
    assert isinstance(v.gate, GateResult)
    g = v.gate
    return (f"{_named(v.arm, change)} passed {v.new_passed}/{v.paired} paired trials, against "
            f"{v.old_passed}/{v.paired} in run {run}: a drop of {points(-g.estimate)} points, with "
            f"a {round(100 * g.confidence)}% interval of {points(g.lower)} to {points(g.upper)} "
            "points.")


def _explained_line(v: ArmVerdict, run: str, *, allow_inconclusive: bool) -> str:
    said = (f'Arm "{v.arm}" is not comparable with run {run}: {v.transient} transient errors. It '
            f"passed {v.new_passed}/{v.paired} paired trials against {v.old_passed}/{v.paired}, "
            f"but without the {v.transient} trials that ended in the provider's or the network's "
            "failure (a rate limit, an overload, a 5xx, a dropped connection) it did not drop, so "
            "the drop is not decided. ")
    if allow_inconclusive:
        return said + ("--allow-inconclusive lets this run through the gate. Run the suite again "
                       "once the provider is well.")
    return said + ("--fail-on-regression fails closed on it (exit 1): run the suite again once the "
                   "provider is well, or add --allow-inconclusive to let such a run through.")


def compare_records(new: Record, published: Iterable[Record], *, branch: str,
                    allow_inconclusive: bool = False) -> GateVerdict:
    """The gate's verdict on `new` against the newest comparable record among `published`; with
    `allow_inconclusive`, the lines say that a drop transient errors explain is let through."""
    published = list(published)
    old = newest_comparable(new, published)
    if old is None:
        return GateVerdict(against=None, arms=[], lines=[_none_line(new, published, branch)])
    run = old.run
    judged = judge_changes(new, old)
    verdicts = [_verdict(new, old, a.name, judged) for a in new.arms]
    changes = {v.arm: version_change(new, old, v.arm) for v in verdicts}
    lines = [_explained_line(v, run, allow_inconclusive=allow_inconclusive) if v.explained
             else _drop_line(v, run, changes[v.arm]) for v in verdicts if v.dropped]
    if not lines:
        lines = [f"No arm's pass rate dropped by more than chance against run {run}."]
    lines += [f"Task {task} is not comparable with run {run}: the judge changed ({change}). Its "
              "trials are left out of the comparison above." for task, change in judged.items()]
    lines += [f"{_named(v.arm, changes[v.arm])}: {_what_changed(changes[v.arm])} changed since run "
              f"{run}; the comparison above includes that change." for v in verdicts
              if changes[v.arm] and not v.dropped]
    return GateVerdict(against=run, arms=verdicts, lines=lines)
