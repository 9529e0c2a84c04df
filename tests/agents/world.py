"""A real git project and team repo for the agent tests, and `armbench run` through the installed command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = ["ARMBENCH", "CHECK", "Run", "Suite", "World", "git"]

ARMBENCH = Path(sys.executable).with_name("armbench")
IDENTITY = {"GIT_AUTHOR_NAME": "armbench agents", "GIT_AUTHOR_EMAIL": "agents@armbench.invalid",
            "GIT_COMMITTER_NAME": "armbench agents", "GIT_COMMITTER_EMAIL": "agents@armbench.invalid"}
PROJECT = {
    "calc.py": '"""A tiny calculator."""\n\n\ndef add(a, b):\n    return a - b\n',
    "tests/__init__.py": "",
    "tests/test_add.py": "import unittest\n\nimport calc\n\n\nclass AddTest(unittest.TestCase):\n"
                         "    def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n",
}
CHECK = {"run": "python3 -m unittest -q tests.test_add", "protect": ["tests/**"]}


def git(cwd: Path, *args: str) -> str:
    """Run git in cwd and return its stdout, stripped."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY})
    assert done.returncode == 0, f"git {' '.join(args)} failed in {cwd}: {done.stderr}"
    return done.stdout.strip()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@dataclass(frozen=True)
class Suite:
    """One suite: its name, its suite.yaml fields, and its tasks' prompts by task id."""

    name: str
    fields: dict[str, Any]
    prompts: dict[str, str]


@dataclass(frozen=True)
class Run:
    """How one `armbench run` ended: exit code, envelope, stderr and the record it wrote."""

    code: int
    envelope: dict[str, Any]
    stderr: str
    record: dict[str, Any]

    def trial(self, task: str, arm: str | None = None, repetition: int = 0) -> dict[str, Any]:
        """The record's trial of a task (and arm, repetition)."""
        return next(t for t in self.record["trials"] if t["task"] == task
                    and (arm is None or t["arm"] == arm) and t["repetition"] == repetition)


class World:
    """A project checkout with a bug in calc.py, and a team repo holding the given suites (and,
    per branch in `branches`, a branch of its main without the listed paths; `self.branches`
    holds their commits)."""

    def __init__(self, root: Path, suites: list[Suite], env: dict[str, str], *,
                 aliases: dict[str, Any] | None = None, team_files: dict[str, str] | None = None,
                 branches: dict[str, list[str]] | None = None, lanes: int = 2) -> None:
        self.root, self.env = root, env
        self.checkout = root / "calc"
        self.checkout.mkdir(parents=True)
        git(self.checkout, "init", "-q", "-b", "main")
        self.start = _commit(self.checkout, PROJECT, "calc: add subtracts")
        team = root / "team"
        team.mkdir()
        git(team, "init", "-q", "-b", "main")
        files = {"armbench.yaml": yaml.safe_dump({"schemaVersion": "v1alpha1", "name": "agents-team",
                                                   "description": "The agent tests' team."}),
                 **(team_files or {})}
        if aliases:
            files["models/aliases.yaml"] = yaml.safe_dump({"schemaVersion": "v1alpha1", "aliases": aliases})
        for suite in suites:
            fields = {"schemaVersion": "v1alpha1", "name": suite.name, "description": suite.name,
                      "repo": "https://example.invalid/agents/calc", **suite.fields}
            files[f"benchmarks/{suite.name}/suite.yaml"] = yaml.safe_dump(fields, sort_keys=False)
            for task, prompt in suite.prompts.items():
                files[f"benchmarks/{suite.name}/tasks/{task}.yaml"] = yaml.safe_dump({
                    "schemaVersion": "v1alpha1", "title": task, "prompt": prompt,
                    "startingCommit": self.start, "check": CHECK}, sort_keys=False)
        _commit(team, files, "suites for the agent tests")
        self.branches: dict[str, str] = {}
        for branch, removed in (branches or {}).items():  # a branch of main without these paths
            git(team, "checkout", "-q", "-b", branch, "main")
            git(team, "rm", "-rq", *removed)
            git(team, "commit", "-q", "-m", f"{branch}: without {', '.join(removed)}")
            self.branches[branch] = git(team, "rev-parse", "HEAD")
            git(team, "checkout", "-q", "main")
        for args in (["init", "--team", "../team"], ["pull"]):
            done = subprocess.run([str(ARMBENCH), *args], cwd=self.checkout, env=env,
                                  capture_output=True, text=True)
            assert done.returncode == 0, f"armbench {args[0]}: {done.stderr}"
        config = self.checkout / ".armbench" / "config.yaml"
        config.write_text(config.read_text().replace("max_parallel: 1", f"max_parallel: {lanes}"))

    def start_run(self, suite: str) -> subprocess.Popen[str]:
        """Start `armbench run <suite> --sandbox` in the checkout; finish it with `finish`."""
        return subprocess.Popen([str(ARMBENCH), "run", suite, "--sandbox"], cwd=self.checkout,
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self, proc: subprocess.Popen[str], timeout: float = 360) -> Run:
        """Wait for a started run and read its envelope and record."""
        stdout, stderr = proc.communicate(timeout=timeout)
        envelope = json.loads(stdout) if stdout.strip() else {}
        run = envelope.get("data", {}).get("done", {}).get("run")
        assert run, f"armbench run printed no done envelope (exit {proc.returncode}):\n{stderr}"
        record = json.loads((self.checkout / ".armbench" / "runs" / run / "benchmark.json").read_text())
        return Run(proc.returncode, envelope, stderr, record)
