"""docs/guide/drivers.md's field tables are generated from the protocol's Structs (a table that
differs fails here), and its zh-CN page names every field of every envelope and of `--can`, so
a driver written from either guide reads every field armbench sends."""

from __future__ import annotations

import os
import sys
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from armbench.benchmark.drivers import ENVELOPES, LeaseEnvelope, lease_envelope
from armbench.cli.driverdocs import fields, regenerate
from armbench.engine.protocol import Lease

ROOT = Path(__file__).resolve().parents[2]
GUIDES = [ROOT / "docs/guide/drivers.md", ROOT / "docs/guide/zh-CN/drivers.md"]


def test_the_guides_field_tables_are_the_structs_fields() -> None:
    text = GUIDES[0].read_text()
    assert text == regenerate(text), "docs/guide/drivers.md is stale: run `python -m armbench.cli.driverdocs`"
    for name in ENVELOPES:
        assert f"<!-- fields of {name}: generated" in text, name


def test_a_tables_rows_follow_the_struct() -> None:
    """The generator reads the Struct itself: a field renamed or added shows in the table."""
    class Probe(msgspec.Struct, rename="camel"):
        some_field: int | None
        """A field."""
        other: list[str] = []

    assert fields(Probe) == [("someField", "int or null", "A field."),
                             ("other", "list of strings", "")]


def test_a_lease_answers_every_field_of_its_table() -> None:
    lease = Lease(run="r1", step="s", lease="l1", kind="prompt",
                  expires_at=datetime(2026, 1, 1, tzinfo=UTC))
    sent = msgspec.json.decode(msgspec.json.encode(lease_envelope(lease)))
    assert list(sent) == [name for name, _, _ in fields(LeaseEnvelope)]
    cli = Path(sys.executable).with_name("armbench")  # the venv's console script: this CLI
    assert sent["launch"] == [str(cli), "workflow", "launch", "r1", "--lease", "l1"]


def test_a_command_lease_runs_the_cli_that_gave_it_first_on_path() -> None:
    lease = Lease(run="r1", step="report", lease="l2", kind="command", command="armbench report",
                  env={"ARMBENCH_WORKFLOW_ATTEMPT": "2"}, expires_at=datetime(2026, 1, 1, tzinfo=UTC))
    env = lease_envelope(lease).env
    cli = Path(sys.executable).with_name("armbench")
    assert env["PATH"].split(os.pathsep)[0] == str(cli.parent)
    assert (env["ARMBENCH_RUN"], env["ARMBENCH_LEASE"], env["ARMBENCH_WORKFLOW_ATTEMPT"]) == ("r1", "l2", "2")


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.parent.name)
def test_the_guide_names_every_field_of_every_envelope_and_of_can(guide: Path) -> None:
    text = guide.read_text()
    names = {name for cls in ENVELOPES.values() for name, _, _ in fields(cls)}
    missing = sorted(f for f in names if f"`{f}`" not in text)
    assert missing == []


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.parent.name)
def test_the_guide_names_every_request_of_serve_and_its_fields(guide: Path) -> None:
    import typing

    from armbench.benchmark.drivers import Request

    text = guide.read_text()
    missing = []
    for request in typing.get_args(Request):
        info = msgspec.inspect.type_info(request)
        assert isinstance(info, msgspec.inspect.StructType)
        missing += [f'"verb": "{info.tag}"'] if f'"verb": "{info.tag}"' not in text else []
        missing += [f'"{f.encode_name}"' for f in info.fields if f'"{f.encode_name}"' not in text]
    assert missing == []
