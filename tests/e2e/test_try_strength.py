"""`armbench try --strength`: the check's strength from mutants of the fix (issue 42, point 1).

A Python project whose fix makes three comparisons inclusive (three hunks). One task's check
tests one value of that multi-case fix and passes most wrong fixes, partial fixes among them;
the other tests every boundary and rejects all of them. The same numbers come back in a second
checkout (another machine's), and a surviving mutant's diff shows the wrong fix.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from armbench.cli.main import app
from e2e.conftest import dump, git, write_files

pytestmark = pytest.mark.e2e

REPO_URL = "https://example.invalid/strength/grades"
WHEN = {"GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}
"""Fixed dates: a second checkout made later has the same commits, as another machine's clone."""
START = '''def grade(score):
    if score > 90:
        return "A"
    # the B band
    if score > 80:
        return "B"
    # the C band
    if score > 70:
        return "C"
    return "F"
'''
FIX = START.replace("> 90", ">= 90").replace("> 80", ">= 80").replace("> 70", ">= 70")
WEAK = 'from grades import grade\nassert grade(90) == "A"\n'
STRONG = ('from grades import grade\n'
          'cases = {100: "A", 90: "A", 89: "B", 80: "B", 79: "C", 70: "C", 69: "F", 0: "F"}\n'
          'for score, want in cases.items():\n'
          '    assert grade(score) == want, (score, grade(score), want)\n')


def _project(root: Path) -> tuple[Path, Path, str, str]:
    checkout, team = root / "grades", root / "team"
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main", str(checkout))
    write_files(checkout, {"grades.py": START, "README.md": "grades\n"})
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "start: the bands leave out their lower bounds", env=WHEN)
    start = git(checkout, "rev-parse", "HEAD")
    write_files(checkout, {"grades.py": FIX, "tests/weak.py": WEAK, "tests/strong.py": STRONG})
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "fix: each band includes its lower bound", env=WHEN)
    fix = git(checkout, "rev-parse", "HEAD")
    write_files(team, {"armbench.yaml": dump({"schemaVersion": "v1alpha1"}),
                       "benchmarks/grades/suite.yaml": dump({
                           "schemaVersion": "v1alpha1", "name": "grades", "repo": REPO_URL,
                           "defaults": {"tool": "claude"}, "arms": [{"name": "base"}], "timeout": "5m"})})
    for name in ("weak", "strong"):
        write_files(team, {f"benchmarks/grades/tasks/{name}.yaml": dump({
            "schemaVersion": "v1alpha1", "title": name, "prompt": "Fix the grade bands.\n",
            "startingCommit": start, "source": {"fix": fix},
            "check": {"run": f"PYTHONPATH=. python3 tests/{name}.py", "protect": ["tests/**"],
                      "add": [f"tests/{name}.py"]}})})
    return checkout, team, start, fix


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str, str]:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("ARMBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return _project(tmp_path / "w")


def _strength(checkout: Path, task: str, monkeypatch: pytest.MonkeyPatch,
              *args: str) -> tuple[dict[str, Any], str]:
    monkeypatch.chdir(checkout)
    result = CliRunner().invoke(app, ["try", f"../team/benchmarks/grades/tasks/{task}.yaml", "--strength",
                                      *args], catch_exceptions=False)
    assert result.exit_code == 0, (result.stdout, result.stderr)
    strength: dict[str, Any] = json.loads(result.stdout)["data"]["try"]["strength"]
    return strength, result.stderr


def test_a_check_of_one_value_is_weak_and_its_surviving_partial_fixes_are_listed(
        project: tuple[Path, Path, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    checkout, _team, _start, _fix = project
    weak, said = _strength(checkout, "weak", monkeypatch)
    assert 10 <= weak["made"] <= 20 and weak["couldNotRun"] == 0 and weak["mutants"] == weak["made"]
    assert weak["strength"] is not None and weak["strength"] < 0.5
    assert 0 <= weak["lower"] < weak["strength"] < weak["upper"] <= 1
    kinds = {s["kind"] for s in weak["survivors"]}
    assert {"hunk_reverted", "only_hunk"} & kinds  # partial fixes pass a check of one value
    partial = next(s for s in weak["survivors"] if s["kind"] == "hunk_reverted")
    assert partial["file"] == "grades.py" and "-    if score >= " in partial["diff"]
    assert f"strength {round(100 * weak['strength'])}%" in said
    assert "a survivor may be equivalent to the fix" in said


def test_a_thorough_check_is_strong_and_the_numbers_are_the_same_on_another_machine(
        project: tuple[Path, Path, str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    checkout, _team, _start, _fix = project
    strong, _ = _strength(checkout, "strong", monkeypatch)
    assert strong["strength"] is not None and strong["strength"] >= 0.9, strong["survivors"]
    weak, _ = _strength(checkout, "weak", monkeypatch, "--lanes", "1")
    other, _, _, fix = _project(tmp_path / "elsewhere")  # the same commits, another checkout
    assert fix == _fix
    again, _ = _strength(other, "weak", monkeypatch, "--lanes", "3")
    assert again == weak  # the same mutants, the same verdicts, whatever the lanes


def test_the_mutant_count_is_bounded_and_checked(project: tuple[Path, Path, str, str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    checkout, _team, _start, _fix = project
    few, _ = _strength(checkout, "weak", monkeypatch, "--mutants", "4")
    assert few["made"] == 4  # the partial fixes come first: 3 hunks reverted alone, then one kept alone
    assert {s["kind"] for s in few["survivors"]} <= {"hunk_reverted", "only_hunk"}
    monkeypatch.chdir(checkout)
    refused = CliRunner().invoke(app, ["try", "../team/benchmarks/grades/tasks/weak.yaml", "--strength",
                                       "--mutants", "0"])
    assert refused.exit_code == 2
    assert json.loads(refused.stdout)["error"]["code"] == "invalid_inputs"
