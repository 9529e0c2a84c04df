"""Diagnostics: what is wrong in which file at which line, and how to fix it."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Literal

import msgspec

__all__ = ["Diagnostic", "Severity", "from_validation_error", "has_errors", "render", "sorted_by_line"]

Severity = Literal["error", "warning"]


class Diagnostic(msgspec.Struct, frozen=True, kw_only=True):
    """One finding about one file, as pull, review, plan and try report it."""

    file: str
    """The file's path relative to the team repo root, such as `benchmarks/auth/suite.yaml`."""
    line: int | None
    """The 1-based line the finding is about, or None when it is about the whole file."""
    severity: Severity
    """`error` keeps the file from being used; `warning` is reported and the file is still used."""
    code: str
    """A stable snake_case identifier of the rule, such as `arms_count`."""
    message: str
    """What was expected, what was found and how to fix it, starting with the key's path."""
    path: str | None = None
    """The msgspec-style path of the value, such as `$.arms[6]`, or None for the whole file."""


def render(d: Diagnostic) -> str:
    """`file:line: severity: message`, or `file: severity: message` without a line."""
    where = d.file if d.line is None else f"{d.file}:{d.line}"
    return f"{where}: {d.severity}: {d.message}"


def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    """True when any diagnostic is an error."""
    return any(d.severity == "error" for d in diagnostics)


def sorted_by_line(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics in file order, then line order (whole-file findings first), stably."""
    return sorted(diagnostics, key=lambda d: (d.file, d.line or 0))


_AT = re.compile(r"^(?P<text>.*?)(?: - at `(?P<path>[^`]*)`)?$", re.DOTALL)
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<key>[^`]*)`$")
_MISSING = re.compile(r"^Object missing required field `(?P<key>[^`]*)`$")
_TYPE = re.compile(r"^Expected `(?P<expected>[^`]*)`(?P<rest>.*?)(?:, got `(?P<found>[^`]*)`)?$")


def from_validation_error(
    error: msgspec.ValidationError, *, file: str, line_of: Callable[[str], int | None]
) -> Diagnostic:
    """Turn a msgspec ValidationError into a diagnostic at the line its path points to.

    msgspec writes ``Expected `int`, got `str` - at `$.repetitions` ``; an unknown field names the
    key but points at its object, so the line is the key's line inside that object; dict values
    show as `[...]`, so their line is the nearest line above the first `[...]`.
    """
    match = _AT.match(str(error))
    text = match["text"] if match else str(error)
    path = (match["path"] if match else None) or "$"
    if " in `" in path:  # a bad dict key: "at `key` in `$.aliases`"
        path = path.split(" in `", 1)[1].rstrip("`")
    known = path.split("[...]", 1)[0]
    if found := _UNKNOWN.match(text):
        key_path = f"{known}.{found['key']}"
        return _at(file, line_of(key_path) or line_of(known), "unknown_field", key_path,
                   f"unknown key `{found['key']}`. Remove it, or fix its spelling.")
    if found := _MISSING.match(text):
        key_path = f"{known}.{found['key']}"
        return _at(file, line_of(known), "missing_field", key_path,
                   f"missing `{found['key']}`, which is required. Add it.")
    if found := _TYPE.match(text):
        got = f", found `{found['found']}`" if found["found"] else ""
        return _at(file, line_of(known), "wrong_type", path,
                   f"expected `{found['expected']}`{found['rest']}{got}. Change the value to match.")
    return _at(file, line_of(known), "invalid_value", path, f"{text}. Change the value to match.")


def _at(file: str, line: int | None, code: str, path: str, message: str) -> Diagnostic:
    label = path.removeprefix("$").removeprefix(".")
    return Diagnostic(file=file, line=line, severity="error", code=code, path=path,
                      message=f"{label}: {message}" if label else message[0].upper() + message[1:])
