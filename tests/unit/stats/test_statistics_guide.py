"""Every example in docs/guide/statistics.md runs and gives the numbers the page shows."""

import doctest
from pathlib import Path

GUIDE = Path(__file__).parents[3] / "docs" / "guide" / "statistics.md"


def test_guide_examples_run_as_written():
    parser = doctest.DocTestParser()
    test = parser.get_doctest(GUIDE.read_text(encoding="utf-8"), {}, GUIDE.name, str(GUIDE), 0)
    assert len(test.examples) >= 15
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {GUIDE.name} failed"
