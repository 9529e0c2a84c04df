"""A small world for the end-to-end tests of pairs, publication and the gate: real git repos and
the installed `armbench` command.

`calc/` is the member's checkout (one commit: `add` subtracts, `test_calc.py` says it should
add); `team.git` is the team repo with a scripted tool `agent` and a suite `gate` of two tasks,
two arms, `steady` (model m-steady) and `shaky` (model m-shaky), one repetition, in two lanes.
The tool fixes the bug and states 0.01 USD, except that `shaky` leaves the bug when the variable
BENCH_MODE is `bad`, and exits 75 (its provider is down: a transient failure) when it is `down`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ARMBENCH = Path(sys.executable).with_name("armbench")
IDENTITY = {"GIT_AUTHOR_NAME": "armbench tests", "GIT_AUTHOR_EMAIL": "tests@armbench.invalid",
            "GIT_COMMITTER_NAME": "armbench tests", "GIT_COMMITTER_EMAIL": "tests@armbench.invalid"}
AGENT = """set -eu
if [ "$ARMBENCH_MODEL" = "m-shaky" ] && [ "${BENCH_MODE:-good}" = "bad" ]; then exit 0; fi
if [ "$ARMBENCH_MODEL" = "m-shaky" ] && [ "${BENCH_MODE:-good}" = "down" ]; then exit 75; fi
sed -i 's/return a - b/return a + b/' calc.py
echo '{"tokens": {"input": 100, "output": 20}, "cost": {"amount": 0.01, "unit": "USD"}}' \\
  > "$ARMBENCH_USAGE_FILE"
"""
TEST = """import unittest

import calc


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)
"""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY})
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout.strip()


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@dataclass
class Result:
    """How one `armbench` call ended: exit code, the envelope's data or error, stderr."""

    code: int
    envelope: dict[str, Any]
    stderr: str

    def __str__(self) -> str:
        return f"exit {self.code}\n{json.dumps(self.envelope)[:2000]}\n{self.stderr}"


@dataclass
class World:
    """The checkout, the team repo and armbench's home, in one folder."""

    root: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def checkout(self) -> Path:
        return self.root / "calc"

    def armbench(self, *args: str, **env: str) -> Result:
        done = subprocess.run([str(ARMBENCH), *args], cwd=self.checkout, env={**self.env, **env},
                              capture_output=True, text=True, timeout=240,
                              stdin=subprocess.DEVNULL)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        return Result(done.returncode, json.loads(lines[-1]) if lines else {}, done.stderr)

    def configure(self, **keys: Any) -> None:
        path = self.checkout / ".armbench" / "config.yaml"
        config = yaml.safe_load(path.read_text())
        config.update(keys)
        path.write_text(yaml.safe_dump(config))


def make_world(root: Path, *, reports: Path) -> World:
    """Build the world and run `armbench init` (records go to `reports`) and `armbench pull`."""
    project = root / "calc"
    git(root, "init", "-q", "-b", "main", str(project))
    write(project, {"calc.py": "def add(a, b):\n    return a - b\n", "test_calc.py": TEST})
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "add subtracts")
    start = git(project, "rev-parse", "HEAD")
    team_work, team = root / "team-work", root / "team.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(team))
    git(root, "init", "-q", "-b", "main", str(team_work))
    suite = {"schemaVersion": "v1alpha1", "name": "gate", "repo": "https://example.invalid/calc",
             "defaults": {"tool": "agent", "model": "m-steady"},
             "arms": [{"name": "steady"}, {"name": "shaky", "model": "m-shaky"}],
             "repetitions": 1, "parallel": 2, "timeout": "5m",
             "trial": {"timeout": "1m", "retry_backoff": "1s"}}
    files = {"armbench.yaml": yaml.safe_dump({"schemaVersion": "v1alpha1", "name": "t"}),
             "tools/agent/tool.yaml": yaml.safe_dump({
                 "schemaVersion": "v1alpha1", "name": "agent", "description": "scripted",
                 "run": 'bash "$ARMBENCH_TOOL_DIR/agent.sh"'}),
             "tools/agent/agent.sh": AGENT,
             "benchmarks/gate/suite.yaml": yaml.safe_dump(suite, sort_keys=False)}
    for task_id in ("add-one", "add-two"):
        files[f"benchmarks/gate/tasks/{task_id}.yaml"] = yaml.safe_dump({
            "schemaVersion": "v1alpha1", "title": task_id,
            "prompt": f"{task_id}: add() in calc.py subtracts. Fix it.\n", "startingCommit": start,
            "check": {"run": "python3 -m unittest -q test_calc", "protect": ["test_calc.py"]}})
    write(team_work, files)
    git(team_work, "add", "-A")
    git(team_work, "commit", "-q", "-m", "team")
    git(team_work, "push", "-q", str(team), "HEAD:main")
    home = root / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "GIT_", "BENCH_"))}
    env.update(IDENTITY, ARMBENCH_HOME=str(home), PYTHONDONTWRITEBYTECODE="1",
               PATH=f"{ARMBENCH.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    world = World(root=root, env=env)
    assert world.armbench("init", "--team", str(team)).code == 0
    world.configure(reports=str(reports), workflows={"max_parallel": 2})
    pulled = world.armbench("pull")
    assert pulled.code == 0, pulled
    return world
