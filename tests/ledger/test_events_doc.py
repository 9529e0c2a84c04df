"""docs/events.md is generated from ledger/events.py and is never stale."""

from __future__ import annotations

import ast

import gen_events_doc as gen
import pytest
from ledger_golden import union_tags


def test_docs_events_md_is_up_to_date() -> None:
    doc = gen.DOC.read_text()
    fresh = gen.regenerate(doc, gen.SOURCE.read_text(), gen._upcasters())
    assert fresh == doc, f"docs/events.md is stale: run `{gen.COMMAND}` from the repo root"


def test_the_catalogue_names_every_event_and_every_field_with_its_docstring() -> None:
    source = gen.SOURCE.read_text()
    kinds = {k.name: k for k in gen.kinds(source)}
    assert [k.tag for k in kinds.values() if k.tag] == union_tags()
    undocumented = [f"{k.name}.{f.name}" for k in kinds.values() for f in k.fields if not f.doc]
    assert undocumented == []
    text = gen.catalogue(source, {})
    assert "| `signal` | `int \\| None` | `None` | The signal that ended it, where one did. |" in text


def test_a_field_added_without_a_docstring_shows_up_in_the_catalogue_check() -> None:
    source = gen.SOURCE.read_text().replace(
        '    """A sentence for people."""\n', '    """A sentence for people."""\n    note: str = ""\n', 1)
    ast.parse(source)
    undocumented = [f"{k.name}.{f.name}" for k in gen.kinds(source) for f in k.fields if not f.doc]
    assert undocumented == ["StepReported.note"]
    assert gen.catalogue(source, {}) != gen.catalogue(gen.SOURCE.read_text(), {})


def test_regenerating_keeps_the_prose_and_refuses_a_doc_without_markers() -> None:
    doc = f"# Title\n\nprose\n\n{gen.BEGIN}\nold\n{gen.END}\n\ntail\n"
    fresh = gen.regenerate(doc, gen.SOURCE.read_text(), {"StepFinished": "v0 to StepReported."})
    assert fresh.startswith("# Title\n\nprose\n\n") and fresh.endswith(f"{gen.END}\n\ntail\n")
    assert "| `StepFinished` | v0 to StepReported. |" in fresh and "\nold\n" not in fresh
    with pytest.raises(SystemExit, match="lost its markers"):
        gen.regenerate("# Title\n", gen.SOURCE.read_text(), {})
