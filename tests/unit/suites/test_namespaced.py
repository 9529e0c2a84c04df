"""One resolver finds a namespaced team file, the same way for workflows, scorers and the
workflows an arm runs: its own namespace's, else the one active namespace's, else the shared."""

from __future__ import annotations

import pytest

from armbench.suites.armflows import pin_workflow
from armbench.suites.namespaced import clashing, reachable, resolve
from armbench.suites.scorers import scorer_file_of, scorer_names
from armbench.suites.workflows import WorkflowConflict, find_workflow

PATHS = ("scorers/tidy.md", "scorers/api/tidy.md", "scorers/web/tidy.md", "scorers/api/strict.md",
         "workflows/fix.yaml", "workflows/api/fix.yaml", "workflows/web/fix.yaml",
         "workflows/api/only.yaml", "workflows/shared.yaml", "workflows/api/sub.yaml",
         "workflows/sub.yaml")


@pytest.mark.parametrize(("own", "active", "expected"), [
    (None, (), "workflows/fix.yaml"),
    ("api", (), "workflows/api/fix.yaml"),
    (None, ("api",), "workflows/api/fix.yaml"),
    ("web", ("api",), "workflows/web/fix.yaml"),
    ("ops", ("ops",), "workflows/fix.yaml"),
])
def test_own_then_active_then_shared(own: str | None, active: tuple[str, ...], expected: str) -> None:
    assert resolve(PATHS, "workflows", "fix", ".yaml", own=own, active=active) == expected


def test_a_name_nowhere_resolves_to_none_and_another_folder_is_never_read() -> None:
    assert resolve(PATHS, "workflows", "missing", ".yaml", own="api", active=("api",)) is None
    assert resolve(PATHS, "workflows", "tidy", ".yaml", own="api") is None
    assert resolve(PATHS, "scorers", "fix", ".md", active=("api",)) is None


def test_two_active_namespaces_clash_unless_the_own_namespace_has_it() -> None:
    assert clashing(PATHS, "workflows", "fix", ".yaml", ("api", "web")) == (
        "workflows/api/fix.yaml", "workflows/web/fix.yaml")
    assert clashing(PATHS, "workflows", "fix", ".yaml", ("api",)) == ()
    with pytest.raises(WorkflowConflict):
        find_workflow(PATHS, "fix", ("api", "web"))
    assert find_workflow(PATHS, "fix", ("api", "web"), own="web") == "workflows/web/fix.yaml"


def test_workflows_and_scorers_resolve_through_it() -> None:
    assert find_workflow(PATHS, "only", ("api",)) == "workflows/api/only.yaml"
    assert find_workflow(PATHS, "only", ()) is None
    assert scorer_file_of("tidy", PATHS, "api") == "scorers/api/tidy.md"
    assert scorer_file_of("tidy", PATHS, None) == "scorers/tidy.md"
    assert scorer_file_of("strict", PATHS, None) is None
    assert scorer_names([p for p in PATHS if p.startswith("scorers/")], "api") == {"tidy", "strict"}


def test_an_arm_workflows_sub_workflow_is_found_in_the_callers_namespace_first() -> None:
    flow = (b"name: fix\ninputs: {task: string}\nsteps:\n- id: go\n  workflow: sub\n")
    sub = b"name: sub\ninputs: {task: string}\nsteps:\n- id: s\n  prompt: '{{ inputs.task }}'\n"
    files = {"workflows/api/fix.yaml": flow, "workflows/api/sub.yaml": sub, "workflows/sub.yaml": sub}
    pinned = pin_workflow("a", "fix", files, ("api",), "rev")
    assert pinned.runs["sub"].startswith("workflows/api/sub.yaml@")
    shared = pin_workflow("a", "fix", {**files, "workflows/fix.yaml": flow}, (), "rev")
    assert (shared.file, shared.runs["sub"].split("@")[0]) == ("workflows/fix.yaml", "workflows/sub.yaml")


def test_reachable_names_only_shared_files_and_the_members_namespaces() -> None:
    assert reachable("scorers/tidy.md", "scorers", ".md", ()) == "tidy"
    assert reachable("scorers/api/strict.md", "scorers", ".md", ()) is None
    assert reachable("scorers/api/strict.md", "scorers", ".md", ("api",)) == "strict"
    assert reachable("scorers/api/strict.md", "scorers", ".md", None) == "strict"
    assert reachable("workflows/fix.yaml", "scorers", ".md", None) is None
