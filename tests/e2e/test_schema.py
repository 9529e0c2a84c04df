"""`armbench schema suite|task`: plain JSON Schema on stdout that the example's files satisfy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from armbench.cli.main import app
from e2e.conftest import ARMBENCH

pytestmark = pytest.mark.e2e

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "team" / "benchmarks" / "example"
TYPES = {"object": dict, "string": str, "array": list, "integer": int, "null": type(None)}


def problems(value: Any, node: dict[str, Any], root: dict[str, Any], at: str = "$") -> list[str]:
    """A tiny JSON Schema check: $ref, anyOf, type, enum, required, additionalProperties, items."""
    if "$ref" in node:
        node = root["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in node:
        found = [problems(value, option, root, at) for option in node["anyOf"]]
        return min(found, key=lambda f: (any(p.startswith(f"{at}: expected") for p in f), len(f)))
    if "type" in node and not isinstance(value, TYPES[node["type"]]):
        return [f"{at}: expected {node['type']}, found {type(value).__name__}"]
    if "enum" in node and value not in node["enum"]:
        return [f"{at}: {value!r} is not one of {node['enum']}"]
    out: list[str] = []
    if isinstance(value, dict):
        out += [f"{at}: missing {key}" for key in node.get("required", []) if key not in value]
        for key, item in value.items():
            if key in node.get("properties", {}):
                out += problems(item, node["properties"][key], root, f"{at}.{key}")
            elif node.get("additionalProperties") is False:
                out.append(f"{at}: unknown key {key}")
    if isinstance(value, list) and "items" in node:
        for index, item in enumerate(value):
            out += problems(item, node["items"], root, f"{at}[{index}]")
    return out


def schema_of(kind: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["schema", kind])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_installed_command_prints_the_task_schema_as_plain_json_that_the_example_tasks_meet() -> None:
    done = subprocess.run([str(ARMBENCH), "schema", "task"], capture_output=True, text=True, check=True)
    schema = json.loads(done.stdout)
    assert "data" not in schema and schema["$schema"].endswith("/2020-12/schema")
    tasks = sorted((EXAMPLE / "tasks").glob("*.yaml"))
    assert len(tasks) == 3
    for task in tasks:
        assert problems(yaml.safe_load(task.read_text()), schema, schema) == [], task.name


def test_the_task_schema_rejects_an_unknown_key_and_a_missing_required_key() -> None:
    schema = schema_of("task")
    task = yaml.safe_load((EXAMPLE / "tasks" / "clamp-bounds.yaml").read_text())
    task["check"]["chek"] = "typo"
    del task["startingCommit"]
    assert problems(task, schema, schema) == ["$: missing startingCommit", "$.check: unknown key chek"]


def test_the_example_suite_meets_the_suite_schema_and_a_typo_does_not() -> None:
    schema = schema_of("suite")
    suite = yaml.safe_load((EXAMPLE / "suite.yaml").read_text())
    assert problems(suite, schema, schema) == []
    assert problems({**suite, "repetition": 3}, schema, schema) == ["$: unknown key repetition"]


def test_an_unknown_kind_is_refused_naming_both_kinds() -> None:
    result = CliRunner().invoke(app, ["schema", "workflow"])
    error = json.loads(result.stdout)["error"]
    assert result.exit_code == 2 and error["code"] == "invalid_inputs"
    assert '"suite" or "task"' in error["message"] and '"workflow"' in error["message"]


def test_help_says_stdout_is_plain_json_for_editors() -> None:
    result = CliRunner().invoke(app, ["schema", "--help"])
    assert "not the usual" in result.stdout and "yaml-language-server" in result.stdout
