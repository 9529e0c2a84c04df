"""`armbench review` in a checkout of the team repo: at a ref, in the working tree, every namespace."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import GUIDE, START, Team, armbench, git, guide_yaml, shell

pytestmark = pytest.mark.e2e

SUITE_FILE = "benchmarks/auth-fixes/suite.yaml"
TASK_FILE = "benchmarks/auth-fixes/tasks/expired-token.yaml"
ALIASES = """\
schemaVersion: v1alpha1
aliases:
  strong: { claude: claude-opus-4-8, codex: gpt-5.5, gemini: gemini-3-pro }
  fast: { claude: claude-haiku-4-5 }
"""
SEVEN_ARMS = """\
schemaVersion: v1alpha1
name: auth-fixes
description: Bugs from the auth module, fixed by the implementer role
repo: https://github.com/acme/api
defaults: { tool: claude, model: strong }
arms:
  - name: baseline
  - name: codex
    tool: codex
  - name: fast
    model: fast
  - name: high
    effort: high
  - name: bare
    team: none
  - name: planned
    workflow: plan-then-fix
  - name: gemini
    tool: gemini
repetitions: 3
timeout: 6h
"""
SEVENTH_ARM_LINE = 18
PROTECT = "  protect: ['test/**', 'vitest.config.*', 'vite.config.*', 'vitest.workspace.*', 'package.json']\n"
TASK = f"""\
schemaVersion: v1alpha1
title: Reject expired refresh tokens
prompt: Refresh tokens past their expiry are still accepted. Fix it.
startingCommit: {START}
check:
  run: npx vitest run test/auth/refresh.test.ts
{PROTECT}"""


def valid_team(team: Team) -> str:
    """Commit a valid team: one suite with two tasks, and aliases; return the commit."""
    team.write("models/aliases.yaml", ALIASES)
    team.suite("benchmarks/auth-fixes")
    team.write(TASK_FILE, TASK)
    team.task("benchmarks/auth-fixes", "ok")
    return team.commit()


def test_a_branch_holding_the_7_arm_suite_fails_review_with_a_finding_for_that_file(team: Team) -> None:
    valid_team(team)
    git(team.root, "switch", "-q", "-c", "seven-arms")
    team.write(SUITE_FILE, SEVEN_ARMS)
    branch = team.commit("seven arms")
    git(team.root, "switch", "-q", "main")

    result = team.review("--branch", "seven-arms")

    assert result.code == 1, result
    assert result.data["review"]["ok"] is False
    assert result.data["review"]["revision"] == branch
    assert result.findings() == [(SUITE_FILE, SEVENTH_ARM_LINE, "arms_count")]
    assert (f"fail {SUITE_FILE}:{SEVENTH_ARM_LINE}: arms[6]: expected 1 to 6 arms, found 7. Remove an arm "
            "or split the suite.\n") in result.stderr


def test_a_check_whose_runner_reads_files_protect_leaves_open_is_a_warning_naming_them(
        team: Team) -> None:
    valid_team(team)
    weak = TASK.replace("npx vitest run test/auth/refresh.test.ts", "python -m pytest -q test/auth")
    team.write(TASK_FILE, weak.replace(PROTECT, "  protect: ['test/**', conftest.py]\n"))
    team.commit("pytest")

    result = team.review()

    assert result.code == 0, result
    assert result.findings("warn") == [(TASK_FILE, 7, "protect_weak"), (TASK_FILE, 7, "protect_weak")]
    assert (f"warn {TASK_FILE}:7: check.protect: the check runs pytest, which reads `pytest.ini`, "
            "`.pytest.ini`, `pyproject.toml`, `setup.cfg` and `tox.ini` (paths from the repo root); "
            "protect does not cover them") in result.stderr
    assert "the check runs python -m pytest, which would run `pytest.py` or `pytest/` in place of " \
        "the module" in result.stderr


@pytest.mark.parametrize("page", [GUIDE, GUIDE.parent / "zh-CN" / "review.md"], ids=["en", "zh-CN"])
def test_the_guides_hook_catches_an_uncommitted_broken_task_that_the_guides_ci_job_does_not_see(
        team: Team, page: Path) -> None:
    hook = guide_yaml("repos", page)["repos"][0]["hooks"][0]
    ci_step = guide_yaml("jobs", page)["jobs"]["review"]["steps"][-1]["run"]
    team.write(".gitignore", "scratch.yaml\n")
    head = valid_team(team)
    team.write(TASK_FILE, TASK.replace(START, START[:7]))  # edited, not committed
    team.write("benchmarks/auth-fixes/tasks/new.yaml", TASK.replace(PROTECT, ""))
    team.write("benchmarks/auth-fixes/tasks/scratch.yaml", "not: a task\n")  # ignored by git

    worktree = shell(team.root, hook["entry"], team.home)
    committed = shell(team.root, ci_step.replace("${{ github.sha }}", head), team.home)

    assert (hook["pass_filenames"], hook["always_run"], hook["language"]) == (False, True, "system")
    assert worktree.code == 1, worktree
    assert worktree.findings() == [(TASK_FILE, 4, "starting_commit_invalid"),
                                   ("benchmarks/auth-fixes/tasks/new.yaml", 5, "missing_field")]
    assert worktree.data["review"]["revision"] is None
    assert "Reviewed the working tree: 2 fail and 0 warn findings." in worktree.stderr
    assert committed.code == 0, committed
    assert committed.envelope == {"data": {"review": {"findings": [], "ok": True, "revision": head}}}


def test_review_reports_every_kind_of_team_file_in_every_namespace_for_a_reviewer_with_no_roles(
        team: Team) -> None:
    team.write(".armbench/config.yaml", f"team: {team.root}\nroles: []\n")
    team.write(".gitignore", ".armbench/\n")
    team.write("armbench.yaml", "schemaVersion: v1alpha1\nname: review-tests\ncolour: blue\n")
    team.write("manifest/roles.yaml", "roles:\n  - id: auth\n    resources: { benchmarks: [auth] }\n"
               "projects:\n  - id: payments\n    resources: { benchmarks: [billing] }\n")
    team.write("models/aliases.yaml", "schemaVersion: v1alpha1\naliases:\n  strong:\n    claude: ' '\n")
    team.write("models/auth/aliases.yaml",
               "schemaVersion: v1alpha1\naliases:\n  strong:\n    claude: /opt/models/opus\n")
    team.write("models/ghost/aliases.yaml", "schemaVersion: v1alpha1\naliases: {}\n")
    team.write("tools/runner/tool.yaml", "schemaVersion: v1alpha1\nname: runnr\nrun: ./run.sh\n")
    team.suite("benchmarks/shared", parallel=33)
    team.task("benchmarks/shared", "ok")
    team.suite("benchmarks/auth/login")
    team.write("benchmarks/auth/login/tasks/short.yaml", TASK.replace(START, "3f2c9a7"))
    team.task("benchmarks/auth/login", "ok")
    team.suite("benchmarks/billing/login", repetitions=11)
    team.task("benchmarks/billing/login", "ok")
    team.suite("benchmarks/auth")  # a namespace's root holds suite directories, not a suite
    team.suite("benchmarks/misc/nested")  # misc is no namespace, so nested is never read

    result = team.review()

    assert result.code == 1, result
    assert result.findings() == [
        ("armbench.yaml", 3, "unknown_field"),
        ("benchmarks/auth/login/tasks/short.yaml", 4, "starting_commit_invalid"),
        ("benchmarks/billing/login/suite.yaml", 9, "repetitions_range"),
        ("benchmarks/shared/suite.yaml", 11, "parallel_range"),
        ("models/aliases.yaml", 4, "alias_model_empty"),
        ("models/auth/aliases.yaml", 4, "alias_unpublishable"),
        ("tools/runner/tool.yaml", 2, "tool_name_mismatch"),
    ]
    assert result.findings("warn") == [
        ("benchmarks/auth/login/suite.yaml", None, "suite_namespace_conflict"),
        ("benchmarks/auth/suite.yaml", None, "file_not_read"),
        ("benchmarks/misc/nested/suite.yaml", None, "file_not_read"),
        ("models/ghost/aliases.yaml", None, "file_not_read"),
    ]
    assert "fail benchmarks/billing/login/suite.yaml:9: repetitions: " in result.stderr


def test_a_broken_manifest_is_a_fail_at_its_line_and_its_namespaces_suites_are_not_read(team: Team) -> None:
    team.write("manifest/roles.yaml", "roles:\n  - id: auth\n    resources:\n      benchmarks: auth\n")
    team.suite("benchmarks/auth/login")
    team.task("benchmarks/auth/login", "ok")

    result = team.review()

    assert result.code == 1, result
    assert result.findings() == [("manifest/roles.yaml", 4, "wrong_type")]
    assert result.findings("warn") == [("benchmarks/auth/login/suite.yaml", None, "file_not_read")]


def test_review_refuses_with_exit_2_outside_a_git_repo(tmp_path: Path, team: Team) -> None:
    result = armbench(tmp_path, "review", home=team.home)

    assert result.code == 2, result
    assert result.envelope is not None and result.envelope["error"]["code"] == "not_a_checkout"
    assert "is not inside a git repository" in result.stderr


def test_review_refuses_with_exit_2_when_the_ref_does_not_resolve(team: Team) -> None:
    valid_team(team)

    result = team.review("--branch", "no-such-branch")

    assert result.code == 2, result
    assert result.envelope is not None and result.envelope["error"]["code"] == "ref_not_found"
    assert '--branch "no-such-branch" does not resolve to a commit' in result.stderr
