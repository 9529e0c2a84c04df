"""Strength: what `armbench try --strength` adds to `armbench try`, against its checks run plainly.

Run with `python -m perf.bench_strength [rounds]` (`armbench` on PATH). The project is a Python
package tested with unittest whose fix makes three comparisons inclusive (three hunks), and whose
check tests every boundary, so it rejects each mutant. Each round times `armbench try` and
`armbench try --strength --mutants 12 --lanes 2` of the same task, and the floor: the same 12
mutants (`suites.mutants`, the ones armbench makes) each checked plainly, one after another on
one lane: a `git clone --shared` at the fix, the mutant's file written, `python3 -m unittest`,
then divided by the 2 lanes. The figure is (strength − try) / floor; target 1.2x. It checks the
answer before it reports a time: every mutant killed.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from armbench.edge.gitclone import changed_files, git_env
from armbench.suites.mutants import mutants_of
from perf.bench_clone import bench_dir
from perf.bench_harvest import commit_files

__all__ = ["main", "measure"]

MUTANTS, LANES, ROUNDS, TARGET = 12, 2, 3, 1.2
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
TEST = ('import unittest\n\nfrom grades import grade\n\n\nclass T(unittest.TestCase):\n'
        '    def test_bands(self):\n'
        '        cases = {100: "A", 90: "A", 89: "B", 80: "B", 79: "C", 70: "C", 69: "F"}\n'
        '        for score, want in cases.items():\n'
        '            self.assertEqual(grade(score), want, score)\n')


def _project(root: Path) -> tuple[Path, Path, str, str]:
    repo, team = root / "grades", root / "team"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], env=git_env(), check=True)
    start = commit_files(repo, "start", {"grades.py": START})
    fix = commit_files(repo, "fix", {"grades.py": FIX, "tests/__init__.py": "", "tests/test_grades.py": TEST})
    task = team / "benchmarks" / "grades" / "tasks" / "bands.yaml"
    task.parent.mkdir(parents=True)
    (team / "benchmarks" / "grades" / "suite.yaml").write_text(yaml.safe_dump({
        "schemaVersion": "v1alpha1", "name": "grades", "repo": "https://example.invalid/grades",
        "defaults": {"tool": "claude"}, "arms": [{"name": "base"}], "timeout": "5m"}))
    task.write_text(yaml.safe_dump({
        "schemaVersion": "v1alpha1", "title": "bands", "prompt": "Fix the bands.\n",
        "startingCommit": start, "source": {"fix": fix},
        "check": {"run": "python3 -m unittest -q tests.test_grades",
                  "protect": ["tests/**", "unittest.py", "unittest/**"], "add": ["tests/test_grades.py"]}}))
    return repo, task, start, fix


def _try(repo: Path, task: Path, env: dict[str, str], *args: str) -> tuple[float, dict[str, object]]:
    began = time.perf_counter()
    done = subprocess.run(["armbench", "try", str(task), *args], cwd=repo, env=env, capture_output=True)
    took = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"armbench try failed:\n{done.stderr.decode()}")
    found: dict[str, object] = json.loads(done.stdout)["data"]["try"]
    return took, found


def _floor(repo: Path, start: str, fix: str, scratch: Path) -> float:
    """Seconds: each mutant checked plainly, one after another, divided by the lanes."""
    change = {p: pair for p, pair in changed_files(repo / ".git", start, fix).items()
              if not p.startswith("tests/")}  # what protect covers is no part of the fix's mutants
    mutants = mutants_of(change, seed=fix, limit=MUTANTS)
    env = git_env()
    began = time.perf_counter()
    for n, mutant in enumerate(mutants):
        clone = scratch / f"floor-{n}"
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(clone)],
                       env=env, check=True)
        subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q", fix], cwd=clone,
                       env=env, check=True)
        for rel, data in mutant.files.items():
            if data is not None:
                (clone / rel).write_bytes(data)
        subprocess.run(["python3", "-m", "unittest", "-q", "tests.test_grades"], cwd=clone, env=env,
                       capture_output=True)
        shutil.rmtree(clone)
    return (time.perf_counter() - began) / LANES


def measure(rounds: int = ROUNDS) -> dict[str, object]:
    """The median of `rounds` of (strength − try) / floor, with each round's ratio."""
    with tempfile.TemporaryDirectory(prefix="armbench-bench-strength-", dir=bench_dir()) as temp:
        root = Path(temp)
        repo, task, start, fix = _project(root / "w")
        env = {**os.environ, "ARMBENCH_HOME": str(root / "home"), "TMPDIR": str(root / "tmp")}
        (root / "tmp").mkdir()
        ratios, ours, floors = [], [], []
        for _ in range(rounds):
            plain, _found = _try(repo, task, env)
            strong, found = _try(repo, task, env, "--strength", "--mutants", str(MUTANTS),
                                 "--lanes", str(LANES))
            strength = found["strength"]
            assert isinstance(strength, dict) and strength["killed"] == strength["made"] > 0, strength
            floor = _floor(repo, start, fix, root)
            ours.append(strong - plain)
            floors.append(floor)
            ratios.append((strong - plain) / floor)
        return {"name": "strength", "floor_ms": 1000 * statistics.median(floors),
                "ours_ms": 1000 * statistics.median(ours), "ratio": statistics.median(ratios),
                "rounds": ratios, "target": TARGET, "mutants": MUTANTS, "lanes": LANES}


def _line(f: dict[str, object]) -> str:
    ok = "ok" if f["ratio"] <= f["target"] else "OVER TARGET"  # type: ignore[operator]
    rounds = f["rounds"]
    assert isinstance(rounds, list)
    return (f"{f['name']:<10} floor {f['floor_ms']:8.1f} ms  ours {f['ours_ms']:8.1f} ms  "
            f"ratio {f['ratio']:.2f}x (rounds {min(rounds):.2f} to {max(rounds):.2f}; "
            f"{f['mutants']} mutants on {f['lanes']} lanes)  (target <= {f['target']}x) {ok}")


def main(argv: list[str]) -> None:
    """Print the figure."""
    rounds = int(argv[0]) if argv else ROUNDS
    print(_line(measure(rounds)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
