"""docs/guide/drivers.md (and its zh-CN page) names every field of the lease envelope and of
`--can`, so a driver written from the guide reads every field armbench sends."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest

from benchmark.drivers import Can
from cli.workflowcmd import lease_envelope
from engine.protocol import Lease

ROOT = Path(__file__).resolve().parents[2]
GUIDES = [ROOT / "docs/guide/drivers.md", ROOT / "docs/guide/zh-CN/drivers.md"]


def _lease_fields() -> set[str]:
    lease = Lease(run="r1", step="s", lease="l1", kind="prompt",
                  expires_at=datetime(2026, 1, 1, tzinfo=UTC))
    return set(lease_envelope(lease))


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.parent.name)
def test_the_guide_names_every_field_of_a_lease_and_of_can(guide: Path) -> None:
    text = guide.read_text()
    fields = _lease_fields() | set(msgspec.structs.asdict(Can()))
    missing = sorted(f for f in fields if f"`{f}`" not in text)
    assert missing == []


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: p.parent.name)
def test_the_guide_names_every_request_of_serve_and_its_fields(guide: Path) -> None:
    import typing

    from cli.workflowcmd import Request

    text = guide.read_text()
    missing = []
    for request in typing.get_args(Request):
        info = msgspec.inspect.type_info(request)
        assert isinstance(info, msgspec.inspect.StructType)
        missing += [f'"verb": "{info.tag}"'] if f'"verb": "{info.tag}"' not in text else []
        missing += [f'"{f.encode_name}"' for f in info.fields if f'"{f.encode_name}"' not in text]
    assert missing == []
