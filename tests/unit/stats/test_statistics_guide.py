"""Every example in docs/guide/statistics.md (and its zh-CN page, whose blocks are the same) runs
and gives the numbers the page shows."""

import doctest
from pathlib import Path

import pytest

GUIDE = Path(__file__).parents[3] / "docs" / "guide" / "statistics.md"
ZH = GUIDE.parent / "zh-CN" / GUIDE.name


@pytest.mark.parametrize("page", [GUIDE, ZH], ids=["en", "zh-CN"])
def test_guide_examples_run_as_written(page):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(page.read_text(encoding="utf-8"), {}, page.name, str(page), 0)
    assert len(test.examples) >= 15
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {page} failed"
