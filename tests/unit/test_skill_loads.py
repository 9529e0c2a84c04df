"""Skill loads: read from each CLI's output, then the record's used and skillChanges and the
printed skill-load table, given events."""

from __future__ import annotations

import json

import msgspec
from test_results_projection import REV, check, prompt, started

from armbench.benchmark.agents.base import Reading, skills_used
from armbench.benchmark.agents.claude import read_claude
from armbench.benchmark.agents.codex import read_codex
from armbench.benchmark.agents.gemini import read_gemini
from armbench.benchmark.agents.opencode import read_opencode
from armbench.benchmark.agents.places import home_files
from armbench.benchmark.trials.teaminstall import TeamInstall
from armbench.ledger.events import (
    Agent,
    PlanFrozen,
    PlannedArm,
    PlannedTask,
    PlannedTrial,
    PulledTeam,
    RefTeam,
    WithoutTeam,
)
from armbench.projections.record import build_record
from armbench.projections.results import fold_run
from armbench.projections.table import build_table, render_markdown
from armbench.suites.teamassets import TeamAssets

RESULT = {"type": "result", "subtype": "success", "is_error": False, "session_id": "s",
          "modelUsage": {"m": {"inputTokens": 1, "outputTokens": 1}}}


def lines(*events: dict) -> str:
    return "".join(json.dumps(e) + "\n" for e in events)


def test_claude_code_loads_are_its_skill_tool_calls() -> None:
    call = {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "name": "Skill", "input": {"skill": "release"}},
        {"type": "tool_use", "name": "Bash", "input": {"command": "cat skills/x/SKILL.md"}}]}}
    assert read_claude(lines({"type": "system", "subtype": "init"}, call, RESULT)).skills == ("release",)
    assert read_claude(lines(RESULT)).skills == ()
    assert read_claude(json.dumps([call, RESULT])).skills == ("release",)


def test_codex_loads_are_the_skill_files_its_shell_read() -> None:
    command = "/bin/bash -lc 'cat ~/.codex/skills/release/SKILL.md'"
    done = {"type": "item.completed", "item": {"type": "command_execution", "command": command}}
    turn = {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}}
    assert read_codex(lines(done, turn)).skills == ("release",)
    assert read_codex(lines(turn)).skills == () and read_codex("").skills is None


def test_opencode_loads_are_its_skill_tool_calls() -> None:
    use = {"type": "tool_use", "part": {"tool": "skill", "state": {"input": {"name": "release"}}}}
    step = {"type": "step_finish", "part": {"tokens": {"input": 1, "output": 1}, "cost": 0}}
    assert read_opencode(lines(use, step)).skills == ("release",)
    assert read_opencode(lines(step)).skills == ()


def test_gemini_shows_that_a_skill_was_activated_but_not_which() -> None:
    stats = {"models": {}, "tools": {"byName": {"activate_skill": {"count": 1}}}}
    reading = read_gemini(json.dumps({"session_id": "s", "stats": stats}), "")
    assert (reading.skills, reading.skills_unclear) == ((), True)
    install = TeamInstall(kind="pulled", revision=REV, skills={"release": "d", "audit": "e"})
    assert skills_used(install, reading) == {"audit": "unknown", "release": "unknown"}


def test_used_lists_the_teams_skills_loaded_and_nothing_when_unobserved_or_uninstalled() -> None:
    install = TeamInstall(kind="pulled", revision=REV, skills={"release": "d"})
    assert skills_used(install, Reading(skills=("release", "init"))) == {"release": "loaded"}
    assert skills_used(install, Reading(skills=())) == {}
    assert skills_used(install, Reading()) is None
    assert skills_used(None, Reading(skills=("release",))) is None


def test_each_cli_gets_the_skills_and_instructions_in_its_own_places_and_a_command_tool_none() -> None:
    assets = TeamAssets(skills={"release": {"SKILL.md": b"s"}}, rules={"c.md": b"r"},
                        agents={"rev.md": b"a"})
    assert sorted(home_files("claude", assets)) == [
        ".claude/CLAUDE.md", ".claude/agents/rev.md", ".claude/skills/release/SKILL.md"]
    assert sorted(home_files("codex", assets)) == [".codex/AGENTS.md", ".codex/skills/release/SKILL.md"]
    assert sorted(home_files("opencode", assets)) == [
        ".config/opencode/AGENTS.md", ".config/opencode/agents/rev.md",
        ".config/opencode/skills/release/SKILL.md"]
    assert sorted(home_files("gemini", assets)) == [".gemini/GEMINI.md", ".gemini/skills/release/SKILL.md"]
    assert home_files("my-script", assets) == {} and home_files("claude", TeamAssets()) == {}


# ---------------------------------------------------------------- the record and the table

ARMS = [PlannedArm(name="with-skill", tool="claude", team=PulledTeam(revision=REV)),
        PlannedArm(name="no-release", tool="claude",
                   team=WithoutTeam(paths=["skills/release"], revision=REV, commit=REV)),
        PlannedArm(name="without-skill", tool="claude",
                   team=RefTeam(ref="bench/x", revision="b" * 40))]


def plan(reps: int) -> PlanFrozen:
    task = PlannedTask(id="t", title="T", source_hash="h", starting_commit="c" * 40, prompt="p",
                       check_run="c")
    trials = [PlannedTrial(task="t", arm=a.name, repetition=r, order=i, lane=1,
                           prompt_step=f"p.{a.name}.{r}", check_step=f"c.{a.name}.{r}")
              for i, (r, a) in enumerate((r, a) for r in range(reps) for a in ARMS)]
    return PlanFrozen(suite="s", suite_hash="h", repo="https://x.invalid/r", repetitions=reps,
                      parallel=1, timeout_s=60, baseline_team_revision=REV, tasks=[task],
                      arms=ARMS, trials=trials)


def ran(arm: str, rep: int, used: dict | None, changes: dict | None = None) -> list:
    revision = "b" * 40 if arm == "without-skill" else REV
    agent = Agent(tool="claude", team_revision=revision, skills_used=used, skill_changes=changes or {})
    return [prompt(f"p.{arm}.{rep}", agent=agent), check(f"c.{arm}.{rep}", "passed", exit_code=0)]


def six_each() -> list:
    removed = {"release": "removed"}
    events: list = []
    for rep in range(6):
        events += ran("with-skill", rep, {"release": "loaded"} if rep < 4 else {})
        events += ran("no-release", rep, {}, removed)
        events += ran("without-skill", rep, None if rep == 5 else {}, removed)
    return events


def test_the_skill_load_table_reads_as_the_spec_shows_it() -> None:
    view = fold_run([started(), plan(6), *six_each()])
    text = render_markdown(build_table(view))
    assert ("| Arm | Skill | Change | Loaded in this arm | Loaded in the defaults arm |\n"
            "| --- | --- | --- | --- | --- |\n"
            "| no-release | release | removed | 0/6 | 4/6 |\n"
            "| without-skill | release | removed | 0/5, 1 unknown | 4/6 |\n") in text


def test_a_driver_that_reports_no_used_leaves_both_cells_unknown() -> None:
    events: list = []
    for rep in range(3):
        events += ran("with-skill", rep, None)
        events += ran("no-release", rep, None, {"release": "removed"})
    arms_plan = plan(3)
    arms_plan = PlanFrozen(**{**{f: getattr(arms_plan, f) for f in arms_plan.__struct_fields__},
                              "trials": [t for t in arms_plan.trials if t.arm != "without-skill"]})
    rows = build_table(fold_run([started(), arms_plan, *events])).skill_loads
    assert [(r.arm, r.loaded, r.loaded_defaults) for r in rows] == [
        ("no-release", "unknown (3)", "unknown (3)")]


def test_the_record_has_used_per_trial_and_skill_changes_per_arm() -> None:
    view = fold_run([started(), plan(6), *six_each()])
    record = msgspec.to_builtins(build_record(view, run="r1"))
    assert record["skillChanges"] == [
        {"arm": "no-release", "defaults": "with-skill", "skills": [{"name": "release", "change": "removed"}]},
        {"arm": "without-skill", "defaults": "with-skill",
         "skills": [{"name": "release", "change": "removed"}]}]
    first = record["trials"][0]
    assert first["arm"] == "with-skill" and first["used"] == {"release": "loaded"}
    unseen = [t for t in record["trials"] if t["arm"] == "without-skill" and t["repetition"] == 5]
    assert "used" not in unseen[0] and "deviation" not in unseen[0]


def test_no_changed_skill_no_table_and_no_skill_changes() -> None:
    events: list = []
    for rep in range(2):
        for arm in ("with-skill", "no-release", "without-skill"):
            events += ran(arm, rep, {})
    view = fold_run([started(), plan(2), *events])
    assert build_table(view).skill_loads == [] and "skillChanges" not in msgspec.to_builtins(
        build_record(view, run="r1"))
    assert "Loaded in this arm" not in render_markdown(build_table(view))
