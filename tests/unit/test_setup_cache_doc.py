"""The `workflows.setup_cache` example of docs/guide/benchmarks.md and its zh-CN page decodes as
the config armbench reads, and each page names the cache's folder and how to clear it."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from armbench.edge.config import ProjectConfig

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "guide" / "benchmarks.md", ROOT / "docs" / "guide" / "zh-CN" / "benchmarks.md"]
BLOCK = re.compile(r"^```yaml\n# \.armbench/config\.yaml\n(.*?)^```$", re.MULTILINE | re.DOTALL)


@pytest.mark.parametrize("page", PAGES, ids=["en", "zh-CN"])
def test_the_setup_cache_example_turns_the_cache_on(page: Path) -> None:
    text = page.read_text()
    [body] = BLOCK.findall(text)
    config = msgspec.yaml.decode(f"team: ../team.git\n{body}".encode(), type=ProjectConfig)
    assert config.workflows.setup_cache is True
    assert ProjectConfig(team="t").workflows.setup_cache is False
    for said in ("~/.armbench/cache/prepared/<key>/", "armbench gc --prepared", "prepared_origin"):
        assert said in text, said
