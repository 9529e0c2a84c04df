"""JSON Schemas from the Structs, and their constraints agreeing with the rules."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from suite_texts import START, SUITE, TASK, codes

from armbench.suites.durations import DURATION_PATTERN, format_duration, parse_duration
from armbench.suites.schema import json_schema
from armbench.suites.validate import parse_suite, parse_task


def test_the_suite_schema_is_strict_and_carries_the_limits() -> None:
    schema = json_schema("suite")
    suite = schema["$defs"]["Suite"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert suite["required"] == ["schemaVersion", "name", "repo", "defaults", "timeout"]
    assert suite["additionalProperties"] is False
    props = suite["properties"]
    repetitions = props["repetitions"]
    assert (repetitions["minimum"], repetitions["maximum"], repetitions["default"]) == (1, 10, 3)
    assert (props["parallel"]["minimum"], props["parallel"]["maximum"]) == (1, 32)
    assert props["arms"]["maxItems"] == 6 and props["timeout"]["pattern"] == DURATION_PATTERN
    trial = schema["$defs"]["TrialLimits"]["properties"]
    assert trial.keys() == {"timeout", "max_turns", "network", "retries", "retry_backoff", "budget",
                            "limits", "setup", "egress"}
    assert (trial["setup"]["enum"], trial["setup"]["default"]) == (["each", "once"], "each")
    retries = trial["retries"]
    assert (retries["minimum"], retries["maximum"], retries["default"]) == (0, 10, 2)
    assert (trial["retry_backoff"]["default"], trial["retry_backoff"]["pattern"]) == ("10s", DURATION_PATTERN)
    cost = schema["$defs"]["CostCap"]
    assert cost["required"] == ["amount", "unit"] and cost["properties"]["amount"]["exclusiveMinimum"] == 0
    assert schema["$defs"]["RunBudget"]["required"] == ["cost"]
    assert props["budget"]["anyOf"][0] == {"$ref": "#/$defs/RunBudget"}
    assert schema["$defs"]["StepLimits"]["properties"].keys() == {"memory", "pids", "disk"}


def test_the_task_schema() -> None:
    schema = json_schema("task")
    task = schema["$defs"]["Task"]
    assert task["required"] == ["schemaVersion", "title", "prompt", "startingCommit"]
    assert task["properties"]["startingCommit"]["pattern"] == "^[0-9a-f]{40}$"
    assert schema["$defs"]["Check"]["properties"]["protect"]["minItems"] == 1
    assert schema["$defs"]["AddFrom"]["required"] == ["from", "to"]


def test_other_kinds_and_an_unknown_kind() -> None:
    assert "Aliases" in json_schema("aliases")["$defs"]
    with pytest.raises(ValueError, match="expected one of suite, task, aliases, tool, team"):
        json_schema("workflow")  # type: ignore[arg-type]


@pytest.mark.parametrize(("key", "limits"), [("repetitions", (1, 10)), ("parallel", (1, 32))])
def test_the_schema_limits_are_the_rule_limits(key: str, limits: tuple[int, int]) -> None:
    prop = json_schema("suite")["$defs"]["Suite"]["properties"][key]
    assert (prop["minimum"], prop["maximum"]) == limits
    line = {"repetitions": "repetitions: 3", "parallel": "parallel: 2"}[key]
    for value, ok in ((limits[0] - 1, False), (limits[0], True), (limits[1], True), (limits[1] + 1, False)):
        assert (parse_suite(SUITE.replace(line, f"{key}: {value}"), file="s.yaml")[0] is not None) is ok


def test_the_commit_pattern_is_the_rule() -> None:
    pattern = json_schema("task")["$defs"]["Task"]["properties"]["startingCommit"]["pattern"]
    for commit in (START, START[:-1], START.upper(), "g" * 40):
        valid = not codes(parse_task(TASK.replace(START, commit), file="t.yaml", task_id="t")[1])
        assert valid is bool(re.search(pattern, commit))


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("8m", 480), ("6h", 21600), ("1h30m", 5400),
                                               ("1h0m5s", 3605), ("120m", 7200)])
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@given(st.text(alphabet="0123456789hms. ", max_size=8))
def test_the_duration_pattern_accepts_what_parse_duration_accepts(text: str) -> None:
    try:
        parse_duration(text)
        parsed = True
    except ValueError:
        parsed = False
    nonzero = any(c in "123456789" for c in text)
    assert parsed is bool(re.search(DURATION_PATTERN, text) and nonzero)


@given(st.integers(min_value=1, max_value=10**6))
def test_format_duration_round_trips(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds
