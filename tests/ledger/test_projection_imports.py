"""Projections import only what a pure fold needs: the events, the suites' pure rules, some
stdlib, msgspec and statsmodels (the layer test in tests/unit/test_layers.py bans I/O; this one
allows only a list)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = (
    "__future__", "math", "statistics", "collections", "dataclasses", "typing", "re",
    "msgspec", "statsmodels",
    "datetime.datetime",  # the type of a time handed in (progress's `now`), never a clock read
    "armbench.ledger.events",
    "armbench.ledger.errors",  # the one error root (Refusal); pure, no I/O
    "armbench.suites",
    "armbench.projections",
)


def allowed(name: str) -> bool:
    """The module is on the list, or inside a package that is."""
    return any(name == a or name.startswith(a + ".") for a in ALLOWED)


def disallowed_imports(path: Path) -> list[str]:
    """Each import in a file (at any depth, relative ones resolved) that is not allowed."""
    bad = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if not allowed(a.name)]
        elif isinstance(node, ast.ImportFrom):
            module = "armbench.projections" if node.level else node.module or ""
            if not allowed(module):
                bad += [f"{module}.{a.name}" for a in node.names
                        if not allowed(f"{module}.{a.name}")]
    return bad


def test_projections_import_only_the_allowed_modules() -> None:
    files = sorted((ROOT / "projections").rglob("*.py"))
    assert files
    found = {str(f.relative_to(ROOT)): bad for f in files if (bad := disallowed_imports(f))}
    assert found == {}


def test_the_list_check_finds_what_a_projection_must_not_import(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("import os\nimport json\nfrom armbench.ledger.store import EventStore\n"
                      "from armbench.ledger import events, store\nfrom . import results\n"
                      "from ledger.events import Event\ndef f():\n    import subprocess\n")
    assert disallowed_imports(sample) == ["os", "json", "armbench.ledger.store.EventStore",
                                          "armbench.ledger.store", "ledger.events.Event", "subprocess"]
