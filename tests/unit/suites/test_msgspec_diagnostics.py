"""msgspec ValidationErrors as diagnostics at the line their path points to, and `render`."""

from __future__ import annotations

import msgspec
import pytest

from armbench.suites.diagnostics import Diagnostic, from_validation_error, has_errors, render
from armbench.suites.model import Suite
from armbench.suites.yamlfile import load_yaml

F = "benchmarks/s/suite.yaml"
TEXT = """\
schemaVersion: v1alpha1
name: s
repo: x
defaults: {tool: claude}
arms:
  - name: a
    foo: 1
repetitions: three
timeout: 6h
"""


def error_for(data: object) -> Diagnostic:
    loaded = load_yaml(TEXT, file=F)
    with pytest.raises(msgspec.ValidationError) as caught:
        msgspec.convert(data, Suite)
    return from_validation_error(caught.value, file=F, line_of=loaded.line_of)


def base() -> dict:
    data = load_yaml(TEXT, file=F).data
    assert isinstance(data, dict)
    return data


def test_a_wrong_type_points_at_its_value() -> None:
    data = base()
    data["arms"] = [{"name": "a"}]
    d = error_for(data)
    assert render(d) == f"{F}:8: error: repetitions: expected `int`, found `str`. Change the value to match."
    assert (d.code, d.path) == ("wrong_type", "$.repetitions")


def test_an_unknown_field_points_at_its_key_inside_the_object() -> None:
    d = error_for(base())
    assert render(d) == f"{F}:7: error: arms[0].foo: unknown key `foo`. Remove it, or fix its spelling."
    assert d.code == "unknown_field"


def test_an_unknown_top_level_field_has_no_path_in_msgspec_but_gets_its_line() -> None:
    data = base()
    data["arms"], data["repetitions"] = [{"name": "a"}], 3
    data = {**data, "colour": "red"}
    d = error_for(data)
    assert d.path == "$.colour" and d.line == 1  # the loaded text has no `colour` key: the root's line


def test_a_missing_required_field_points_at_its_object() -> None:
    data = base()
    data["arms"], data["repetitions"] = [{}], 3
    d = error_for(data)
    assert render(d) == f"{F}:6: error: arms[0].name: missing `name`, which is required. Add it."
    assert d.code == "missing_field"


def test_a_dict_value_path_without_its_key_uses_the_dict_line() -> None:
    error = msgspec.ValidationError("Expected `str`, got `int` - at `$.arms[...]`")
    d = from_validation_error(error, file=F, line_of=load_yaml(TEXT, file=F).line_of)
    assert d.line == 5 and d.message == "arms[...]: expected `str`, found `int`. Change the value to match."


def test_render_without_a_line_and_has_errors() -> None:
    warning = Diagnostic(file=F, line=None, severity="warning", code="x", message="Something.")
    assert render(warning) == f"{F}: warning: Something."
    assert not has_errors([warning]) and has_errors([warning, error_for(base())])
