"""Every zh-CN guide page (docs/guide/zh-CN/) is its English page's translation as far as code
goes: the same code blocks in the same order, equal but for the comments (which a page may
translate), and the README links it beside its English page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guide"
ZH = sorted((GUIDE / "zh-CN").glob("*.md"))
BLOCK = re.compile(r"^```(\w*)([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
COMMENT = re.compile(r"(^|\s)#(\s.*)?$")


def _code(page: Path) -> list[tuple[str, list[str]]]:
    """(language, lines without their comments) of each fenced block, in page order."""
    return [(m[1], [COMMENT.sub("", line).rstrip() for line in m[3].splitlines()])
            for m in BLOCK.finditer(page.read_text())]


@pytest.mark.parametrize("zh", ZH, ids=[p.name for p in ZH])
def test_a_zh_cn_page_shows_its_english_pages_code_blocks(zh: Path) -> None:
    english = GUIDE / zh.name
    assert english.is_file(), f"{zh.name} has no English page"
    assert _code(zh) == _code(english)


@pytest.mark.parametrize("zh", ZH, ids=[p.name for p in ZH])
def test_the_readme_links_each_zh_cn_page_beside_its_english_page(zh: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    assert re.search(rf"\(docs/guide/{re.escape(zh.name)}\) \(\[中文\]\(docs/guide/zh-CN/"
                     rf"{re.escape(zh.name)}\)\)", readme), zh.name


def test_the_comment_rule_keeps_code() -> None:
    assert COMMENT.sub("", "armbench run s --sandbox   # prints the table").rstrip() == (
        "armbench run s --sandbox")
    assert COMMENT.sub("", 'echo "a # b"') == 'echo "a'  # a quoted hash is cut as well, on both pages
    assert COMMENT.sub("", "url: https://x.example/a#b") == "url: https://x.example/a#b"
