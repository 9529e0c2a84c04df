"""`armbench schema`: the JSON Schema of suite and task files, for editors (a thin adapter)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated, cast

import typer

from armbench.cli.guard import guarded
from armbench.ledger.errors import Refusal

if TYPE_CHECKING:
    from armbench.suites.schema import SchemaKind

__all__ = ["KINDS", "register_schema"]

KINDS = ("suite", "task")


def register_schema(app: typer.Typer) -> None:
    """Add `armbench schema` to the app."""
    app.command("schema")(guarded(schema))


def schema(kind: Annotated[str, typer.Argument(help="suite or task.")]) -> None:
    """Print the JSON Schema of a suite.yaml or a task file, as plain JSON for editors.

    stdout is the schema itself, not the usual {"data": ...} envelope, so it can be saved and
    named in a modeline: `armbench schema suite > suite.schema.json`, then the first line of
    suite.yaml `# yaml-language-server: $schema=./suite.schema.json` gives completion and inline
    errors in editors that run the YAML language server. It is generated from the types the
    parser uses; rules beyond types (arm counts, check.add against protect) are checked by
    pull and try.
    """
    from armbench.suites.schema import json_schema

    if kind not in KINDS:
        raise Refusal(f'armbench schema prints the schema of "suite" or "task" files, not "{kind}". '
                      "Run `armbench schema suite` or `armbench schema task`.", code="invalid_inputs")
    sys.stdout.write(json.dumps(json_schema(cast("SchemaKind", kind)), indent=2) + "\n")
