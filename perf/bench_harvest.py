"""Harvest: `armbench task harvest` over a generated history of 100 commits with 20 planted fixes.

Run with `python -m perf.bench_harvest [rounds]` (`armbench` on PATH). The repository is a
Python package tested with unittest; its 100 first-parent commits are, in a fixed shuffled order:

- 20 planted fixes: a function made wrong by an earlier commit, fixed, with a new test that fails
  before the fix and passes after it (each a valid task);
- 10 decoys: a source change with a new test that already passes before it (`passes before`);
- 70 commits that are no candidate: the start, each fix's wrong function brought in (source
  only), and docs.

It checks the harvest's answer before it reports a time: every planted fix written, as a task
whose startingCommit and source.fix are the fix's parent and the fix, and nothing else written
(no decoy, no other file). The figure is the harvest's wall time per candidate (30 candidates,
one lane) against the floor: what two `try` check runs cost without armbench, for each candidate
a clone at the parent and one at the fix (`git clone --shared`, checkout) and the test run in each
(`python3 -m unittest`, the system's python3, as the sandbox's check runs it), back to back; a
decoy's check runs once (it passes before, so a try stops there), so the floor is that mix:
(20 x two runs + 10 x one run) / 30. Target 2x: per candidate armbench does what `try` does (a
temporary commit cache that fetches both commits from the checkout, an isolated clone of each,
the suite's setup, protect and add, the check in the sandbox) plus the draft; the floor has no
cache, no isolation and no draft. A second harvest into the same folder (everything tried
before) is informative, and so is the harvest in two lanes.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from armbench.edge.gitclone import git_env
from perf.bench_clone import bench_dir

__all__ = ["build_history", "commit_files", "main", "measure"]

FIXES, DECOYS, COMMITS = 20, 10, 100
ROUNDS, TARGET = 3, 2.0


def commit_files(repo: Path, message: str, files: dict[str, str]) -> str:
    """Write the files and commit them (an empty commit when they change nothing); its SHA."""
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    env = git_env() | {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
                       "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    subprocess.run(["git", "add", "-A"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", message], cwd=repo, env=env, check=True)
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode().strip()


def _test(name: str, expected: int) -> str:
    return (f"import unittest\n\nfrom calc.{name} import {name}\n\n\nclass T(unittest.TestCase):\n"
            f"    def test_{name}(self):\n        self.assertEqual({name}(), {expected})\n")


def build_history(repo: Path) -> dict[str, tuple[str, str, str]]:
    """The repository; planted fix SHA -> (its parent, its test module, its function)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], env=git_env(), check=True)
    commit_files(repo, "calc: start",
                 {"calc/__init__.py": "", "tests/__init__.py": "", "README.md": "# calc\n"})
    plan = ([("fix", i) for i in range(FIXES)] + [("decoy", i) for i in range(DECOYS)]
            + [("docs", i) for i in range(COMMITS - 1 - 2 * FIXES - DECOYS)])
    random.Random(7).shuffle(plan)
    # every planted fix's wrong function comes in (source only) before its fix
    ordered: list[tuple[str, int]] = []
    for kind, i in plan:
        ordered += [("wrong", i), ("fix", i)] if kind == "fix" else [(kind, i)]
    planted: dict[str, tuple[str, str, str]] = {}
    parent = ""
    for kind, i in ordered:
        name = f"f{i:02d}"
        if kind == "wrong":
            wrong = f"def {name}():\n    return {i} - 1\n"
            parent = commit_files(repo, f"feat: {name}", {f"calc/{name}.py": wrong})
        elif kind == "fix":
            sha = commit_files(repo, f"fix: {name}() is off by one", {
                f"calc/{name}.py": f"def {name}():\n    return {i}\n",
                f"tests/test_{name}.py": _test(name, i)})
            planted[sha] = (parent, f"tests.test_{name}", name)
        elif kind == "decoy":  # a source change and a test that passes before it
            commit_files(repo, f"refactor: tidy {i}", {
                "calc/__init__.py": f"# tidied {i}\n",
                f"tests/test_d{i:02d}.py": "import unittest\n\n\nclass T(unittest.TestCase):\n"
                                           "    def test_sum(self):\n        self.assertEqual(1 + 1, 2)\n"})
        else:
            commit_files(repo, f"docs: note {i}", {"README.md": f"# calc\n\nnote {i}\n"})
    return planted


def _harvest(repo: Path, out: Path, lanes: int, env: dict[str, str]) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    done = subprocess.run(["armbench", "task", "harvest", "--out", str(out), "--lanes", str(lanes)],
                          cwd=repo, env=env, capture_output=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"armbench task harvest failed:\n{done.stderr.decode()}")
    return seconds, json.loads(done.stdout.decode().splitlines()[-1])["data"]["harvest"]


def _check(out: Path, planted: dict[str, tuple[str, str, str]], data: dict[str, object]) -> int:
    """The harvest's answer: every planted fix written, nothing else; the candidates' count."""
    written = {}
    for path in out.glob("*.yaml"):
        task = yaml.safe_load(path.read_text())
        written[task["source"]["fix"]] = task["startingCommit"]
    expected = {sha: parent for sha, (parent, _, _) in planted.items()}
    if written != expected:
        raise SystemExit(f"harvest wrote {len(written)} tasks; expected the {len(expected)} planted fixes "
                         f"exactly (missing {len(set(expected) - set(written))}, "
                         f"not planted {len(set(written) - set(expected))})")
    rows = data["candidates"]
    assert isinstance(rows, list)
    return len(rows)


def _floor(repo: Path, planted: dict[str, tuple[str, str, str]], scratch: Path) -> float:
    """Seconds per candidate: two clones (parent, fix) and the test run in each, no armbench."""
    env = git_env() | {"PYTHONDONTWRITEBYTECODE": "1"}
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "python3"  # the check's
    times = []
    for n, (sha, (parent, module, _)) in enumerate(list(planted.items())[:6]):
        started = time.perf_counter()
        for side, commit in (("a", parent), ("b", sha)):
            clone = scratch / f"floor-{n}-{side}"
            subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(clone)],
                           env=env, check=True)
            subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q", commit], cwd=clone,
                           env=env, check=True)
            if side == "a":  # the test comes from the fix, as check.add writes it
                test = module.replace(".", "/") + ".py"
                shown = subprocess.run(["git", "show", f"{sha}:{test}"], cwd=clone, env=env, check=True,
                                       capture_output=True).stdout
                (clone / test).write_bytes(shown)
            subprocess.run([python, "-m", "unittest", "-q", module], cwd=clone, env=env,
                           capture_output=True, check=False)
            shutil.rmtree(clone)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(rounds: int = ROUNDS) -> dict[str, float]:
    """Per round, one harvest into a fresh folder (checked) and the floor, back to back, which goes
    first alternating; the median of the rounds' own ratios. Then a resume and two lanes."""
    with tempfile.TemporaryDirectory(prefix="armbench-bench-harvest-", dir=bench_dir()) as temp:
        root = Path(temp)
        repo = root / "calc"
        planted = build_history(repo)
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env |= {"ARMBENCH_HOME": str(root / "home"), "TMPDIR": str(root)}
        ours, floors, ratios = [], [], []
        candidates = 0
        for r in range(rounds):
            out = root / f"tasks-{r}"
            if r % 2:
                floor = _floor(repo, planted, root)
            seconds, data = _harvest(repo, out, 1, env)
            candidates = _check(out, planted, data)
            if not r % 2:
                floor = _floor(repo, planted, root)
            # a decoy's check runs once (it passes before, so the fix is not tried): this mix's floor
            floor = (FIXES * floor + DECOYS * floor / 2) / (FIXES + DECOYS)
            ours.append(seconds / candidates)
            floors.append(floor)
            ratios.append(ours[-1] / floor)
        resumed = _harvest(repo, root / "tasks-0", 1, env)[0]
        seconds2, data2 = _harvest(repo, root / "lanes", 2, env)
        _check(root / "lanes", planted, data2)
    return {"candidates": candidates, "ours_s": statistics.median(ours),
            "floor_s": statistics.median(floors), "ratio": statistics.median(ratios),
            "low": min(ratios), "high": max(ratios), "resume_s": resumed,
            "two_lanes_s": seconds2 / candidates}


def main(argv: list[str]) -> None:
    f = measure(int(argv[0]) if argv else ROUNDS)
    verdict = "ok" if f["ratio"] <= TARGET else "OVER TARGET"
    print(f"harvest: {FIXES}/{FIXES} planted fixes found, no invalid task written; "
          f"{f['ours_s'] * 1000:.0f} ms a candidate (1 lane, {f['candidates']:.0f} candidates in "
          f"{COMMITS} commits) against {f['floor_s'] * 1000:.0f} ms of bare check runs (two a fix, "
          f"one a decoy): {f['ratio']:.2f}x (rounds {f['low']:.2f} to {f['high']:.2f}; target {TARGET}x) "
          f"{verdict}", flush=True)
    print(f"harvest-resume: {f['resume_s'] * 1000:.0f} ms for a harvest whose candidates were all "
          f"tried before; 2 lanes: {f['two_lanes_s'] * 1000:.0f} ms a candidate (informative)", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
