"""Random and mutated suite and task files give a value or diagnostics, never an exception."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_texts import SUITE, TASK

from armbench.suites.diagnostics import Diagnostic, has_errors, render
from armbench.suites.validate import parse_suite, parse_task

F = "benchmarks/s/suite.yaml"
SCALARS = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
           | st.sampled_from(["no", "yes", "on", "6h", "1e10", "0x1F", "~", "pulled", "none", "test/**", ""]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=10)
KEYS = st.sampled_from(["name", "tool", "model", "team", "without", "check", "add", "from", "to", "protect",
                        "timeout", "arms", "matrix", "fix", "source", "colour", "<<"]) | st.text(max_size=8)
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def mutate(data: Any, draw: Any, depth: int = 0) -> Any:
    """Drop keys, add unknown keys, change types and nest deeply, somewhere in `data`."""
    op = draw(st.sampled_from(["keep", "keep", "recurse", "recurse", "retype", "nest"]))
    if op == "retype" or (op == "recurse" and depth > 6):
        return draw(VALUES)
    if op == "nest":
        levels = draw(st.integers(min_value=1, max_value=80))
        for _ in range(levels):
            data = [data] if draw(st.booleans()) else {"k": data}
        return data
    if op == "keep":
        return data
    if isinstance(data, dict):
        kept = [(key, value) for key, value in data.items() if draw(st.integers(0, 5)) != 0]
        result = {key: mutate(value, draw, depth + 1) for key, value in kept}
        for _ in range(draw(st.integers(min_value=0, max_value=2))):
            result[draw(KEYS)] = draw(VALUES)
        return result
    if isinstance(data, list):
        return [mutate(item, draw, depth + 1) for item in data] + draw(st.lists(VALUES, max_size=2))
    return data


def text_mutations(text: str, draw: Any) -> str | bytes:
    """Truncate, insert random bytes, or swap characters."""
    op = draw(st.sampled_from(["truncate", "bytes", "chars", "none"]))
    if op == "truncate":
        return text[: draw(st.integers(min_value=0, max_value=len(text)))]
    if op == "bytes":
        raw = text.encode()
        at = draw(st.integers(min_value=0, max_value=len(raw)))
        return raw[:at] + draw(st.binary(min_size=1, max_size=8)) + raw[at:]
    if op == "chars":
        at = draw(st.integers(min_value=0, max_value=len(text)))
        noise = draw(st.text(alphabet=":-[]{}&*!|>'\"#%@`\t\n ,?", min_size=1, max_size=4))
        return text[:at] + noise + text[at:]
    return text


def assert_value_or_diagnostics(result: tuple[object, list[Diagnostic]], text: str | bytes) -> None:
    value, found = result
    assert all(isinstance(d, Diagnostic) and d.file == F and d.message for d in found)
    assert (value is None) is has_errors(found)
    lines = (text if isinstance(text, str) else text.decode("utf-8", "replace")).count("\n") + 2
    assert all(d.line is None or 1 <= d.line <= lines for d in found)
    assert all(render(d).startswith(F) for d in found)


def parse_both(text: str | bytes) -> None:
    assert_value_or_diagnostics(parse_suite(text, file=F, aliases={"strong"}), text)
    assert_value_or_diagnostics(parse_task(text, file=F, task_id="t"), text)


@pytest.mark.slow  # hypothesis, hundreds of documents
@SETTINGS
@given(st.data())
def test_mutated_documents(data: st.DataObject) -> None:
    for original in (SUITE, TASK):
        mutated = mutate(yaml.safe_load(original), data.draw)
        text = yaml.safe_dump(mutated, allow_unicode=True, sort_keys=False)
        parse_both(text_mutations(text, data.draw))


@SETTINGS
@pytest.mark.slow
@given(st.data())
def test_mutated_texts(data: st.DataObject) -> None:
    for original in (SUITE, TASK):
        parse_both(text_mutations(original, data.draw))


@SETTINGS
@given(st.text(max_size=200) | st.binary(max_size=200))
def test_random_input(text: str | bytes) -> None:
    parse_both(text)


def test_the_originals_are_valid() -> None:
    assert parse_suite(SUITE, file=F, aliases={"strong", "fast"}) [1] == []
    assert parse_task(TASK, file=F, task_id="t")[1] == []
