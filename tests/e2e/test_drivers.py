"""External drivers (issue 15): a run worked only by the reference drivers in examples/drivers
gives the record `armbench run` gives; two drivers never hold one step; a driver that lists no
tool of a trial never gets it (the suite's timeout settles it not_run, and the done envelope
carries the table), nor does one that withholds the sandbox, env, unattended or clone
declaration; a trial's check stays with the driver whose machine holds its clone; a killed
driver's lease lapses and another finishes the run; the team's own armbench-benchmark workflow
(shared or by namespace, and its refusals); a trial of a ref arm leased by the reference driver
(its team installed at prepare, no init or pull)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from armbench.benchmark.trials.workfolder import work_folder_name
from e2e.conftest import ARMBENCH, FIX_ADD, World, arm_rows, dump, git, make_world, visible_task

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
PY_DRIVER = ROOT / "examples" / "drivers" / "driver.py"
SH_DRIVER = ROOT / "examples" / "drivers" / "driver.sh"
AGENT = "set -eu\ncat >/dev/null\necho \"$ARMBENCH_MODEL\" >> \"$E2E_OUT/invocations\"\n" + FIX_ADD
CAN = {"isolation": "sandbox", "env": True, "unattended": True, "workspace": ["clone"]}
VARYING = {"durationMs", "run", "at", "startedAt", "endedAt", "writtenAt", "chain", "id",
           "sourceHash", "duration_ms", "ledger", "createdAt", "generatedAt"}


def _world(root: Path, **suite: Any) -> World:
    world = make_world(root)
    world.team.tool("agent", AGENT)
    world.team.suite("s", **{"defaults": {"tool": "agent", "model": "m1"},
                             "arms": [{"name": "one"}, {"name": "two", "model": "m2"}], **suite})
    world.team.task("s", "a", **visible_task(world.project))
    world.init_and_pull()
    return world


def _start(world: World, *timeout: str) -> str:
    """The run started as the specification writes it: the workflow, its inputs (and a timeout)."""
    got = world.armbench("workflow", "start", "armbench-benchmark", "--inputs",
                         '{"suite":"s","aliases":"team"}', *timeout, "--driver", "external",
                         "--sandbox")
    assert got.code == 0, got
    return str(got.data["run"]["id"])


def test_workflow_start_takes_the_specs_inputs_and_timeout_and_refuses_what_it_cannot_run(
        tmp_path: Path) -> None:
    world = _world(tmp_path / "w", timeout="6h")
    run = _start(world, "--timeout", "6h")
    [started] = [e for e in world.events("RunStarted") if e.get("run", run) == run][-1:]
    assert started["timeout_s"] == 6 * 3600
    shorter = world.armbench("workflow", "start", "armbench-benchmark", "--inputs", '{"suite":"s"}',
                             "--timeout", "90m", "--driver", "external", "--sandbox")
    assert shorter.code == 0, shorter
    assert world.events("RunStarted")[-1]["timeout_s"] == 90 * 60
    before = len(world.events("RunStarted"))
    for argv, said in [
        (["armbench-benchmark", "--inputs", '{"suite":"s"}', "--timeout", "7h"],
         "--timeout 7h is longer than suite s's timeout of 6h"),
        (["armbench-benchmark", "--inputs", '{"suite":"s","aliases":"mine"}'],
         "--inputs names aliases 'mine'; expected team or member."),
        (["armbench-benchmark", "--inputs", '{"suite":"s","extra":1}'],
         "--inputs is not the benchmark workflow's inputs: Object contains unknown field `extra`"),
        (["armbench-benchmark", "--inputs", "{suite"], "--inputs is not JSON"),
        (["armbench-benchmark"], "armbench-benchmark needs --inputs naming its suite"),
        (["other-flow", "--inputs", '{"suite":"s"}'],
         "armbench starts only the benchmark workflow, armbench-benchmark; found 'other-flow'."),
        (["armbench-benchmark", "--inputs", '{"suite":"s"}', "--timeout", "6"],
         "--timeout: expected a duration such as 90s, 8m, 6h or 1h30m, found `6` with no unit"),
    ]:
        refused = world.armbench("workflow", "start", *argv, "--driver", "external", "--sandbox")
        assert refused.code == 2, refused
        assert refused.envelope["error"]["code"] == "invalid_inputs", refused
        assert said in refused.envelope["error"]["message"], refused
    assert len(world.events("RunStarted")) == before  # nothing refused was started


def _driver(world: World, argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, cwd=world.checkout, env={**world.env, "ARMBENCH": str(ARMBENCH)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _steady(value: Any) -> Any:
    """The record without what differs between two runs of one suite: timings, ids, hashes."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _next(world: World, run: str, **can: Any) -> dict[str, Any]:
    got = world.armbench("workflow", "next", run, "--prepare", "--can", json.dumps({**CAN, **can}))
    assert got.code == 0, got
    return got.data


@pytest.mark.parametrize("driver", ["python", "shell", "python-serve"])
def test_a_run_driven_by_the_reference_driver_records_what_armbench_run_records(
        tmp_path: Path, driver: str) -> None:
    external = local = _world(tmp_path / "w")  # one checkout, one team revision: two runs
    ran = local.armbench("run", "s", "--sandbox")
    assert ran.code == 0, ran
    run = _start(external)
    argv = {"python": [sys.executable, str(PY_DRIVER), run, "--tools", "agent"],
            "python-serve": [sys.executable, str(PY_DRIVER), run, "--tools", "agent", "--serve"],
            "shell": ["bash", str(SH_DRIVER), run, "agent"]}[driver]
    proc = _driver(external, argv)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    done = json.loads(out.strip().splitlines()[-1])
    assert done["state"] == "succeeded"
    want, got = local.record(ran.data["done"]["run"]), external.record(run)
    assert [t["result"] for t in got["trials"]] == ["passed", "passed"]
    assert _steady(got) == _steady(want)


def _serve(world: World, run: str) -> subprocess.Popen[str]:
    return subprocess.Popen([str(ARMBENCH), "workflow", "serve", run], cwd=world.checkout,
                            env=world.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _ask(server: subprocess.Popen[str], request: dict[str, Any] | str) -> dict[str, Any]:
    assert server.stdin and server.stdout
    server.stdin.write((request if isinstance(request, str) else json.dumps(request)) + "\n")
    server.stdin.flush()
    answer: dict[str, Any] = json.loads(server.stdout.readline())
    return answer


def test_serve_answers_a_bad_request_with_an_error_envelope_and_goes_on(tmp_path: Path) -> None:
    world = _world(tmp_path / "w", arms=[{"name": "one"}])
    run = _start(world)
    server = _serve(world, run)
    assert _ask(server, "not json")["error"]["code"] == "invalid_inputs"
    assert _ask(server, {"verb": "fly"})["error"]["code"] == "invalid_inputs"
    assert _ask(server, {"verb": "next", "can": {"isolation": "moon"}})["error"]["code"] \
        == "invalid_inputs"
    unknown = _ask(server, {"verb": "report", "lease": "l-nope", "outcome": "succeeded"})
    assert unknown["error"]["code"] == "unknown_lease"
    lease = _ask(server, {"verb": "next", "can": {**CAN, "tools": ["agent"]}})["data"]["lease"]
    assert lease["tool"] == "agent" and Path(lease["cwd"]).is_dir()
    assert _ask(server, {"verb": "report", "lease": lease["id"]})["error"]["code"] \
        == "invalid_inputs"  # neither outcome nor result
    renewed = _ask(server, {"verb": "renew", "lease": lease["id"]})["data"]["renewed"]
    assert renewed["lease"] == lease["id"]
    report = _ask(server, {"verb": "launch", "lease": lease["id"]})["data"]["report"]
    assert report["outcome"] == "succeeded"
    reported = _ask(server, {"verb": "report", "lease": lease["id"], "result": report})
    assert reported == {"data": {"reported": {"step": lease["step"], "lease": lease["id"]}}}
    done = _ask(server, {"verb": "next", "can": {**CAN, "tools": ["agent"]}})
    assert done["data"]["done"]["state"] == "succeeded"
    out, _ = server.communicate(timeout=60)  # it ended after the done envelope
    assert server.returncode == 0 and out == ""
    assert [t["result"] for t in world.record(run)["trials"]] == ["passed"]


def test_two_drivers_on_one_run_never_hold_the_same_step(tmp_path: Path) -> None:
    world = _world(tmp_path / "w", repetitions=3)
    run = _start(world)
    drivers = [_driver(world, [sys.executable, str(PY_DRIVER), run, "--tools", "agent",
                               "--name", name]) for name in ("d1", "d2")]
    for proc in drivers:
        proc.communicate(timeout=240)
        assert proc.returncode == 0
    leased = world.events("StepLeased")
    reported = [e["step"] for e in world.events("StepReported")]
    assert {e["driver"] for e in leased if e["step"].endswith(".prompt")} <= {"d1", "d2"}
    assert len(reported) == len(set(reported))  # each step settled once
    assert sorted(t["result"] for t in world.record(run)["trials"]) == ["passed"] * 6
    assert len(world.out_lines("invocations")) == 6  # no trial ran twice


def test_a_trials_check_stays_with_the_driver_that_holds_its_clone(tmp_path: Path) -> None:
    world = _world(tmp_path / "w", arms=[{"name": "one"}])
    run = _start(world)
    lease = _next(world, run, driver="a", tools=["agent"])["lease"]
    launched = world.armbench(*lease["launch"][1:])
    assert launched.code == 0, launched
    reported = world.armbench("workflow", "report", run, "--lease", lease["id"], "--outcome",
                              "succeeded")
    assert reported.code == 0, reported
    other = world.armbench("workflow", "next", run, "--can", json.dumps({"driver": "b"}))
    assert other.code == 0 and "wait" in other.data, other  # the clone is on a's machine
    assert "done" in _next(world, run, driver="a", tools=["agent"])
    checks = [e["driver"] for e in world.events("StepLeased") if e["step"].endswith(".check")]
    assert checks == ["a"]
    assert [t["result"] for t in world.record(run)["trials"]] == ["passed"]


def test_a_driver_that_lists_no_tool_of_a_trial_never_gets_it(tmp_path: Path) -> None:
    world = _world(tmp_path / "w", timeout="20s",
                   arms=[{"name": "one"}, {"name": "other", "tool": "nobody-runs-this"}])
    run = _start(world)
    seen = []
    while True:
        got = _next(world, run, tools=["agent"])
        if "done" in got:
            break
        if "wait" in got:
            time.sleep(0.5)
            continue
        lease = got["lease"]
        seen.append(lease["tool"])
        assert lease["arm"]["name"] == "one" and lease["cwd"] and lease["launch"]
        launched = world.armbench(*lease["launch"][1:])
        assert launched.code == 0, launched
        reported = world.armbench("workflow", "report", run, "--lease", lease["id"],
                                  "--outcome", "succeeded", "--duration-ms", "5")
        assert reported.code == 0, reported
    assert seen == ["agent"]
    trials = {t["arm"]: t["result"] for t in world.record(run)["trials"]}
    assert trials == {"one": "passed", "other": "not_run"}
    assert got["done"]["state"] == "timed_out"
    outputs = got["done"]["outputs"]  # the done envelope carries the table (criterion 12)
    rows = arm_rows(outputs["text"])
    assert {arm: (r["Planned"], r["Passed"]) for arm, r in rows.items()} == {
        "one": ("1", "1"), "other": ("1", "0")}
    assert {r["arm"]: r["passed"] for r in outputs["table"]["arms"]} == {"one": 1, "other": 0}


def test_the_done_envelope_carries_the_table_when_the_record_cannot_be_written(
        tmp_path: Path) -> None:
    world = _world(tmp_path / "w", arms=[{"name": "one"}])
    run = _start(world)
    runs = world.checkout / ".armbench" / "runs"
    shutil.rmtree(runs, ignore_errors=True)
    runs.write_text("not a folder\n")  # the report step cannot write the record
    while "done" not in (got := _next(world, run, tools=["agent"])):
        lease = got["lease"]
        assert world.armbench(*lease["launch"][1:]).code == 0
        assert world.armbench("workflow", "report", run, "--lease", lease["id"],
                              "--outcome", "succeeded").code == 0
    assert got["done"]["state"] == "failed"
    reported = [e for e in world.events("StepReported") if e["step"] == "report"]
    assert [e["cause"] for e in reported] == ["record_unwritable"]
    outputs = got["done"]["outputs"]  # projected from the log, as `run` prints it
    assert {arm: r["Passed"] for arm, r in arm_rows(outputs["text"]).items()} == {"one": "1"}
    assert [r["arm"] for r in outputs["table"]["arms"]] == ["one"]


@pytest.mark.parametrize("withheld", [
    {"isolation": "none"}, {"env": False}, {"unattended": False}, {"workspace": []},
    {"tools": ["nobody-runs-this"]}], ids=["no-sandbox", "no-env", "not-unattended",
                                            "no-clone", "tool-not-listed"])
def test_a_driver_that_withholds_a_trial_declaration_gets_no_trial(
        tmp_path: Path, withheld: dict[str, Any]) -> None:
    world = _world(tmp_path / "w", arms=[{"name": "one"}])
    run = _start(world)
    got = _next(world, run, **{"tools": ["agent"], **withheld})
    assert "wait" in got, got
    assert [e["step"] for e in world.events("StepLeased") if e["step"].endswith(".prompt")] == []
    assert "lease" in _next(world, run, tools=["agent"])  # the full declaration gets the trial


def test_a_killed_driver_is_recovered_by_lease_expiry(tmp_path: Path) -> None:
    world = _world(tmp_path / "w", arms=[{"name": "one"}])
    world.env["ARMBENCH_LEASE_TTL"] = "2"
    run = _start(world)
    lease = _next(world, run, tools=["agent"])["lease"]
    # the driver dies here, holding the lease and its prepared clone
    time.sleep(2.5)
    proc = _driver(world, [sys.executable, str(PY_DRIVER), run, "--tools", "agent"])
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    expired = [e for e in world.events("LeaseExpired") if e["lease"] == lease["id"]]
    assert expired and not Path(lease["cwd"]).exists()
    assert [t["result"] for t in world.record(run)["trials"]] == ["passed"]
    late = world.armbench("workflow", "report", run, "--lease", lease["id"], "--outcome",
                          "succeeded")
    assert late.code == 2 and late.error["code"] == "unknown_lease"


@pytest.mark.parametrize("verb", [("report", "--outcome", "succeeded"), ("renew",), ("launch",)])
def test_every_error_envelope_of_the_protocol_exits_2(tmp_path: Path, verb: tuple[str, ...]) -> None:
    world = _world(tmp_path / "w", arms=[{"name": "one"}])
    run = _start(world)
    got = world.armbench("workflow", verb[0], run, "--lease", "l-nope", *verb[1:])
    assert (got.code, got.error["code"]) == (2, "unknown_lease"), got
    other = world.armbench("workflow", verb[0], "r-nope", "--lease", "l-nope", *verb[1:])
    assert other.code == 2 and other.error is not None, other


def test_a_driver_killed_while_its_tool_runs_is_recovered(tmp_path: Path) -> None:
    world = make_world(tmp_path / "w")
    world.team.tool("agent", "set -eu\ncat >/dev/null\nif [ ! -e \"$E2E_OUT/slept\" ]; then "
                    "touch \"$E2E_OUT/slept\"; sleep 600; fi\n" + FIX_ADD)
    world.team.suite("s", arms=[{"name": "one"}])
    world.team.task("s", "a", **visible_task(world.project))
    world.init_and_pull()
    world.env["ARMBENCH_LEASE_TTL"] = "3"
    run = _start(world)
    first = _driver(world, [sys.executable, str(PY_DRIVER), run, "--tools", "agent"])
    while not (world.out / "slept").exists():
        time.sleep(0.2)
    first.kill()
    first.communicate()
    second = _driver(world, [sys.executable, str(PY_DRIVER), run, "--tools", "agent"])
    out, err = second.communicate(timeout=240)
    assert second.returncode == 0, err
    assert [t["result"] for t in world.record(run)["trials"]] == ["passed"]


OVERRIDE = {
    "schemaVersion": "v1alpha1", "name": "armbench-benchmark",
    "inputs": {"suite": "string", "aliases": "string"},
    "steps": [{"id": "plan", "command": 'armbench plan "$SUITE" --aliases "$ALIASES"'},
              {"id": "trials", "needs": ["plan"], "workflow": {"from": "plan"}}],
    "finally": [{"id": "report", "command": "armbench report"}],
}


OVERRIDE_NAMED = "Running the team's {}, which replaces armbench's benchmark workflow."


def _override_world(root: Path, files: dict[str, dict[str, Any]]) -> World:
    world = make_world(root)
    world.team.tool("agent", AGENT)
    world.team.suite("s")
    world.team.task("s", "a", **visible_task(world.project))
    for rel, body in files.items():
        world.team.write(rel, dump(body))
    world.init_and_pull()
    return world


def _ran(world: World, *args: str) -> dict[str, Any]:
    """The record of a run that exited 0."""
    ran = world.armbench("run", "s", "--sandbox", *args)
    assert ran.code == 0, ran
    record: dict[str, Any] = world.record(ran.data["done"]["run"])
    assert [t["result"] for t in record["trials"]] == ["passed"]
    return record | {"stderr": ran.stderr}


def test_the_teams_override_is_named_and_recorded_as_the_teams(tmp_path: Path) -> None:
    world = _override_world(tmp_path / "w", {"workflows/armbench-benchmark.yaml": OVERRIDE})
    record = _ran(world)
    assert OVERRIDE_NAMED.format("workflows/armbench-benchmark.yaml") in record["stderr"]
    assert world.events("RunStarted")[-1]["origin"] == "team"
    assert record["workflow"]["origin"] == "team"


def test_a_namespaced_override_runs_for_a_member_whose_role_receives_its_namespace(
        tmp_path: Path) -> None:
    world = _override_world(tmp_path / "w", {
        "manifest/roles.yaml": {"roles": [{"id": "dev", "resources": {"workflows": ["dev"]}}]},
        "workflows/dev/armbench-benchmark.yaml": OVERRIDE})
    default = _ran(world)  # no role yet: the dev namespace is not this member's
    assert "Running the team's" not in default["stderr"]
    assert default["workflow"]["origin"] == "default"
    config = world.checkout / ".armbench" / "config.yaml"
    config.write_text(config.read_text() + "roles: [dev]\n")
    record = _ran(world)
    assert OVERRIDE_NAMED.format("workflows/dev/armbench-benchmark.yaml") in record["stderr"]
    assert record["workflow"]["origin"] == "team"


def test_an_override_without_the_suite_input_is_refused_before_a_run(tmp_path: Path) -> None:
    world = _override_world(tmp_path / "w", {
        "workflows/armbench-benchmark.yaml": {**OVERRIDE, "inputs": {"aliases": "string"}}})
    ran = world.armbench("run", "s", "--sandbox")
    assert ran.code == 2, ran
    assert ran.error == {"code": "invalid_inputs", "message": (
        "The team's workflows/armbench-benchmark.yaml replaces armbench's benchmark workflow "
        "and takes no input suite, so armbench run cannot give it the suite. Add inputs: "
        "{ suite: string } to it, or remove it to run armbench's default.")}
    assert world.events("RunStarted") == []
    work = world.root / "tmp" / work_folder_name()  # the refused run's tool copies are gone
    assert not work.exists() or list(work.iterdir()) == [], list(work.iterdir())


def test_an_override_two_namespaces_define_is_reported_at_pull_and_refused_at_run_start(
        tmp_path: Path) -> None:
    world = make_world(tmp_path / "w")
    world.team.tool("agent", AGENT)
    world.team.suite("s")
    world.team.task("s", "a", **visible_task(world.project))
    world.team.write("manifest/roles.yaml", dump(
        {"roles": [{"id": "dev", "resources": {"workflows": ["dev", "ops"]}}]}))
    for ns in ("dev", "ops"):
        world.team.write(f"workflows/{ns}/armbench-benchmark.yaml", dump(OVERRIDE))
    world.team.publish()
    assert world.armbench("init", "--team", str(world.team.bare)).code == 0
    config = world.checkout / ".armbench" / "config.yaml"
    config.write_text(config.read_text() + "roles: [dev]\n")
    pulled = world.armbench("pull")
    assert pulled.code == 0, pulled  # pull completes: the suite is still cached
    assert pulled.data["pull"]["cached"] == ["s"]
    assert [d for d in pulled.data["pull"]["diagnostics"]
            if d["code"] == "workflow_namespace_conflict"] == [{
                "file": "workflows/dev/armbench-benchmark.yaml", "line": None, "severity": "error",
                "code": "workflow_namespace_conflict", "path": None, "message": (
                    "Workflow `armbench-benchmark` replaces armbench's benchmark workflow, and 2 "
                    "namespaces this checkout receives define it, "
                    "workflows/dev/armbench-benchmark.yaml and "
                    "workflows/ops/armbench-benchmark.yaml; one is expected, so `armbench run` "
                    "refuses every suite rather than pick one or fall back to armbench's own. "
                    "Rename or remove all but one, or drop one of the roles from "
                    ".armbench/config.yaml, and pull again.")}]
    assert ("workflows/dev/armbench-benchmark.yaml: error: Workflow `armbench-benchmark`"
            in pulled.stderr)
    ran = world.armbench("run", "s", "--sandbox")
    assert ran.code == 2, ran
    assert ran.error["code"] == "workflow_namespace_conflict"
    assert ("workflows/dev/armbench-benchmark.yaml and workflows/ops/armbench-benchmark.yaml"
            in ran.error["message"])
    assert world.events("RunStarted") == []


def test_an_override_without_the_aliases_input_is_refused_only_under_member_aliases(
        tmp_path: Path) -> None:
    world = _override_world(tmp_path / "w", {"workflows/armbench-benchmark.yaml": {
        **OVERRIDE, "inputs": {"suite": "string"},
        "steps": [{"id": "plan", "command": 'armbench plan "$SUITE"'}, OVERRIDE["steps"][1]]}})
    refused = world.armbench("run", "s", "--sandbox", "--member-aliases")
    assert refused.code == 2, refused
    assert refused.error == {"code": "invalid_inputs", "message": (
        "The team's workflows/armbench-benchmark.yaml replaces armbench's benchmark workflow "
        "and takes no input aliases, so armbench run --member-aliases cannot give it the "
        "aliases. Add inputs: { aliases: string } to it, or remove it to run armbench's "
        "default.")}
    assert world.events("RunStarted") == []
    assert _ran(world)["workflow"]["origin"] == "team"  # without --member-aliases it runs


SEEING_AGENT = ("set -eu\ncat >/dev/null\n"
                "skills=$(ls \"$ARMBENCH_TEAM_DIR/skills\" 2>/dev/null | tr '\\n' ' ')\n"
                "head=$(git rev-parse HEAD 2>/dev/null || echo none)\n"
                "echo \"$ARMBENCH_MODEL $head ${ARMBENCH_TEAM_REVISION:-} skills: $skills\" "
                ">> \"$E2E_OUT/seen\"\n" + FIX_ADD)
SHIM = ("#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$E2E_OUT/driver-argv\"\n"
        "exec \"$E2E_ARMBENCH\" \"$@\"\n")
"""The armbench the driver runs: the real one, each call's arguments logged."""


def test_a_driver_leased_a_trial_of_a_ref_arm_gets_its_commit_and_runs_no_init_or_pull(
        tmp_path: Path) -> None:
    """team-asset-arms.md criterion 8: the reference driver, declaring the sandbox and listing
    the arm's tool, gets a clone armbench prepared with the arm's team installed from the mirror
    by commit; it runs neither init nor pull, and the trial records the branch's commit."""
    world = make_world(tmp_path / "w")
    world.team.tool("agent", SEEING_AGENT)
    world.team.write("skills/release/SKILL.md",
                     "---\nname: release\ndescription: Cut a release.\n---\nTag it.\n")
    world.team.suite("s", defaults={"tool": "agent", "model": "m1"},
                     arms=[{"name": "base"},
                           {"name": "no-skill", "team": "bench/no-skill"}])
    world.team.task("s", "a", **visible_task(world.project))
    world.team.publish()
    git(world.team.work, "checkout", "-q", "-b", "bench/no-skill")
    git(world.team.work, "rm", "-rq", "skills/release")
    git(world.team.work, "commit", "-qm", "no release skill")
    git(world.team.work, "push", "-q", "origin", "HEAD:bench/no-skill")
    branch = git(world.team.work, "rev-parse", "HEAD")
    git(world.team.work, "checkout", "-q", "main")
    main = world.init_and_pull().data["pull"]["revision"]  # the pulled revision: main, published again
    mirror = world.checkout / ".armbench" / "team.git"
    pulled = (world.checkout / ".armbench" / "pull.json").read_bytes()
    refs = git(mirror, "for-each-ref")
    run = _start(world)
    shim = tmp_path / "armbench-shim"
    shim.write_text(SHIM)
    shim.chmod(0o755)
    proc = subprocess.Popen([sys.executable, str(PY_DRIVER), run, "--tools", "agent"],
                            cwd=world.checkout, env={**world.env, "ARMBENCH": str(shim)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    assert json.loads(out.strip().splitlines()[-1])["state"] == "succeeded"
    verbs = {" ".join(line.split()[:2]) for line in world.out_lines("driver-argv")}
    assert verbs == {"workflow next", "workflow launch", "workflow report"}  # no init, no pull
    assert git(mirror, "for-each-ref") == refs  # nothing fetched
    assert (world.checkout / ".armbench" / "pull.json").read_bytes() == pulled
    start = world.project.commits["test"]
    seen = set(world.out_lines("seen"))  # each tool ran in a prepared clone of the task
    assert seen == {f"m1 {start} {main} skills: release ", f"m1 {start} {branch} skills: "}
    leased = {e["step"] for e in world.events("StepLeased") if e["step"].endswith(".prompt")}
    assert len(leased) == 2
    trials = {t["arm"]: t for t in world.record(run)["trials"]}
    assert trials["no-skill"]["agent"]["team"]["revision"] == branch
    assert trials["base"]["agent"]["team"]["revision"] == main
    assert {t["result"] for t in trials.values()} == {"passed"}


TOKEN_AGENT = ("set -eu\ncat >/dev/null\necho \"token=${GITHUB_TOKEN:-withheld}\" >> \"$E2E_OUT/seen\"\n"
               + FIX_ADD)
BEST_EFFORT = {**OVERRIDE, "steps": [
    OVERRIDE["steps"][0], {**OVERRIDE["steps"][1], "requires": {"isolation": "sandbox"}}]}


def _token_world(root: Path, override: dict[str, Any]) -> World:
    world = make_world(root)
    world.team.tool("agent", TOKEN_AGENT)
    world.team.suite("s")
    world.team.task("s", "a", **visible_task(world.project))
    world.team.write("workflows/armbench-benchmark.yaml", dump(override))
    world.init_and_pull()
    world.env["GITHUB_TOKEN"] = "ghp_e2e"
    return world


def test_an_override_without_strict_runs_best_effort_without_a_declared_sandbox(tmp_path: Path) -> None:
    """benchmark-suites.md: a team whose runners are not declared sandboxes drops `strict`; its
    run needs no --sandbox, no credential is withheld, and the caption and record say so."""
    world = _token_world(tmp_path / "w", BEST_EFFORT)
    ran = world.armbench("run", "s")
    assert ran.code == 0, ran
    assert world.out_lines("seen") == ["token=ghp_e2e"]  # best-effort: nothing withheld
    assert "isolation: unenforced" in ran.stderr and "no credential was withheld" in ran.stderr
    record = world.record(ran.data["done"]["run"])
    assert record["isolation"] == "unenforced" and record["workflow"]["origin"] == "team"
    assert [t["result"] for t in record["trials"]] == ["passed"]
    assert world.events("RunStarted")[-1]["enforced"] is False


def test_an_override_without_strict_still_withholds_in_a_declared_sandbox(tmp_path: Path) -> None:
    world = _token_world(tmp_path / "w", BEST_EFFORT)
    ran = world.armbench("run", "s", "--sandbox")
    assert ran.code == 0, ran
    assert world.out_lines("seen") == ["token=withheld"]
    assert world.record(ran.data["done"]["run"])["isolation"] != "unenforced"
    assert "unenforced" not in ran.stderr


def test_a_strict_override_without_a_declared_sandbox_is_refused_as_the_default_is(tmp_path: Path) -> None:
    strict = {**OVERRIDE, "steps": [OVERRIDE["steps"][0], {
        **OVERRIDE["steps"][1], "requires": {"isolation": "sandbox", "strict": True}}]}
    world = _token_world(tmp_path / "w", strict)
    ran = world.armbench("run", "s")
    assert ran.code == 2, ran
    assert ran.error["code"] == "requirement_unmet"
    assert world.events("RunStarted") == []
