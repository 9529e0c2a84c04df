"""Arms that change the team's assets (team-asset-arms.md), through the installed command.

One team repo for the module: main holds a shared skill `release`, the `dev` namespace's own
`release` and `lint` (the member's role `dev` receives them), an `ops` namespace the member does
not receive, a rule, an instruction file and a scorer `tidy` (judged by a scripted `judge` tool);
the branch `bench/no-skill` removes both `release` skills and also changes `models/aliases.yaml`
and the scorer's rubric. A scripted tool fixes the bug unless `$E2E_FAIL` names its call
(`<task>:<n>`, the n-th call for that task in this run), `$E2E_ERROR` makes it exit 3, or
`$E2E_SLEEP_AT` makes it sleep (after leaving `asleep-<tag>` in `$E2E_OUT`) until it is stopped.
Delivery into the trial's home is not tested here (the delivery tests do that), only the team tree
a `without` arm's trial sees; these are the frozen plan, the record, the table, the pairs, the
member's own files and the refusals (criteria 2, 3, 5, 6, 7, 9, 10, 12, 16).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from e2e.conftest import (
    FIX_ADD,
    Result,
    World,
    arm_rows,
    dump,
    git,
    git_raw,
    hidden_task,
    interrupted,
    make_world,
)
from e2e.conftest import (
    TIDY_JUDGE as JUDGE,
)
from e2e.conftest import (
    TIDY_SCORER as SCORER,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

AGENT = r'''task=$(sed -n 's/^Task \([a-z0-9-]*\):.*/\1/p' "$ARMBENCH_PROMPT_FILE" | head -1)
count="$E2E_OUT/calls-${E2E_TAG:-run}-$task"
n=$(cat "$count" 2>/dev/null || echo 0)
echo $((n + 1)) > "$count"
if [ "${E2E_SLEEP_AT:-}" = "$task:$n" ]; then touch "$E2E_OUT/asleep-$E2E_TAG"; sleep 60; fi
if [ "${E2E_ERROR:-}" = "$task:$n" ]; then exit 3; fi
if [ "${E2E_FAIL:-}" = "$task:$n" ]; then exit 0; fi
''' + FIX_ADD

LISTER = r"""cat > /dev/null
seen=$(cd "$ARMBENCH_TEAM_DIR" && find . -type f | LC_ALL=C sort | tr '\n' ' ')
echo "$seen| $(tail -1 "$ARMBENCH_TEAM_DIR/skills/release/SKILL.md")" >> "$E2E_OUT/team-dir-$E2E_TAG"
""" + FIX_ADD
"""A scripted tool that leaves one line per trial: the files of its team tree, and the text of
the `release` skill it got."""


ROLES = {"roles": [{"id": "dev", "resources": {"skills": ["dev"]}},
                   {"id": "ops", "resources": {"skills": ["ops"]}}]}
WITHOUT_RELEASE = {"without": ["skills/release", "skills/dev/release"]}


@dataclass
class Team:
    world: World
    pulled: Result
    main: str
    branch: str

    def plan(self, suite: str) -> dict[str, Any]:
        got = self.world.armbench("plan", suite)
        assert got.code == 0, got
        return got.data["plan"]["plan"]

    def run(self, suite: str, **env: str) -> Result:
        got = self.world.armbench("run", suite, "--sandbox", env={"E2E_TAG": suite, **env})
        assert got.envelope is not None and "data" in got.envelope, got
        return got

    def refused(self, suite: str) -> dict[str, str]:
        before = len(self.world.events("RunStarted"))
        got = self.world.armbench("run", suite, "--sandbox")
        assert got.code == 2, got
        assert len(self.world.events("RunStarted")) == before  # no run was created
        return got.error

    def line(self, suite: str, item: str) -> int:
        """The 1-based line of a `without` item in the suite's file."""
        lines = (self.world.team.work / f"benchmarks/{suite}/suite.yaml").read_text().splitlines()
        return lines.index(f"    - {item}") + 1


def suite(world: World, name: str, tasks: tuple[str, ...] = ("fix",), **fields: Any) -> None:
    world.team.suite(name, **fields)
    for task in tasks:
        world.team.task(name, task, **hidden_task(world.project))


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Team:
    world = make_world(tmp_path_factory.mktemp("team-arms"))
    t = world.team
    t.tool("agent", AGENT)
    t.tool("other", AGENT)
    t.aliases({"strong": {"agent": "m-strong", "other": "m-other-strong"}})
    t.write("manifest/roles.yaml", dump(ROLES))
    t.write("skills/release/SKILL.md", "---\nname: release\ndescription: Cut a release.\n---\nTag it.\n")
    t.write("skills/dev/release/SKILL.md", "---\nname: release\ndescription: dev's release.\n---\nDev.\n")
    t.write("skills/dev/lint/SKILL.md", "---\nname: lint\ndescription: dev's linting.\n---\nLint.\n")
    t.write("skills/ops/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploy.\n---\nShip.\n")
    t.write("rules/commits.md", "Write commit messages in the imperative.\n")
    t.write("claudemd/team.md", "We are the e2e team.\n")
    t.tool("judge", JUDGE)
    t.tool("lister", LISTER)
    t.write("scorers/tidy.md", SCORER)
    defaults = {"tool": "agent", "model": "strong"}
    suite(world, "arms", defaults=defaults, arms=[
        {"name": "base"}, {"name": "codexish", "tool": "other"},
        {"name": "no-skill", "team": "bench/no-skill"}, {"name": "no-release", "team": WITHOUT_RELEASE},
        {"name": "bare", "team": "none"}])
    suite(world, "scored", defaults=defaults, judge={"tool": "judge"}, scorers=["tidy"],
          arms=[{"name": "base"}, {"name": "no-skill", "team": "bench/no-skill"}])
    suite(world, "no-dev", defaults={"tool": "lister"},
          arms=[{"name": "base"}, {"name": "no-dev", "team": {"without": ["skills/dev"]}}])
    suite(world, "grid", defaults={"tool": "agent"}, arms=[],
          matrix={"tool": ["agent", "other"], "team": ["pulled", "none"]})
    suite(world, "pairs", tasks=("t1", "t2"), defaults={"tool": "agent"}, repetitions=3,
          arms=[{"name": "a"}, {"name": "b", "team": "none"}])
    for name, team in (("bad-ref", "bench/missing"), ("late-ref", "bench/late"),
                       ("bad-path", {"without": ["skills/relase"]}),
                       ("bad-ns", {"without": ["skills/ops/deploy"]}),
                       ("bad-team-file", {"without": ["armbench.yaml"]}),
                       ("replaced", {"without": ["skills/release"]}),
                       ("nested", {"without": ["skills", "skills/release"]})):
        suite(world, name, arms=[{"name": "base"}, {"name": "odd", "team": team}])
    main = t.publish()
    git(t.work, "checkout", "-q", "-b", "bench/no-skill")
    git(t.work, "rm", "-rq", "skills/release", "skills/dev/release")
    t.aliases({"strong": {"agent": "m-branch", "other": "m-branch"}})
    t.write("scorers/tidy.md", SCORER.replace("fixes the bug is tidy.", "fixes the bug is messy."))
    git(t.work, "commit", "-qam", "no release skill; other aliases; another rubric")
    git(t.work, "push", "-q", "origin", "HEAD:bench/no-skill")
    branch = git(t.work, "rev-parse", "HEAD")
    git(t.work, "checkout", "-q", "main")
    init = world.armbench("init", "--team", str(t.bare))
    assert init.code == 0, init
    config = world.checkout / ".armbench" / "config.yaml"
    config.write_text(config.read_text() + "roles: [dev]\n")
    pulled = world.armbench("pull")
    assert pulled.code == 0, pulled
    # pushed after the pull: the mirror has never fetched it, and plan must not fetch it
    git(t.work, "push", "-q", "origin", "main:bench/late")
    return Team(world, pulled, main, branch)


def test_each_arm_freezes_its_team_and_a_branch_changes_no_model(team: Team) -> None:
    """Criteria 2 and 7: the branch's aliases.yaml does not re-resolve any arm's model."""
    arms = {a["name"]: a for a in team.plan("arms")["arms"]}
    assert arms["base"]["team"] == {"kind": "pulled", "revision": team.main}
    assert arms["no-skill"]["team"] == {"kind": "ref", "ref": "bench/no-skill", "revision": team.branch}
    assert arms["bare"]["team"] == {"kind": "none"}
    without = arms["no-release"]["team"]
    assert {k: without[k] for k in ("kind", "paths", "revision")} == {
        "kind": "without", "paths": ["skills/release", "skills/dev/release"], "revision": team.main}
    assert [(arms[n]["tool"], arms[n]["model"]) for n in ("base", "codexish", "no-skill")] == [
        ("agent", "m-strong"), ("other", "m-other-strong"), ("agent", "m-strong")]


def test_a_branch_that_edits_a_scorer_changes_neither_its_hash_nor_its_arms_model(team: Team) -> None:
    """Criterion 2, run: the scorers are frozen once, from the pulled revision, for every arm."""
    got = team.run("scored")
    assert got.code == 0, got
    run = got.data["done"]["run"]
    pulled = hashlib.sha256(SCORER.encode()).hexdigest()
    mirror = team.world.checkout / ".armbench" / "team.git"
    on_branch = hashlib.sha256(git_raw(mirror, "show", f"{team.branch}:scorers/tidy.md").stdout.encode())
    assert on_branch.hexdigest() != pulled  # the branch does edit the scorer
    [plan] = [e for e in team.world.events("PlanFrozen") if e["suite"] == "scored"]
    assert [(s["name"], s["rubric"]["sourceHash"]) for s in plan["scorers"]] == [("tidy", pulled)]
    labels = team.world.events("LabelRecorded")  # only this suite has a scorer
    assert sorted((e["step"].split(".")[-2], e["rubric_hash"]) for e in labels) == [
        ("base", pulled), ("no-skill", pulled)]
    record = team.world.record(run)
    assert record["scorers"] == [{"name": "tidy", "rubric": {"sourceHash": pulled}}]
    assert {t["arm"]: t["agent"]["model"]["requested"] for t in record["trials"]} == {
        "base": "m-strong", "no-skill": "m-strong"}


def test_a_without_arm_gets_a_commit_of_the_pulled_revision_without_its_paths(team: Team) -> None:
    without = {a["name"]: a for a in team.plan("arms")["arms"]}["no-release"]["team"]
    mirror = team.world.checkout / ".armbench" / "team.git"
    listed = git(mirror, "ls-tree", "-r", "--name-only", without["commit"]).splitlines()
    assert "skills/ops/deploy/SKILL.md" in listed and "rules/commits.md" in listed
    assert not [p for p in listed if "release" in p]
    assert git(mirror, "rev-parse", f"{without['commit']}^") == team.main
    again = {a["name"]: a for a in team.plan("arms")["arms"]}["no-release"]["team"]
    assert again["commit"] == without["commit"]  # the dry plan and the run's plan freeze one commit


def test_an_arm_without_a_whole_received_namespace_runs_with_none_of_its_files(team: Team) -> None:
    """Criterion 16: `without: [skills/dev]` (a namespace the member's role receives) is planned
    and run; its trials' team tree has neither dev's own `lint` nor dev's `release`, which the
    shared `release` is delivered in place of."""
    got = team.run("no-dev")
    assert got.code == 0, got
    record = team.world.record(got.data["done"]["run"])
    assets = {a["name"]: a["team"].pop("assets") for a in record["arms"]}
    assert [(a["name"], a["team"]) for a in record["arms"]] == [
        ("base", {"kind": "pulled", "revision": team.main}),
        ("no-dev", {"kind": "without", "paths": ["skills/dev"], "revision": team.main})]
    assert assets["base"] != assets["no-dev"]  # one revision, two trees: the hash tells them apart
    ran = sorted(record["trials"], key=lambda t: t["order"])
    assert [(t["result"], t["agent"]["team"]["revision"]) for t in ran] == [("passed", team.main)] * 2
    assert all(t["agent"]["team"]["assets"] == assets[t["arm"]] for t in ran)
    seen = dict(zip([t["arm"] for t in ran], team.world.out_lines("team-dir-no-dev"), strict=True))
    shared = "./claudemd/team.md ./rules/commits.md {}./skills/release/SKILL.md "
    assert seen == {"base": shared.format("./skills/lint/SKILL.md ") + "| Dev.",
                    "no-dev": shared.format("") + "| Tag it."}


def test_the_run_names_each_team_in_the_team_column_and_the_record(team: Team) -> None:
    """Criterion 6."""
    pull_record = (team.world.checkout / ".armbench" / "pull.json").read_bytes()
    before = team.world.project.status()
    got = team.run("arms")
    assert got.code == 0, got
    # criterion 5: the member's checkout and pull record are as before
    assert team.world.project.status() == before
    assert (team.world.checkout / ".armbench" / "pull.json").read_bytes() == pull_record
    rows = arm_rows(got.stderr)
    short, branch = team.main[:7], team.branch[:7]
    assert {name: row["Team"] for name, row in rows.items()} == {
        "base": f"pulled {short}", "codexish": f"pulled {short}", "no-skill": f"bench/no-skill {branch}",
        "no-release": f"{short} without skills/release, skills/dev/release", "bare": "none"}
    record = team.world.record(got.data["done"]["run"])
    assets = [a["team"].pop("assets", None) for a in record["arms"]]
    # the branch that drops the release skill and the arm without it deliver one tree: one hash
    assert assets[0] == assets[1] != assets[2] == assets[3] and assets[4] is None  # none has none
    assert [a["team"] for a in record["arms"]] == [
        {"kind": "pulled", "revision": team.main}, {"kind": "pulled", "revision": team.main},
        {"kind": "ref", "ref": "bench/no-skill", "revision": team.branch},
        {"kind": "without", "paths": ["skills/release", "skills/dev/release"], "revision": team.main},
        {"kind": "none"}]


def members_own(world: World, home: Path) -> tuple[object, ...]:
    """What criterion 5 keeps: the checkout's HEAD and status, its git exclude file, its pull
    record and config, and the member's home."""
    armbench = world.checkout / ".armbench"
    return (world.project.status(), (world.checkout / ".git" / "info" / "exclude").read_bytes(),
            (armbench / "pull.json").read_bytes(), (armbench / "config.yaml").read_bytes(),
            {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file()})


def test_a_run_cancelled_halfway_leaves_the_members_checkout_pull_record_and_home_as_they_were(
        team: Team, tmp_path: Path) -> None:
    """Criterion 5, cancelled: SIGINT while the ref arm's trial, the third of five, runs."""
    world = team.world
    home = tmp_path / "member-home"
    (home / ".claude" / "skills" / "release").mkdir(parents=True)
    (home / ".claude" / "skills" / "release" / "SKILL.md").write_text("the member's own copy\n")
    before = members_own(world, home)
    got = interrupted(["run", "arms", "--sandbox"], world.checkout,
                      {**world.env, "HOME": str(home), "E2E_TAG": "cancel", "E2E_SLEEP_AT": "fix:2"},
                      once=world.out / "asleep-cancel")
    assert got.code == 1 and got.data["done"]["state"] == "cancelled", got
    record = world.record(got.data["done"]["run"])
    assert [(t["arm"], t["result"]) for t in sorted(record["trials"], key=lambda t: t["order"])] == [
        ("base", "passed"), ("codexish", "passed"), ("no-skill", "error"),
        ("no-release", "not_run"), ("bare", "not_run")]
    assert members_own(world, home) == before


def test_a_ref_that_does_not_resolve_is_refused_before_a_run_and_nothing_is_fetched(team: Team) -> None:
    """Criterion 3: bench/late is on the team repo, but this checkout never fetched it."""
    for name, ref in (("bad-ref", "bench/missing"), ("late-ref", "bench/late")):
        assert team.refused(name) == {"code": "arm_team_unresolved", "message": (
            f'Arm "odd" runs on team ref "{ref}", which is no branch, tag or commit of this '
            "checkout's team repo that holds armbench.yaml. Its branches: bench/no-skill, main. "
            "Fetch it, or fix the arm's team, push it, run armbench pull, and start again.")}
    mirror = team.world.checkout / ".armbench" / "team.git"
    assert git(mirror, "for-each-ref", "--format=%(refname)", "refs/heads").splitlines() == [
        "refs/heads/bench/no-skill", "refs/heads/main"]


@pytest.mark.parametrize(("name", "code", "reason"), [
    ("bad-path", "without_path_missing", "the pulled team revision has no file or folder skills/relase"),
    ("bad-ns", "without_namespace_inactive", "skills/ops/ is a namespace this checkout's roles do not "
     "receive"),
    ("bad-team-file", "without_team_file", "armbench.yaml marks the team repo and is no team asset"),
    ("replaced", "without_no_effect", "leaving out skills/release changes nothing armbench delivers"),
])
def test_a_without_path_that_cannot_be_left_out_is_refused_by_arm_with_its_line(
        team: Team, name: str, code: str, reason: str) -> None:
    """Criteria 3 and 16: pull keeps the suite (with a warning at the line), run refuses by arm."""
    line = team.line(name, {"bad-path": "skills/relase", "bad-ns": "skills/ops/deploy",
                            "bad-team-file": "armbench.yaml", "replaced": "skills/release"}[name])
    error = team.refused(name)
    assert error["code"] == code
    assert error["message"].startswith('Arm "odd" runs without team repo path "')
    assert f"(benchmarks/{name}/suite.yaml:{line}), but {reason}" in error["message"]
    assert error["message"].endswith("push it, run armbench pull, and start again. No run was started.")
    warned = [d for d in team.pulled.data["pull"]["diagnostics"]
              if d["file"] == f"benchmarks/{name}/suite.yaml"]
    assert [(d["code"], d["line"], d["severity"]) for d in warned] == [(code, line, "warning")]


def test_pull_and_review_refuse_a_path_inside_another_listed_path(team: Team) -> None:
    """Criterion 16: the nested suite is not cached; review fails it at its line."""
    pull = team.pulled.data["pull"]
    assert "nested" in pull["rejected"]
    [nested] = [d for d in pull["diagnostics"] if d["code"] == "without_nested"]
    assert nested["file"] == "benchmarks/nested/suite.yaml" and nested["line"] is not None
    review = team.world.armbench("review", "--branch", "main", cwd=team.world.team.work)
    assert review.code != 0, review
    found = [(f["code"], f["file"], f["line"]) for f in review.data["review"]["findings"]
             if f["severity"] == "fail"]
    assert nested["line"] == team.line("nested", "skills/release")
    assert ("without_nested", "benchmarks/nested/suite.yaml", nested["line"]) in found
    assert ("without_path_missing", "benchmarks/bad-path/suite.yaml",
            team.line("bad-path", "skills/relase")) in found
    assert ("without_team_file", "benchmarks/bad-team-file/suite.yaml",
            team.line("bad-team-file", "armbench.yaml")) in found


def test_the_matrix_crosses_tool_and_team_and_pairs_only_arms_that_differ_in_one(team: Team) -> None:
    """Criterion 12."""
    got = team.run("grid")
    assert got.code == 0, got
    table = got.data["done"]["outputs"]["table"]
    assert [a["arm"] for a in table["arms"]] == ["agent-pulled", "agent-none", "other-pulled",
                                                  "other-none"]
    assert sorted((p["key"], p["from"]["arm"], p["to"]["arm"]) for p in table["pairs"]) == [
        ("team", "agent-none", "agent-pulled"), ("team", "other-none", "other-pulled"),
        ("tool", "agent-none", "other-none"), ("tool", "agent-pulled", "other-pulled")]


def test_a_team_pair_is_measured_from_none_over_every_paired_trial(team: Team) -> None:
    """Criterion 9: b (none) fails task t1 in repetition 2 (its third call for t1: a, b, b, a, a, b)."""
    got = team.run("pairs", E2E_FAIL="t1:2")
    assert got.code == 0, got
    record = team.world.record(got.data["done"]["run"])
    failed = [(t["arm"], t["task"], t["repetition"]) for t in record["trials"] if t["result"] != "passed"]
    assert failed == [("b", "t1", 1)]
    [pair] = got.data["done"]["outputs"]["table"]["pairs"]
    assert (pair["key"], pair["from"]["arm"], pair["to"]["arm"], pair["trials"]) == ("team", "b", "a", 6)
    assert (pair["from"]["passed"], pair["to"]["passed"]) == (5, 6)


def test_a_trial_error_stays_paired_and_counts_as_not_passed(team: Team) -> None:
    """Criterion 10: a's first call for t2 exits 3."""
    got = team.run("pairs", E2E_ERROR="t2:0", E2E_TAG="pairs-error")
    assert got.code == 0, got
    record = team.world.record(got.data["done"]["run"])
    assert [(t["arm"], t["task"], t["result"]) for t in record["trials"] if t["result"] != "passed"] == [
        ("a", "t2", "error")]
    [pair] = got.data["done"]["outputs"]["table"]["pairs"]
    assert (pair["from"]["arm"], pair["trials"], pair["from"]["passed"], pair["to"]["passed"]) == (
        "b", 6, 6, 5)


def test_under_declared_isolation_the_members_own_assets_refuse_before_a_run(tmp_path: Path) -> None:
    """Criterion 4, as armbench has it: trials that share the member's home (isolation: declared)
    would load the member's own skills in every arm. The member's files are left as they were."""
    world = make_world(tmp_path / "declared")
    world.team.write("skills/release/SKILL.md", "---\nname: release\ndescription: Tag.\n---\nTag it.\n")
    suite(world, "scoped", defaults={"tool": "claude"}, arms=[{"name": "base"},
                                                              {"name": "bare", "team": "none"}])
    world.init_and_pull()
    world.configure(isolation="declared")
    home = tmp_path / "member-home"
    copy = home / ".claude" / "skills" / "release" / "SKILL.md"
    copy.parent.mkdir(parents=True)
    copy.write_text("my copy of the team's skill\n")
    got = world.armbench("run", "scoped", "--sandbox", env={"HOME": str(home)})
    assert got.code == 2 and got.error["code"] == "team_ref_blocked", got
    assert "~/.claude/skills/release" in got.error["message"]
    (home / ".claude" / "skills" / "release").rename(home / ".claude" / "skills" / "mine")
    got = world.armbench("run", "scoped", "--sandbox", env={"HOME": str(home)})
    assert got.envelope == {"error": {"code": "arm_team_unclean", "message": (
        'Arm "bare" runs without team assets, and this machine\'s home holds user-level assets for '
        "claude (~/.claude/skills/mine), where its trials would read them (workflows.isolation: "
        "declared runs trials in your home). Start the benchmark in armbench's sandbox, or on a "
        "machine whose home holds no assets for claude.")}}, got
    assert world.events("RunStarted") == []
    assert (home / ".claude" / "skills" / "mine" / "SKILL.md").read_text() == "my copy of the team's skill\n"


def test_under_declared_isolation_built_in_cli_arms_that_differ_in_team_are_refused(
        tmp_path: Path) -> None:
    """armbench installs no team into the member's home, where a built-in CLI reads its assets
    under isolation: declared, so arms of such tools that differ in their team would run alike:
    refused before a run, with a clean home too. A command tool reads the team at
    $ARMBENCH_TEAM_DIR, so its team arms still run."""
    world = make_world(tmp_path / "declared")
    world.team.tool("agent", AGENT)
    world.team.write("skills/release/SKILL.md", "---\nname: release\ndescription: Tag.\n---\nTag it.\n")
    suite(world, "alike", defaults={"tool": "claude"},
          arms=[{"name": "base"}, {"name": "bare", "team": "none"},
                {"name": "lean", "team": {"without": ["skills/release"]}}])
    suite(world, "scripted", defaults={"tool": "agent"},
          arms=[{"name": "base"}, {"name": "bare", "team": "none"}])
    world.init_and_pull()
    world.configure(isolation="declared")
    home = tmp_path / "member-home"
    home.mkdir()
    got = world.armbench("run", "alike", "--sandbox", env={"HOME": str(home)})
    assert got.envelope == {"error": {"code": "arm_team_undelivered", "message": (
        'Arms "base" (team pulled), "bare" (team none) and "lean" (team without skills/release) '
        "differ in their team, but their tools (claude) read team assets from the home, and "
        "with workflows.isolation: declared trials run in your home, where armbench installs no "
        "team: every arm would run with the same assets. Run the benchmark in armbench's sandbox "
        "(remove workflows.isolation: declared), or compare teams with a command tool, which "
        "reads them at $ARMBENCH_TEAM_DIR.")}}, got
    assert world.events("RunStarted") == [] and list(home.iterdir()) == []
    got = world.armbench("run", "scripted", "--sandbox", env={"HOME": str(home)})
    assert got.code == 0, got
    assert len(world.events("RunStarted")) == 1
