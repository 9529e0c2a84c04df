"""Writes `teams-and-scorers.*`: one run's log as armbench e6254f6 wrote it (an arm of every team
kind, a scorer with its own aliased model, a generated correctness scorer, labels and a failed
judge), with the table and the record that armbench projected from it. It ran once, against
that commit's code (`git archive e6254f6`, then `PYTHONPATH=<there> python make_old_log.py`):
the files are the old shapes the log must keep folding to the same table. Never rerun it.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

from armbench.benchmark.records.reporting import project
from armbench.ledger.events import (
    Agent,
    CheckRan,
    Cost,
    JudgeFailed,
    LabelRecorded,
    RecordPublished,
    RecordQueued,
    RecordWritten,
    RunEnded,
    RunStarted,
    StepReported,
    Usage,
    encode_event,
)
from armbench.projections.record import encode_record
from armbench.suites.plan import PlanInput, freeze
from armbench.suites.scorers import parse_scorer
from armbench.suites.validate import TaskEntry, parse_aliases, parse_suite, parse_task

HERE = Path(__file__).parent
AT = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
PULLED, BRANCH, MADE = "3f9c2ab" + "0" * 33, "81d0e4c" + "1" * 33, "c" * 40

SUITE = """\
schemaVersion: v1alpha1
name: web
repo: https://example.invalid/web
defaults: { tool: claude, model: strong }
arms:
  - { name: base }
  - { name: bare, team: none }
  - { name: branch, team: bench/no-skill }
  - { name: cut, team: { without: [skills/release] } }
repetitions: 2
timeout: 1h
scorers: [tidy]
judge: { tool: codex, model: cheap }
"""
CHECKED = """\
schemaVersion: v1alpha1
title: Login
startingCommit: 1111111111111111111111111111111111111111
prompt: Fix the login.
check: { run: pytest -q, protect: [tests/**] }
"""
JUDGED = """\
schemaVersion: v1alpha1
title: Docs
startingCommit: 1111111111111111111111111111111111111111
prompt: Write the docs.
successCriteria: They read well.
"""
ALIASES = """\
schemaVersion: v1alpha1
aliases:
  strong:
    claude: claude-opus-4-1
    codex: { model: gpt-5.5, effort: high }
  cheap:
    codex: gpt-5-mini
"""
TIDY = b"""---
name: tidy
labels:
  - { value: tidy, score: 1 }
  - { value: messy, score: 0 }
passingScore: 1
model: strong
---
Is the change tidy?
"""


def main() -> None:
    suite, found = parse_suite(SUITE, file="benchmarks/web/suite.yaml")
    login = parse_task(CHECKED, file="benchmarks/web/tasks/login.yaml", task_id="login")[0]
    docs = parse_task(JUDGED, file="benchmarks/web/tasks/docs.yaml", task_id="docs")[0]
    aliases = parse_aliases(ALIASES, file="models/aliases.yaml")[0]
    tidy = parse_scorer(TIDY, file="scorers/tidy.md", name="tidy")[0]
    assert suite and login and docs and aliases and tidy, found
    teams = {"branch": {"kind": "ref", "ref": "bench/no-skill", "revision": BRANCH},
             "cut": {"kind": "without", "paths": ["skills/release"], "revision": PULLED,
                     "commit": MADE}}
    plan = freeze(PlanInput(
        suite=suite, suite_hash="5" * 64, team_aliases=aliases, team_revision=PULLED,
        tasks=[TaskEntry(id="docs", file="d", task=docs), TaskEntry(id="login", file="l", task=login)],
        task_hashes={"docs": "6" * 64, "login": "7" * 64}, scorers=[tidy], arm_teams=teams))[0]
    events: list = [RunStarted(run="rold", workflow="armbench-benchmark", source_hash="8" * 64,
                               inputs={"suite": "web"}, timeout_s=3600, at=AT, sandbox=True,
                               isolation="bubblewrap"), plan]
    seen = {"base": PULLED, "bare": None, "branch": BRANCH, "cut": PULLED}
    for i, t in enumerate(plan.trials):
        at = AT + timedelta(minutes=i)
        judge = Agent(tool="codex", model_requested="gpt-5-mini")
        events.append(StepReported(
            step=t.prompt_step, lease=f"l{i}", outcome="succeeded", at=at, duration_ms=1000 + i,
            usage=Usage(tokens={"input": 100 + i, "output": 10}, cost=Cost(amount=0.01 * i, unit="USD")),
            agent=Agent(tool="claude", model_requested="claude-opus-4-1", team_revision=seen[t.arm],
                        skills_used={"release": "loaded"} if t.arm == "base" else None)))
        for s in plan.scorers:
            if s.get("task") not in (None, t.task):
                continue
            base = {"step": t.prompt_step, "scorer": s["name"], "rubric_hash": s["rubric"]["sourceHash"],
                    "judge": judge, "key": hashlib.sha256(f"{i}{s['name']}".encode()).hexdigest(),
                    "at": at}
            if i == 3 and s["name"] == "tidy":
                events.append(JudgeFailed(**base, cause="not_json", message="no JSON object",
                                          usage=Usage(tokens={"input": 50})))
                continue
            label = s["labels"][i % 2]
            events.append(LabelRecorded(**base, label=label["value"], score=label["score"],
                                        passed=label["score"] >= s["passingScore"],
                                        usage=Usage(tokens={"input": 20, "output": 2})))
        if t.check_step:
            events.append(CheckRan(step=t.check_step, task=t.task, kind="trial",
                                   result="passed" if i % 3 else "failed", exit_code=i % 3 and 0 or 1))
    end = AT + timedelta(hours=1)
    events += [RecordWritten(sha256="9" * 64, at=end),
               RecordQueued(destination="/srv/reports.git", path="benchmarks/runs/rold.json", at=end),
               RecordPublished(destination="/srv/reports.git", path="benchmarks/runs/rold.json",
                               sha256="9" * 64, commit="a" * 40, at=end),
               RunEnded(state="succeeded", at=end)]
    got = project("rold", events, None)
    (HERE / "teams-and-scorers.jsonl").write_bytes(b"".join(encode_event(e) + b"\n" for e in events))
    (HERE / "teams-and-scorers.table.txt").write_text(got.text)
    (HERE / "teams-and-scorers.table.json").write_bytes(msgspec.json.encode(got.outputs) + b"\n")
    (HERE / "teams-and-scorers.record.json").write_bytes(encode_record(got.record))


if __name__ == "__main__":
    main()
