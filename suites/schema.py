"""JSON Schemas of the benchmark files, generated from the same Structs the decoder uses."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from armbench.suites.model import Aliases, Suite, Task, TeamFile, ToolFile

__all__ = ["SchemaKind", "json_schema"]

SchemaKind = Literal["suite", "task", "aliases", "tool", "team"]
_KINDS: dict[str, type] = {
    "suite": Suite, "task": Task, "aliases": Aliases, "tool": ToolFile, "team": TeamFile,
}


def json_schema(kind: SchemaKind) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one file kind, for editors and `armbench schema`."""
    if kind not in _KINDS:
        raise ValueError(f"expected one of {', '.join(_KINDS)}, found {kind!r}")
    schema = msgspec.json.schema(_KINDS[kind])
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
