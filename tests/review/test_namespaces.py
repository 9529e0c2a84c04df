"""Namespaced suites through `armbench pull` and `armbench plan`: a member gets only their roles' suites."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Member, Team, dump, make_member

pytestmark = pytest.mark.e2e

ROLES = """\
roles:
  - id: auth
    resources: { benchmarks: [auth] }
projects:
  - id: payments
    resources: { benchmarks: [billing] }
"""


@pytest.fixture
def revision(team: Team) -> str:
    """Shared `login` and `misc` (a dir no role declares), `auth/login`, `auth/sso`, `billing/login`."""
    team.write("manifest/roles.yaml", ROLES)
    team.write("models/aliases.yaml", dump({"schemaVersion": "v1alpha1", "aliases": {
        "strong": {"claude": "shared-model"}, "fast": {"claude": "shared-fast"}}}))
    team.write("models/auth/aliases.yaml", dump({"schemaVersion": "v1alpha1", "aliases": {
        "strong": {"claude": "auth-model"}}}))
    for suite_dir, task in [("benchmarks/login", "shared-task"), ("benchmarks/misc", "misc-task"),
                            ("benchmarks/auth/login", "auth-task"), ("benchmarks/auth/sso", "sso-task"),
                            ("benchmarks/billing/login", "billing-task")]:
        team.suite(suite_dir, arms=[{"name": "base"}, {"name": "fast", "model": "fast"}])
        team.task(suite_dir, task)
    return team.commit()


def planned(member: Member, suite: str) -> dict[str, Any]:
    """The plan `armbench plan <suite>` freezes: its task ids and each arm's model."""
    result = member.armbench("plan", suite)
    assert result.code == 0, result
    plan = result.data["plan"]["plan"]
    return {"tasks": [t["id"] for t in plan["tasks"]],
            "models": {arm["name"]: arm["model"] for arm in plan["arms"]}}


def test_a_member_with_the_role_gets_its_namespaces_suites_over_the_shared_ones(
        team: Team, revision: str) -> None:
    member = make_member(team, "with-auth")
    member.roles("auth")

    pulled = member.armbench("pull")

    assert pulled.code == 0, pulled
    assert pulled.data["pull"]["cached"] == ["login", "misc", "sso"]
    assert pulled.data["pull"]["namespaces"] == ["auth"]
    assert pulled.data["pull"]["diagnostics"] == []
    assert {k: member.cache[k] for k in ("suites", "dirs")} == {
        "suites": dict.fromkeys(["login", "misc", "sso"], revision), "dirs": {
            "login": "benchmarks/auth/login", "misc": "benchmarks/misc", "sso": "benchmarks/auth/sso"}}
    assert {name: sorted(hashes) for name, hashes in member.cache["files"].items()} == {
        "login": ["benchmarks/auth/login/suite.yaml", "benchmarks/auth/login/tasks/auth-task.yaml"],
        "misc": ["benchmarks/misc/suite.yaml", "benchmarks/misc/tasks/misc-task.yaml"],
        "sso": ["benchmarks/auth/sso/suite.yaml", "benchmarks/auth/sso/tasks/sso-task.yaml"]}
    # the namespace's folder, and its alias file over the shared one, alias by alias
    assert planned(member, "login") == {"tasks": ["auth-task"],
                                        "models": {"base": "auth-model", "fast": "shared-fast"}}


def test_a_member_without_the_role_gets_only_the_shared_suites(team: Team, revision: str) -> None:
    member = make_member(team, "without-auth")
    member.roles()
    cache = member.root / ".armbench" / "cache" / "suites.json"
    cache.parent.mkdir(parents=True)  # what a pull left while this member still had the role
    cache.write_text(json.dumps({"suites": {"sso": revision}, "dirs": {"sso": "benchmarks/auth/sso"}}))

    pulled = member.armbench("pull")

    assert pulled.code == 0, pulled
    assert pulled.data["pull"]["cached"] == ["login", "misc"]
    assert pulled.data["pull"]["dropped"] == ["sso"]
    assert set(member.cache["suites"]) == {"login", "misc"}
    # an entry without a directory, as a cache from before namespaces has it, means benchmarks/<suite>
    cache.write_text(json.dumps({"suites": member.cache["suites"], "files": member.cache["files"]}))
    assert planned(member, "login") == {"tasks": ["shared-task"],
                                        "models": {"base": "shared-model", "fast": "shared-fast"}}


def test_two_active_namespaces_defining_one_suite_cache_neither_and_name_both_files(
        team: Team, revision: str) -> None:
    member = make_member(team, "both")
    member.roles("auth", "payments", "ops")

    pulled = member.armbench("pull")

    assert pulled.code == 0, pulled
    assert pulled.data["pull"]["cached"] == ["misc", "sso"]
    assert pulled.data["pull"]["rejected"] == ["login"]
    assert "login" not in member.cache["suites"]
    assert [(d["file"], d["severity"], d["code"]) for d in pulled.data["pull"]["diagnostics"]] == [
        ("manifest/roles.yaml", "warning", "role_unknown"),
        ("benchmarks/auth/login/suite.yaml", "error", "suite_namespace_conflict")]
    assert ("Suite `login` is defined in 2 namespaces, benchmarks/auth/login/suite.yaml and "
            "benchmarks/billing/login/suite.yaml, so it is not cached") in pulled.stderr
