"""The runners' real summaries, printed by the real runners: pytest, unittest and go test, each
with every test skipped or none to run, and with one test run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from armbench.suites.runsummary import no_test_ran

TEST = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_one(self):\n        {body}\n"


def _run(argv: list[str], cwd: Path) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return done.stdout + done.stderr


def test_pytest_with_every_test_skipped_by_a_planted_conftest_ran_none(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(TEST.format(body="self.assertTrue(True)"))
    ran = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_x.py"], tmp_path)
    assert no_test_ran(ran) is None, ran
    (tmp_path / "conftest.py").write_text(
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n        item.add_marker(pytest.mark.skip(reason='planted'))\n")
    skipped = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_x.py"], tmp_path)
    found = no_test_ran(skipped)
    assert found is not None and found.runner == "pytest" and "1 skipped" in found.said, skipped
    deselected = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "nothing",
                       "test_x.py"], tmp_path)
    assert no_test_ran(deselected) is not None, deselected


def test_unittest_that_ran_zero_tests_or_skipped_all_ran_none(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(TEST.format(body="self.assertTrue(True)"))
    assert no_test_ran(_run([sys.executable, "-m", "unittest", "-q", "test_x"], tmp_path)) is None
    (tmp_path / "test_none.py").write_text("def test_plain():\n    assert True\n")
    none = _run([sys.executable, "-m", "unittest", "-q", "test_none"], tmp_path)
    assert no_test_ran(none) is not None and "Ran 0 tests" in no_test_ran(none).said, none  # type: ignore[union-attr]
    (tmp_path / "test_skip.py").write_text(TEST.format(body="self.skipTest('planted')"))
    skipped = _run([sys.executable, "-m", "unittest", "-q", "test_skip"], tmp_path)
    assert no_test_ran(skipped) is not None, skipped


@pytest.mark.slow  # go builds the test binary twice: a few seconds
def test_go_test_with_no_test_to_run_ran_none(tmp_path: Path) -> None:
    go = shutil.which("go")
    assert go is not None, "scripts/install-go.sh installs go"
    (tmp_path / "go.mod").write_text("module example.com/m\n\ngo 1.21\n")
    (tmp_path / "m.go").write_text("package m\n\nfunc Add(a, b int) int { return a + b }\n")
    (tmp_path / "m_test.go").write_text(
        'package m\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n'
        '\t\tt.Fatal("no")\n\t}\n}\n')
    env = {**os.environ, "GOCACHE": str(tmp_path / "cache"), "GOFLAGS": "-count=1",
           "GOPATH": str(tmp_path / "gp")}
    ran = subprocess.run([go, "test", "./..."], cwd=tmp_path, capture_output=True, text=True, env=env,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert no_test_ran(ran.stdout + ran.stderr) is None, ran.stdout
    none = subprocess.run([go, "test", "-run", "Nothing", "./..."], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=300)
    found = no_test_ran(none.stdout + none.stderr)
    assert found is not None and found.runner == "go test", none.stdout
