"""`armbench task harvest`, through the installed command, on a real repository whose history
holds every kind of candidate: fixes that make tasks, a refactor whose test passes before, a fix
whose test fails after, a flaky test, a commit armbench cannot draft, and commits that are no
candidate at all (docs, tests alone, source alone). Resumable: nothing is tried twice."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
import yaml

from e2e.conftest import interrupted
from e2e.history_repos import Repo, history_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def unit_test(name: str, body: str, imports: str = "from calc import ops") -> str:
    return (f"import os\nimport unittest\n\n{imports}\n\n\nclass T(unittest.TestCase):\n"
            f"    def test_{name}(self):\n        {body}\n")


FLAKY = ('path = os.path.join(os.environ["E2E_OUT"], "flaky")\n'
         '        n = len(open(path).readlines()) if os.path.exists(path) else 0\n'
         '        open(path, "a").write("run\\n")\n'
         '        if n == 0:  # the first run lasts long enough for a stop sent when it began\n'
         '            __import__("time").sleep(1)\n'
         '        self.assertEqual(n % 2, 1)')


def history(repo: Repo) -> dict[str, str]:
    """The commits, by name, oldest first."""
    c = {}
    c["start"] = repo.commit("calc: start", {
        "calc/__init__.py": "", "calc/ops.py": "def add(a, b):\n    return a - b\n",
        "tests/__init__.py": "", "tests/test_base.py": unit_test("base", "self.assertTrue(ops)")})
    c["add"] = repo.commit("fix: add() subtracted", {
        "calc/ops.py": "def add(a, b):\n    return a + b\n",
        "tests/test_add.py": unit_test("add", "self.assertEqual(ops.add(2, 3), 5)")})
    c["docs"] = repo.commit("docs: readme", {"README.md": "# calc\n"})
    c["only_test"] = repo.commit("tests: more", {
        "tests/test_more.py": unit_test("more", "self.assertEqual(ops.add(1, 1), 2)")})
    c["refactor"] = repo.commit("refactor: name the sum", {
        "calc/ops.py": "def add(a, b):\n    total = a + b\n    return total\n",
        "tests/test_sum.py": unit_test("sum", "self.assertEqual(ops.add(0, 0), 0)")})
    c["wrong"] = repo.commit("fix: mul is wrong", {
        "calc/mul.py": "def mul(a, b):\n    return a + b\n",
        "tests/test_mul.py": unit_test("mul", "self.assertEqual(mul(2, 3), 6)",
                                       "from calc.mul import mul")})
    c["flaky"] = repo.commit("fix: neg", {
        "calc/neg.py": "def neg(a):\n    return -a\n",
        "tests/test_neg.py": unit_test("neg", FLAKY, "from calc.neg import neg")})
    c["shell"] = repo.commit("fix: the script", {
        "bin/run.sh": "echo ok\n", "tests/run_check.sh": "bash bin/run.sh\n"})
    c["source_only"] = repo.commit("perf: nothing to test",
                                   {"calc/ops.py": "def add(a, b):\n    return a + b\n"})
    c["sub"] = repo.commit("fix(ops): sub() was missing (#12)", {
        "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
        "tests/test_sub.py": unit_test("sub", "self.assertEqual(ops.sub(3, 2), 1)")})
    return c


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return Repo.make(tmp_path / "calc", history_env(tmp_path))


def verdicts(envelope_rows: list[dict[str, object]]) -> dict[str, str]:
    return {str(r["subject"]): str(r["verdict"]) for r in envelope_rows}


def test_every_candidate_gets_a_verdict_and_only_valid_tasks_are_written(repo: Repo, tmp_path: Path) -> None:
    c = history(repo)
    out = tmp_path / "tasks"
    done = repo.armbench("task", "harvest", "--out", str(out), "--repeat", "2", "--lanes", "3")
    assert done.code == 0, done
    rows = done.data["harvest"]["candidates"]
    names = ("add", "refactor", "wrong", "flaky", "shell", "sub")
    assert [r["commit"] for r in rows] == [c[n] for n in names]
    assert verdicts(rows) == {
        "fix: add() subtracted": "valid", "refactor: name the sum": "passes before",
        "fix: mul is wrong": "fails after", "fix: neg": "flaky", "fix: the script": "not drafted",
        "fix(ops): sub() was missing (#12)": "valid"}
    assert sorted(p.name for p in out.glob("*.yaml")) == ["add-subtracted.yaml", "sub-was-missing.yaml"]
    sub = yaml.safe_load((out / "sub-was-missing.yaml").read_text())
    assert sub["startingCommit"] == c["source_only"] and sub["source"]["fix"] == c["sub"]
    assert sub["check"]["run"] == "python3 -m unittest -q tests.test_sub"
    table = done.stderr[done.stderr.index("commit   subject"):]
    assert f"{c['wrong'][:7]}  fix: mul is wrong" in table and "fails after" in table
    assert "6 candidates: 1 fails after, 1 flaky, 1 not drafted, 1 passes before, 2 valid." in table
    state = json.loads((out / ".armbench-harvest.json").read_text())
    assert set(state["tried"]) == {r["commit"] for r in rows}

    again = repo.armbench("task", "harvest", "--out", str(out), "--repeat", "2")
    assert again.code == 0, again
    assert "6 candidates: 6 tried before, 0 to try" in again.stderr
    assert all(r["earlier"] for r in again.data["harvest"]["candidates"])
    assert verdicts(again.data["harvest"]["candidates"]) == verdicts(rows)
    assert "Task " not in again.stderr  # no check was tried again


def test_limit_range_and_paths_choose_the_candidates_and_a_later_harvest_goes_on(
        repo: Repo, tmp_path: Path) -> None:
    c = history(repo)
    out = tmp_path / "tasks"
    first = repo.armbench("task", "harvest", "--out", str(out), "--limit", "2")
    assert first.code == 0, first
    assert [r["commit"] for r in first.data["harvest"]["candidates"]] == [c["add"], c["refactor"]]
    assert "4 left for a later harvest" in first.stderr
    rest = repo.armbench("task", "harvest", "--out", str(out))
    tried = [(r["commit"], r["earlier"]) for r in rest.data["harvest"]["candidates"]]
    assert tried[:2] == [(c["add"], True), (c["refactor"], True)] and len(tried) == 6
    assert not any(earlier for _, earlier in tried[2:])

    ranged = repo.armbench("task", "harvest", "--out", str(tmp_path / "r"),
                           "--range", f"{c['docs']}..{c['flaky']}", "--paths", "calc/mul.py")
    assert [r["commit"] for r in ranged.data["harvest"]["candidates"]] == [c["wrong"]]
    since = repo.armbench("task", "harvest", "--out", str(tmp_path / "s"), "--since", c["shell"])
    subjects = [r["subject"] for r in since.data["harvest"]["candidates"]]
    assert subjects == ["fix(ops): sub() was missing (#12)"]
    both = repo.armbench("task", "harvest", "--out", str(tmp_path / "b"), "--since", "HEAD~1",
                         "--range", "HEAD~2..HEAD")
    assert both.code == 2 and both.error["code"] == "invalid_inputs", both


def test_a_stopped_harvest_keeps_what_it_tried_and_goes_on_from_there(repo: Repo, tmp_path: Path) -> None:
    c = history(repo)
    out = tmp_path / "tasks"
    stop_at = tmp_path / "out" / "flaky"  # the flaky test's first run writes it
    stopped = interrupted(["task", "harvest", "--out", str(out), "--lanes", "1"], repo.root, repo.env,
                          once=stop_at, sig=signal.SIGINT)
    assert stopped.code == 130, stopped
    assert stopped.error["code"] == "harvest_stopped"
    kept = json.loads((out / ".armbench-harvest.json").read_text())["tried"]
    assert {c["add"], c["refactor"], c["wrong"]} <= set(kept) and c["sub"] not in kept
    goes_on = repo.armbench("task", "harvest", "--out", str(out), "--lanes", "1")
    rows = {r["commit"]: r for r in goes_on.data["harvest"]["candidates"]}
    assert all(rows[c[n]]["earlier"] for n in ("add", "refactor", "wrong"))
    assert not rows[c["sub"]]["earlier"] and rows[c["sub"]]["verdict"] == "valid"


BANDS = ('def grade(score):\n    if score {} 90:\n        return "A"\n    # B\n    if score {} 80:\n'
         '        return "B"\n    # C\n    if score {} 70:\n        return "C"\n    return "F"\n')


def test_min_strength_keeps_only_the_drafts_whose_checks_reject_the_fixs_mutants(repo: Repo,
                                                                                 tmp_path: Path) -> None:
    """Issue 42: two fixes of the same three bands, one tested at one value, one at every
    boundary; `--min-strength 0.8` writes the second alone and names the first's survivors."""
    repo.commit("calc: start", {"calc/__init__.py": "", "tests/__init__.py": "",
                                "calc/bands.py": BANDS.format(">", ">", ">"),
                                "calc/grades.py": BANDS.format(">", ">", ">")})
    repo.commit("fix: bands include their lower bound", {
        "calc/bands.py": BANDS.format(">=", ">=", ">="),
        "tests/test_bands.py": unit_test("bands", "self.assertEqual(bands.grade(90), 'A')",
                                         "from calc import bands")})
    thorough = ("for s, w in {100: 'A', 90: 'A', 89: 'B', 80: 'B', 79: 'C', 70: 'C', 69: 'F'}.items():\n"
                "            self.assertEqual(grades.grade(s), w, s)")
    repo.commit("fix: grades include their lower bound", {
        "calc/grades.py": BANDS.format(">=", ">=", ">="),
        "tests/test_grades.py": unit_test("grades", thorough, "from calc import grades")})
    out = tmp_path / "tasks"
    done = repo.armbench("task", "harvest", "--out", str(out), "--min-strength", "0.8", "--mutants", "12")
    assert done.code == 0, done
    rows = {str(r["subject"]): r for r in done.data["harvest"]["candidates"]}
    weak, strong = rows["fix: bands include their lower bound"], rows["fix: grades include their lower bound"]
    assert weak["verdict"] == "weak check" and weak["file"] is None
    assert isinstance(weak["strength"], float) and weak["strength"] < 0.8
    assert weak["survivors"] and "below --min-strength 0.8" in str(weak["detail"])
    assert strong["verdict"] == "valid" and strong["strength"] == 1.0 and strong["survivors"] == []
    assert sorted(p.name for p in out.glob("*.yaml")) == [strong["file"]]
    assert "strength" in done.stderr and "1 weak check" in done.stderr
