"""Delivering an arm's team at lease, from a real team repo read by commit: each kind of team
(`pulled`, a ref, `without`, `none`), each tool's places in the trial's own home, the tree a tool
reads at `$ARMBENCH_TEAM_DIR` (read-only in the real bubblewrap sandbox), and nothing of the
member's home or the team repo touched."""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.benchmark.teamdelivery import TeamDelivery
from armbench.benchmark.trials.teaminstall import installed, team_dir
from armbench.benchmark.trials.toolstep import ToolStep
from armbench.edge.proc import run_step
from armbench.edge.sandbox import Room, Sandbox
from armbench.edge.team import files_at
from armbench.engine.protocol import Lease
from armbench.ledger.events import NoTeam, PlanFrozen, PlannedArm, PulledTeam, RefTeam, WithoutTeam

IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@x.invalid"}
TEAM = {
    "armbench.yaml": "name: t\n",
    "benchmarks/login/tasks/t.yaml": "hidden\n",
    "manifest/roles.yaml": "roles:\n  - id: web\n    resources: {skills: [web]}\n",
    "skills/release/SKILL.md": "---\nname: release\ndescription: Cut a release.\n---\nTag it.\n",
    "skills/web/lint/SKILL.md": "---\nname: lint\ndescription: Lint the web.\n---\nRun eslint.\n",
    "skills/review/SKILL.md": "---\nname: review\ndescription: Review.\n---\nRead it twice.\n",
    "rules/commits.md": "Commit subjects under 50 characters.\n",
    "claudemd/team.md": "We ship on Fridays.\n",
    "agents/reviewer.md": "---\nname: reviewer\n---\nA reviewer.\n",
    "docs/runbooks/deploy.md": "Deploy with care.\n",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY}, check=True)
    return done.stdout.strip()


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def team(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "team"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    pulled = commit(repo, dict(TEAM), "team")
    git(repo, "checkout", "-q", "-b", "bench/no-release")
    branch = commit(repo, {"skills/release/SKILL.md": None,
                           "skills/review/SKILL.md": TEAM["skills/review/SKILL.md"] + "And once more.\n",
                           "models/aliases.yaml": "schemaVersion: v1alpha1\naliases: {}\n"}, "no release")
    git(repo, "checkout", "-q", "main")
    return repo, pulled, branch


def delivery(repo: Path, pulled: str, arms: list[PlannedArm], roles: list[str] = ()) -> TeamDelivery:
    plan = PlanFrozen(suite="s", suite_hash="h", repo="https://x.invalid/r", repetitions=1, parallel=1,
                      timeout_s=60, baseline_team_revision=pulled, tasks=[], arms=arms, trials=[])
    return TeamDelivery(plan, lambda rev: files_at(repo, rev), list(roles))


def room(tmp_path: Path, name: str) -> Room:
    clone = tmp_path / "work" / "clones" / name
    clone.mkdir(parents=True)
    return Room.of(clone).make()


def home_of(r: Room) -> dict[str, str]:
    return {str(p.relative_to(r.home)): p.read_text() for p in sorted(r.home.rglob("*")) if p.is_file()}


def test_a_pulled_arm_gets_the_team_in_claudes_own_places_and_the_tree_beside_it(
        tmp_path: Path, team: tuple[Path, str, str]) -> None:
    repo, pulled, _ = team
    arm = PlannedArm(name="with", tool="claude", team=PulledTeam(revision=pulled))
    r = room(tmp_path, "a")
    install = delivery(repo, pulled, [arm]).install(r, arm)
    home = home_of(r)
    assert sorted(home) == [".claude/CLAUDE.md", ".claude/agents/reviewer.md",
                            ".claude/skills/release/SKILL.md", ".claude/skills/review/SKILL.md"]
    assert "We ship on Fridays." in home[".claude/CLAUDE.md"]
    assert "Commit subjects under 50 characters." in home[".claude/CLAUDE.md"]
    tree = sorted(str(p.relative_to(team_dir(r))) for p in team_dir(r).rglob("*") if p.is_file())
    assert tree == ["agents/reviewer.md", "claudemd/team.md", "docs/runbooks/deploy.md",
                    "rules/commits.md", "skills/release/SKILL.md", "skills/review/SKILL.md"]
    assert installed(r) == install and install.revision == pulled and install.changes == {}


def test_a_namespace_skill_reaches_only_a_member_who_receives_it(
        tmp_path: Path, team: tuple[Path, str, str]) -> None:
    repo, pulled, _ = team
    arm = PlannedArm(name="with", tool="codex", team=PulledTeam(revision=pulled))
    web = room(tmp_path, "web")
    delivery(repo, pulled, [arm], roles=["web"]).install(web, arm)
    assert ".codex/skills/lint/SKILL.md" in home_of(web) and ".codex/AGENTS.md" in home_of(web)
    other = room(tmp_path, "other")
    delivery(repo, pulled, [arm]).install(other, arm)
    assert ".codex/skills/lint/SKILL.md" not in home_of(other)


def test_a_ref_arm_installs_the_branchs_commit_and_records_its_skill_changes(
        tmp_path: Path, team: tuple[Path, str, str]) -> None:
    repo, pulled, branch = team
    arm = PlannedArm(name="no-release", tool="claude",
                     team=RefTeam(ref="bench/no-release", revision=branch))
    r = room(tmp_path, "ref")
    install = delivery(repo, pulled, [arm]).install(r, arm)
    assert install.revision == branch and installed(r) == install
    assert ".claude/skills/release/SKILL.md" not in home_of(r)
    assert "And once more." in home_of(r)[".claude/skills/review/SKILL.md"]
    assert install.changes == {"release": "removed", "review": "changed"}


def test_a_without_arm_installs_the_pulled_revision_less_its_paths(
        tmp_path: Path, team: tuple[Path, str, str]) -> None:
    repo, pulled, _ = team
    arm = PlannedArm(name="no-rules", tool="opencode",
                     team=WithoutTeam(paths=["skills/release", "rules"], revision=pulled, commit=pulled))
    r = room(tmp_path, "without")
    install = delivery(repo, pulled, [arm]).install(r, arm)
    home = home_of(r)
    assert install.revision == pulled and install.changes == {"release": "removed"}
    assert ".config/opencode/skills/release/SKILL.md" not in home
    assert ".config/opencode/skills/review/SKILL.md" in home
    assert "Commit subjects" not in home[".config/opencode/AGENTS.md"]
    assert not (team_dir(r) / "rules").exists()


def test_a_none_arm_gets_an_empty_team_folder_and_nothing_in_its_home(
        tmp_path: Path, team: tuple[Path, str, str]) -> None:
    repo, pulled, _ = team
    arm = PlannedArm(name="bare", tool="gemini", team=NoTeam())
    r = room(tmp_path, "none")
    install = delivery(repo, pulled, [arm]).install(r, arm)
    assert install.revision is None and install.skills == {}
    assert install.changes == {"release": "removed", "review": "removed"}
    assert home_of(r) == {} and list(team_dir(r).iterdir()) == []


def test_delivery_never_touches_the_members_home_or_the_team_repo(
        tmp_path: Path, team: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, pulled, branch = team
    member = tmp_path / "member"
    (member / ".claude" / "skills" / "mine").mkdir(parents=True)
    (member / ".claude" / "skills" / "mine" / "SKILL.md").write_text("my own\n")
    (member / ".claude" / "CLAUDE.md").write_text("my own instructions\n")
    monkeypatch.setenv("HOME", str(member))
    before, repo_before = snapshot(member), snapshot(repo)
    arms = [PlannedArm(name="a", tool="claude", team=PulledTeam(revision=pulled)),
            PlannedArm(name="b", tool="claude", team=RefTeam(ref="x", revision=branch)),
            PlannedArm(name="c", tool="claude", team=NoTeam())]
    teams = delivery(repo, pulled, arms)
    for arm in arms:
        teams.install(room(tmp_path, arm.name), arm)
    assert snapshot(member) == before and snapshot(repo) == repo_before


def test_in_the_sandbox_the_tool_reads_the_tree_at_armbench_team_dir_and_cannot_change_it(
        tmp_path: Path, team: tuple[Path, str, str]) -> None:
    repo, pulled, _ = team
    arm = PlannedArm(name="a", tool="my-script", team=PulledTeam(revision=pulled))
    r = room(tmp_path, "sandboxed")
    delivery(repo, pulled, [arm]).install(r, arm)
    lease = Lease(run="r", step="s", lease="l", kind="prompt", cwd=str(r.clone),
                  expires_at=datetime(2030, 1, 1, tzinfo=UTC))
    step = ToolStep.start(Sandbox(home=tmp_path / "member-home"), lease)
    env = step.env(lease, {"ARMBENCH_TEAM_DIR": step.team_dir})
    script = ('grep -q "Commit subjects" "$ARMBENCH_TEAM_DIR/rules/commits.md" && '
              'test ! -e "$ARMBENCH_TEAM_DIR/benchmarks" && '
              '! touch "$ARMBENCH_TEAM_DIR/planted" 2>/dev/null && '
              '! rm -f "$ARMBENCH_TEAM_DIR/rules/commits.md" 2>/dev/null && '
              'test -z "$(ls "$HOME")"')
    proc = run_step(script, cwd=step.launch.cwd, env=env, stdin=None, timeout_s=30,
                    cancel=threading.Event(), sandbox=step.launch.argv)
    assert (proc.cause, proc.exit_code) == ("ok", 0), proc.stderr_tail.decode()
    assert (team_dir(r) / "rules" / "commits.md").exists() and not (team_dir(r) / "planted").exists()


def test_the_install_delivers_the_assets_the_plan_froze_or_fails_the_lease(
        tmp_path: Path, team: tuple[Path, str, str]) -> None:
    """The hash plan freezes (`PlannedArm.assets_hash`) is the one the install delivers for the
    plan's roles; a checkout that would deliver another tree refuses rather than deliver it."""
    from armbench.ledger.errors import Refusal
    from armbench.suites.teamassets import assets_hash, member_assets

    repo, pulled, _ = team
    frozen = assets_hash(member_assets(files_at(repo, pulled), ["web"]))
    assert frozen != assets_hash(member_assets(files_at(repo, pulled), []))  # roles decide
    arm = PlannedArm(name="with", tool="claude", team=PulledTeam(revision=pulled), assets_hash=frozen)
    install = delivery(repo, pulled, [arm], roles=["web"]).install(room(tmp_path, "web"), arm)
    assert install.assets_hash == frozen and install.roles == ["web"]
    other = room(tmp_path, "other")
    with pytest.raises(Refusal) as refused:  # a plan whose roles this delivery does not have
        delivery(repo, pulled, [arm]).install(other, arm)
    assert refused.value.code == "assets_differ"
    assert f"planned with team assets {frozen[:12]}" in str(refused.value)
    assert not team_dir(other).exists() or list(team_dir(other).iterdir()) == []
    bare = PlannedArm(name="bare", tool="claude", team=NoTeam())
    none = delivery(repo, pulled, [bare]).install(room(tmp_path, "none"), bare)
    assert none.assets_hash is None and none.roles is None
