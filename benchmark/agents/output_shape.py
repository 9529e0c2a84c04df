"""Reading a CLI's printed output without breaking silently: every surprise becomes a note."""

from __future__ import annotations

import json
from typing import Any

from armbench.ledger.events import Cost, Usage
from armbench.projections.usage import usage_problem

__all__ = ["Shape", "json_lines", "last_json_object"]


class Shape:
    """Reads values out of one CLI's output and notes each one that is missing or of the wrong type."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.problems: list[str] = []

    def problem(self, why: str) -> None:
        """Note a way the output differs from the shape this adapter reads."""
        if why not in self.problems:
            self.problems.append(why)

    def get(self, obj: Any, path: str | tuple[str, ...], kind: type | tuple[type, ...]) -> Any:
        """The value at a dotted path (a tuple if keys hold dots); None, noted, if missing or not `kind`."""
        keys = path.split(".") if isinstance(path, str) else path
        path = ".".join(keys)
        value = obj
        for key in keys:
            if not isinstance(value, dict) or key not in value:
                self.problem(f"`{path}` is missing")
                return None
            value = value[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
            self.problem(f"`{path}` is {type(value).__name__}, not {_names(kind)}")
            return None
        return value

    def count(self, obj: Any, path: str | tuple[str, ...]) -> int:
        """A token count at a dotted path; 0 (noted) when it is missing or not a whole number."""
        value = self.get(obj, path, int)
        return value if value is not None else 0

    def optional(self, obj: Any, key: str) -> int | None:
        """A count the tool prints only sometimes: None when absent, noted when present but not a count."""
        if not isinstance(obj, dict) or key not in obj:
            return None
        value = obj[key]
        if not isinstance(value, int) or isinstance(value, bool):
            self.problem(f"`{key}` is {type(value).__name__}, not int")
            return None
        return value

    def usage(self, tokens: dict[str, int], cost: Cost | None = None) -> Usage:
        """The usage read so far: verified only if nothing was noted; none of it is kept when a
        value is out of range (`projections.usage.usage_problem`)."""
        problem = usage_problem(tokens, (cost.amount, cost.unit) if cost else None)
        if problem is not None:
            note = f"{self.tool}'s usage was not used: {problem}."
            return Usage(verified=False, note=note[:500])
        if not self.problems:
            return Usage(tokens=tokens, cost=cost)
        note = f"{self.tool}'s output did not have the expected shape: " + "; ".join(self.problems)
        return Usage(tokens=tokens, cost=cost, verified=False, note=note[:500])


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _names(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _kinds(kind))


def json_lines(text: str, shape: Shape) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines output; a line that starts like one but is not is noted."""
    events: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            shape.problem(f"line {number} is not JSON")
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last JSON object that starts at the beginning of a line and runs to the end of the text."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    for start in reversed(starts):
        if text.startswith("{", start):
            try:
                value = json.loads(text[start:])
            except ValueError:
                continue
            return value if isinstance(value, dict) else None
    return None
