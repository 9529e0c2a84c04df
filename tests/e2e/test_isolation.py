"""Criterion 3 (all but team-asset delivery) and the plan half of criterion 11.

The probe tool records, outside the clone, what a trial's clone is. On its first trial it waits
while the member (this test, outside the sandbox, which shows a tool neither the team repo nor the
checkout) pushes a new team commit that adds an arm to the suite and runs `armbench pull` in the
checkout: the run must go on with the plan and the team revision it froze.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass

import pytest

from e2e.conftest import FIX_ADD, Result, World, dump, git, hidden_task, make_world, visible_task

pytestmark = pytest.mark.e2e

PROBE = r"""
set -u
cat > /dev/null
n=$(ls "$E2E_OUT" | grep -c '^probe-.*\.txt$')
f="$E2E_OUT/probe-$n"
{
  echo "head=$(git rev-parse HEAD)"
  echo "prepared=${ARMBENCH_PROJECT_COMMIT:-}"
  echo "team=${ARMBENCH_TEAM_REVISION:-}"
  echo "model=${ARMBENCH_MODEL:-}"
  echo "remotes=$(git remote -v | wc -l)"
  echo "gitdir=$(if [ -d .git ] && [ ! -L .git ]; then echo dir; else echo other; fi)"
  echo "alternates=$(if [ -e .git/objects/info/alternates ]; then echo yes; else echo no; fi)"
  echo "commondir=$(git rev-parse --git-common-dir)"
} > "$f.txt"
git remote -v > "$f.remotes"
if [ "$n" = 0 ]; then
  touch "$E2E_OUT/waiting"
  for _ in $(seq 600); do [ -e "$E2E_OUT/resume" ] && break; sleep 0.1; done
fi
""" + FIX_ADD


def member_pushes_and_pulls_mid_run(world: World) -> None:
    """Once the first trial waits: push a team commit that adds an arm and maps the suite's
    model alias to another model, and pull it."""
    out = world.out
    for _ in range(600):
        if (out / "waiting").exists():
            break
        time.sleep(0.1)
    try:
        work = world.team.work
        (work / "benchmarks" / "iso" / "suite.yaml").write_text((out / "suite-v2.yaml").read_text())
        (work / "models" / "aliases.yaml").write_text((out / "aliases-v2.yaml").read_text())
        git(work, "commit", "-qam", "iso: one more arm, pushed during the run")
        git(work, "push", "-q", "origin", "HEAD:main")
        (out / "pushed").write_text(git(work, "rev-parse", "HEAD"))
        pulled = world.armbench("pull")
        (out / "mid-pull.err").write_text(pulled.stderr)
        (out / "mid-pull.code").write_text(str(pulled.code))
    finally:
        (out / "resume").touch()

ARMS = [{"name": "base"}]


@dataclass
class Ran:
    world: World
    result: Result
    record: dict
    baseline_revision: str
    before: tuple[str, str]
    after: tuple[str, str]


def probes(world: World) -> list[dict[str, str]]:
    found = sorted(world.out.glob("probe-*.txt"), key=lambda p: int(p.stem.split("-")[1]))
    return [dict(line.split("=", 1) for line in p.read_text().splitlines()) for p in found]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    world = make_world(tmp_path_factory.mktemp("isolation"))
    team = world.team
    team.tool("agent", PROBE)
    team.aliases({"strong": {"agent": "m-base"}})
    suite = {"defaults": {"tool": "agent", "model": "strong"}, "arms": ARMS, "repetitions": 1}
    team.suite("iso", **suite)
    team.task("iso", "hidden", **hidden_task(world.project))
    team.task("iso", "visible", **visible_task(world.project))
    world.init_and_pull()
    baseline_revision = git(team.work, "rev-parse", "HEAD")
    v2 = {"schemaVersion": "v1alpha1", "name": "iso", "repo": "https://example.invalid/e2e/calc",
          **suite, "arms": [*ARMS, {"name": "extra", "model": "m-extra"}], "timeout": "2m"}
    (world.out / "suite-v2.yaml").write_text(dump(v2))
    (world.out / "aliases-v2.yaml").write_text(dump(
        {"schemaVersion": "v1alpha1", "aliases": {"strong": {"agent": "m-changed"}}}))
    # the member's checkout has work in progress: a tracked change and an untracked file
    (world.checkout / "README.md").write_text("# calc\n\nwork in progress\n")
    (world.checkout / "notes.txt").write_text("mine\n")
    before = world.project.status()
    member = threading.Thread(target=member_pushes_and_pulls_mid_run, args=(world,))
    member.start()
    result = world.armbench("run", "iso", "--sandbox")
    member.join()
    after = world.project.status()
    assert result.envelope is not None, result
    record = world.record(result.data["done"]["run"])
    return Ran(world, result, record, baseline_revision, before, after)


def test_the_run_succeeds_and_every_trial_ran(ran: Ran) -> None:
    assert ran.result.code == 0, ran.result
    assert len(ran.record["trials"]) == 2
    assert {t["result"] for t in ran.record["trials"]} == {"passed"}
    assert len(probes(ran.world)) == 2


def test_every_trial_starts_at_its_tasks_starting_commit(ran: Ran) -> None:
    starting = {t["id"]: t["startingCommit"] for t in ran.record["tasks"]}
    assert starting == {"hidden": ran.world.project.commits["start"],
                        "visible": ran.world.project.commits["test"]}
    for trial in ran.record["trials"]:
        assert trial["agent"]["project"]["commit"] == starting[trial["task"]]
    for probe in probes(ran.world):
        assert probe["head"] == probe["prepared"]
        assert probe["head"] in starting.values()


def test_a_trials_clone_has_no_remote_and_git_data_of_its_own(ran: Ran) -> None:
    for n, probe in enumerate(probes(ran.world)):
        assert probe["remotes"] == "0"
        assert (ran.world.out / f"probe-{n}.remotes").read_text() == ""
        assert probe["gitdir"] == "dir"
        assert probe["alternates"] == "no"
        assert probe["commondir"] == ".git"


def test_the_members_checkout_is_the_same_before_and_after_the_run(ran: Ran) -> None:
    head, status = ran.before
    assert head == ran.world.project.commits["fix"]
    assert " M README.md" in status.splitlines() and "?? notes.txt" in status.splitlines()
    assert ran.after == ran.before


def test_a_push_and_pull_during_the_run_do_not_change_the_trials_team_revision(ran: Ran) -> None:
    out = ran.world.out
    assert (out / "mid-pull.code").read_text().strip() == "0", (out / "mid-pull.err").read_text()
    pushed = (out / "pushed").read_text().strip()
    assert pushed != ran.baseline_revision
    pulled = json.loads((ran.world.checkout / ".armbench" / "pull.json").read_text())
    assert pulled["revision"] == pushed  # the member's checkout did move on
    assert ran.record["baselineTeamRevision"] == ran.baseline_revision
    for trial in ran.record["trials"]:
        assert trial["agent"]["team"]["revision"] == ran.baseline_revision
    assert [p["team"] for p in probes(ran.world)] == [ran.baseline_revision] * 2


def test_editing_the_suite_and_pulling_during_the_run_does_not_change_its_plan(ran: Ran) -> None:
    assert [a["name"] for a in ran.record["arms"]] == ["base"]
    assert {t["arm"] for t in ran.record["trials"]} == {"base"}
    assert len(ran.record["trials"]) == 2
    frozen = ran.world.events("PlanFrozen")
    assert [a["name"] for a in frozen[0]["arms"]] == ["base"]
    assert "extra" in (ran.world.team.work / "benchmarks" / "iso" / "suite.yaml").read_text()


def test_an_alias_changed_and_pulled_during_the_run_does_not_change_its_trials_model(
        ran: Ran) -> None:
    """Criterion 7: the arm's model was resolved once, at plan; the pushed and pulled
    `models/aliases.yaml` maps the alias to another model, and no trial sees it."""
    assert "m-changed" in (ran.world.team.work / "models" / "aliases.yaml").read_text()
    assert [a["model"] for a in ran.record["arms"]] == ["m-base"]
    assert {t["agent"]["model"]["requested"] for t in ran.record["trials"]} == {"m-base"}
    assert [p["model"] for p in probes(ran.world)] == ["m-base", "m-base"]


def test_a_checkout_whose_team_revision_left_the_remote_is_refused_before_any_run(ran: Ran) -> None:
    world = ran.world
    work = world.team.work
    git(work, "checkout", "-q", "--orphan", "rewritten")
    git(work, "rm", "-rq", "--cached", ".")
    (work / "armbench.yaml").write_text("schemaVersion: v1alpha1\nname: rewritten\n")
    git(work, "add", "armbench.yaml")
    git(work, "commit", "-qm", "an unrelated history")
    git(work, "push", "-qf", "origin", "rewritten:main")
    runs_before = len(world.events("RunStarted"))
    refused = world.armbench("run", "iso", "--sandbox")
    assert refused.code == 2, refused
    assert refused.error["code"] == "team_ref_blocked"
    assert len(world.events("RunStarted")) == runs_before == 1
