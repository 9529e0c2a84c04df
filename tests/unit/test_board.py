"""The dashboard's pure folds: two runs of a suite compared arm by arm, a suite's history with
the gate's flags, and a run's line on the Benchmarks page."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from test_results_projection import plan, started

from armbench.ledger.events import PlanSubset
from armbench.projections.board import history, published_summary, run_pairs, summarize
from armbench.projections.record_types import as_record


def record(run: str, at: str, passes: dict[str, list[bool]], outcome: str = "succeeded") -> Any:
    tasks = sorted({f"t{i}" for flags in passes.values() for i in range(len(flags))})
    return as_record({
        "run": run, "startedAt": at, "outcome": outcome, "suite": {"name": "s"},
        "tasks": [{"id": t, "sourceHash": "h" + t} for t in tasks],
        "arms": [{"name": arm, "tool": "tool", "model": "m"} for arm in passes],
        "trials": [{"task": f"t{i}", "arm": arm, "repetition": 0,
                    "result": "passed" if ok else "failed"}
                   for arm, flags in passes.items() for i, ok in enumerate(flags)]})


def test_two_runs_pair_each_shared_arm_from_the_earlier_to_the_later() -> None:
    old = record("r1", "2026-01-01T00:00:00+00:00", {"a": [True] * 10, "gone": [True]})
    new = record("r2", "2026-01-02T00:00:00+00:00", {"a": [True] * 4 + [False] * 6})
    [pair] = run_pairs(old, new)
    assert (pair.arm, pair.trials, pair.from_passed, pair.to_passed) == ("a", 10, 10, 4)
    d = pair.difference
    assert d["estimate"] == pytest.approx(-0.6)
    assert d["lower"] < d["estimate"] < d["upper"] < 0
    assert (d["from_only_passed"], d["to_only_passed"]) == (6, 0)


def test_an_arm_with_no_trial_in_common_has_no_difference() -> None:
    old = record("r1", "2026-01-01T00:00:00+00:00", {"a": []})
    new = record("r2", "2026-01-02T00:00:00+00:00", {"a": [True]})
    [pair] = run_pairs(old, new)
    assert pair.trials == 0 and pair.difference["type"] == "no_data"


def test_history_gives_each_arms_interval_and_flags_a_drop_against_the_run_before() -> None:
    runs = [record("r1", "2026-01-01T00:00:00+00:00", {"a": [True] * 30}),
            record("r2", "2026-01-02T00:00:00+00:00", {"a": [False] * 30}),
            record("r3", "2026-01-03T00:00:00+00:00", {"a": [False] * 30})]
    got = history(reversed(runs), "s")
    assert [h.run for h in got] == ["r1", "r2", "r3"]
    assert [h.against for h in got] == [None, "r1", "r2"]
    assert [h.arms[0].flagged for h in got] == [False, True, False]
    first = got[0].arms[0]
    assert (first.pass_rate, first.upper) == (1.0, 1.0) and 0.8 < first.lower < 1.0


def test_a_run_line_has_its_revision_arms_and_isolation_from_the_log() -> None:
    line = summarize("r1", [started(), plan(arms=("a", "b"))])
    assert (line.suite, line.state, line.planned, line.arms) == (None, "running", 2, ["a", "b"])
    assert line.team_revision == "a" * 40 and line.isolation == "declared"
    assert line.record is None and line.source == "ledger"


def test_a_running_runs_page_follows_its_log(tmp_path) -> None:
    from test_results_projection import check, prompt

    from armbench.benchmark.dashboard.pages import Site
    from armbench.benchmark.dashboard.site import Board
    from armbench.ledger.store import EventStore

    store = EventStore(tmp_path / "ledger.db")
    store.append("r1", [started(), plan(trials=2)], expected_version=0)
    site = Site(Board(store))
    before = site.document("run/r1")
    assert before["summary"].state == "running" and before["summary"].reported == 0
    from test_progress import lease

    steps = ("trials.r0.t.a.prompt", "trials.r0.t.a.check")
    store.append("r1", [lease(steps[0]), prompt(steps[0]), lease(steps[1]),
                        check(steps[1], "passed"), prompt(steps[1])], expected_version=2)
    after = site.document("run/r1")
    assert after["summary"].reported == 1
    assert [t.result for t in after["record"].trials] == ["passed", "not_run"]
    assert site.respond("/data/run/r1.js").body.startswith(b'armbench.put("run/r1", {')
    assert site.respond("/data/run/nope.js").status == 404
    assert site.respond("/../../etc/passwd").status == 404


def test_no_dashboard_document_serves_a_runs_fix_commit_or_prompt(tmp_path) -> None:
    """A live run's documents (and a published record's) leave out each task's `fix` commit
    and never carry its prompt or check command: anyone who reaches the server could read them."""
    import msgspec
    from test_progress import lease
    from test_results_projection import check, prompt

    from armbench.benchmark.dashboard.pages import Site
    from armbench.benchmark.dashboard.site import Board
    from armbench.ledger.store import EventStore

    fix = "f1e2d3c4" * 5
    planned = plan(trials=1)
    planned = msgspec.structs.replace(planned, tasks=[msgspec.structs.replace(planned.tasks[0], fix=fix)])
    store = EventStore(tmp_path / "ledger.db")
    store.append("r1", [started(), planned], expected_version=0)
    steps = ("trials.r0.t.a.prompt", "trials.r0.t.a.check")
    store.append("r1", [lease(steps[0]), prompt(steps[0]), lease(steps[1]), check(steps[1], "passed")],
                 expected_version=2)
    site = Site(Board(store))
    published = {"run": "p1", "suite": {"name": "s"}, "tasks": [{"id": "t", "sourceHash": "h", "fix": fix}],
                 "trials": []}
    site.board.published = {"p1": (as_record(published), published)}
    served = b"".join(site.respond(f"/data/{key}.js").body
                      for key in ("runs", "run/r1", "run/p1", "explain/r1/t0", "explain/r1/b0"))
    exported = tmp_path / "site"
    site.export(exported, lambda _: None)
    served += b"".join(p.read_bytes() for p in exported.rglob("*.js"))
    assert b'armbench.put("run/r1"' in served and b'armbench.put("run/p1"' in served
    assert fix.encode() not in served
    assert b"SECRET PROMPT" not in served and b"SECRET COMMAND" not in served


def test_a_subset_run_is_marked_in_the_runs_list_and_the_history() -> None:
    subset = PlanSubset(tasks=["t"], arms=["a"], repetitions=1)
    line = summarize("r1", [started(), msgspec.structs.replace(plan(arms=("a",)), subset=subset)])
    assert line.subset == "task t; arm a; 1 repetition"
    assert summarize("r1", [started(), plan()]).subset is None
    whole = record("r1", "2026-01-01T00:00:00+00:00", {"a": [True] * 3})
    part = as_record({**msgspec.to_builtins(record("r2", "2026-01-02T00:00:00+00:00",
                                                   {"a": [True]})),
                      "subset": {"tasks": ["t0"], "arms": ["a"], "repetitions": 1}})
    got = history([whole, part], "s")
    assert [(h.run, h.subset, h.against) for h in got] == [
        ("r1", None, None), ("r2", "task t0; arm a; 1 repetition", None)]
    assert published_summary(part).subset == "task t0; arm a; 1 repetition"
