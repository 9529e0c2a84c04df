"""The workflow namespace conflicts pull reports (benchmark-suites.md: "at pull and at run
start"), for the team's benchmark override and for arm workflows: pure."""

from __future__ import annotations

from typing import Any

import yaml

from armbench.suites.diagnostics import Diagnostic
from armbench.suites.flowconflicts import arm_conflicts, override_conflict
from armbench.suites.validate import parse_suite

SUITE = "benchmarks/s/suite.yaml"
DEV_OPS = frozenset({"dev", "ops"})


def _y(data: dict[str, Any]) -> bytes:
    return yaml.safe_dump(data, sort_keys=False).encode()


def _flow(name: str, steps: list[dict[str, Any]] | None = None) -> bytes:
    return _y({"name": name, "inputs": {"task": "string"},
               "steps": steps or [{"id": "fix", "prompt": "{{ inputs.task }}"}]})


def _found(files: dict[str, bytes], active: frozenset[str] = DEV_OPS,
           **suite: Any) -> list[Diagnostic]:
    body = {"schemaVersion": "v1alpha1", "name": "s", "repo": "https://example.com/r.git",
            "defaults": {"tool": "claude"}, "arms": [{"name": "a"}], "timeout": "1h", **suite}
    files = {**files, SUITE: _y(body)}
    parsed, found = parse_suite(files[SUITE], file=SUITE)
    assert parsed is not None, found
    return arm_conflicts(parsed, files, "benchmarks/s", active)


def _conflicts(files: dict[str, bytes], active: frozenset[str] = DEV_OPS,
               **suite: Any) -> list[tuple[int | None, str | None, str]]:
    return [(d.line, d.path, d.severity) for d in _found(files, active, **suite)]


BOTH = {"workflows/dev/both.yaml": _flow("both"), "workflows/ops/both.yaml": _flow("both")}


def test_the_override_is_an_error_only_when_two_active_namespaces_define_it() -> None:
    paths = ["workflows/dev/armbench-benchmark.yaml", "workflows/ops/armbench-benchmark.yaml"]
    [got] = override_conflict(paths, "armbench-benchmark", DEV_OPS)
    assert (got.file, got.severity, got.code) == (paths[0], "error", "workflow_namespace_conflict")
    assert " and ".join(paths) in got.message
    assert override_conflict(paths, "armbench-benchmark", frozenset({"dev"})) == []
    assert override_conflict([*paths[:1], "workflows/armbench-benchmark.yaml"],
                             "armbench-benchmark", DEV_OPS) == []


def test_an_arm_workflow_conflict_is_a_warning_at_the_key_that_names_it() -> None:
    assert _conflicts(BOTH, arms=[{"name": "a"}, {"name": "b", "workflow": "both"}]) == [
        (9, "$.arms[1].workflow", "warning")]
    assert _conflicts(BOTH, defaults={"tool": "claude", "workflow": "both"}) == [
        (6, "$.defaults.workflow", "warning")]
    assert _conflicts(BOTH, active=frozenset({"dev"}),
                      arms=[{"name": "a"}, {"name": "b", "workflow": "both"}]) == []


def test_a_sub_workflow_two_namespaces_define_is_named_through_its_caller() -> None:
    files = {"workflows/outer.yaml": _flow("outer", [{"id": "x", "workflow": "both"}]), **BOTH}
    [got] = _found(files, arms=[{"name": "a", "workflow": "outer"}])
    assert got.message.startswith('arms[0].workflow: arm "a" runs workflow "outer", which runs '
                                  'workflow "both", and 2 namespaces')


def test_a_matrix_reports_one_conflict_and_ref_and_without_arms_read_their_own_files() -> None:
    assert _conflicts(BOTH, arms=[], matrix={"workflow": ["both"],
                                             "team": ["pulled", "none"]}) == [
        (9, "$.matrix.workflow", "warning")]
    ref = {"tool": "claude", "workflow": "both", "team": "some-branch"}
    assert _conflicts(BOTH, defaults=ref) == []  # read at the ref's commit, by plan
    left_out = {**ref, "team": {"without": ["workflows/ops/both.yaml"]}}
    assert _conflicts(BOTH, defaults=left_out) == []
    assert _conflicts(BOTH, defaults={**ref, "team": "pulled"}) == [
        (6, "$.defaults.workflow", "warning")]


def test_every_reason_run_would_refuse_an_arm_workflow_is_a_warning_at_pull() -> None:
    """The refusals of `armbench run` for an arm's workflow, each found at pull as a warning at
    the key that names it, with run's own code and words."""
    missing = _found({}, arms=[{"name": "a"}, {"name": "b", "workflow": "nowhere"}])
    assert [(d.line, d.code, d.severity) for d in missing] == [(9, "workflow_not_found", "warning")]
    assert 'Arm "b" runs workflow "nowhere", and the team revision it runs on has no' in \
        missing[0].message
    no_task = {"workflows/plain.yaml": _y({"name": "plain", "inputs": {"topic": "string"},
                                           "steps": [{"id": "x", "prompt": "hi"}]})}
    [got] = _found(no_task, defaults={"tool": "claude", "workflow": "plain"})
    assert (got.line, got.code) == (6, "invalid_inputs")
    bad_step = {"workflows/odd.yaml": _flow("odd", [{"id": "x", "prompt": "a", "command": "b"}])}
    [got] = _found(bad_step, defaults={"tool": "claude", "workflow": "odd"})
    assert got.code == "arm_workflow_invalid" and 'whose step "x" ' in got.message
    fine = {"workflows/fine.yaml": _flow("fine")}
    assert _found(fine, defaults={"tool": "claude", "workflow": "fine"}) == []
