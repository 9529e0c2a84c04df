"""Builders for the review and namespace tests: real git repos and the installed `armbench` command.

A `Team` is a working git repo of team assets; review runs in it, and pull fetches from it. A
`Member` is a project checkout whose `.armbench/config.yaml` points at the team with some roles.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

ARMBENCH = Path(sys.executable).with_name("armbench")
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guide" / "review.md"
IDENTITY = {"GIT_AUTHOR_NAME": "review tests", "GIT_AUTHOR_EMAIL": "review@armbench.invalid",
            "GIT_COMMITTER_NAME": "review tests", "GIT_COMMITTER_EMAIL": "review@armbench.invalid",
            "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
            "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00"}
START = "b75d6179203f8292101e24719f1c2c3e5bbc33c5"
"""The member checkout's one commit (`make_member`), made with fixed dates so it is always this
one: plan refuses a startingCommit that neither the checkout nor the suite's repo has."""


def git(cwd: Path, *args: str) -> str:
    """Run git in cwd; its stdout, stripped."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **IDENTITY})
    assert done.returncode == 0, f"git {' '.join(args)} failed in {cwd}: {done.stderr}"
    return done.stdout.strip()


def dump(data: dict[str, Any]) -> str:
    """YAML text of a dict, keys in the order given."""
    return yaml.safe_dump(data, sort_keys=False, width=1000)


@dataclass
class Result:
    """How one `armbench` invocation ended."""

    code: int
    envelope: dict[str, Any] | None
    stderr: str

    @property
    def data(self) -> dict[str, Any]:
        assert self.envelope is not None and "data" in self.envelope, self
        return self.envelope["data"]

    def findings(self, severity: str = "fail") -> list[tuple[str, int | None, str]]:
        """(file, line, code) of the review's findings of one severity, in order."""
        return [(f["file"], f["line"], f["code"]) for f in self.data["review"]["findings"]
                if f["severity"] == severity]


def armbench(cwd: Path, *args: str, home: Path) -> Result:
    """The installed `armbench <args>` in cwd, with armbench's home in `home`."""
    return _run([str(ARMBENCH), *args], cwd, home)


def shell(cwd: Path, command: str, home: Path) -> Result:
    """A shell command line in cwd, with the installed `armbench` first on PATH."""
    return _run(["bash", "-c", command], cwd, home)


def _run(argv: list[str], cwd: Path, home: Path) -> Result:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "GIT_"))}
    env.update(IDENTITY, ARMBENCH_HOME=str(home), PATH=f"{ARMBENCH.parent}{os.pathsep}{env['PATH']}")
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    lines = done.stdout.strip().splitlines()
    return Result(done.returncode, json.loads(lines[-1]) if lines else None, done.stderr)


def guide_yaml(top_key: str, page: Path = GUIDE) -> dict[str, Any]:
    """The YAML example of `page` (docs/guide/review.md, or its zh-CN page) whose top level has `top_key`."""
    for block in re.findall(r"```yaml\n(.*?)```", page.read_text(), re.DOTALL):
        data = yaml.safe_load(block)
        if top_key in data:
            return data
    raise AssertionError(f"{page} has no YAML example with `{top_key}:`")


@dataclass
class Team:
    """A working git repo of team assets on `main`."""

    root: Path
    home: Path

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def suite(self, suite_dir: str, **fields: Any) -> None:
        """`<suite_dir>/suite.yaml`, named after its directory, over valid defaults."""
        self.write(f"{suite_dir}/suite.yaml", dump({
            "schemaVersion": "v1alpha1", "name": suite_dir.rsplit("/", 1)[-1],
            "repo": "https://example.invalid/calc", "defaults": {"tool": "claude", "model": "strong"},
            "arms": [{"name": "base"}], "repetitions": 1, "timeout": "1h", **fields}))

    def task(self, suite_dir: str, task_id: str) -> None:
        """A valid `<suite_dir>/tasks/<task_id>.yaml`."""
        self.write(f"{suite_dir}/tasks/{task_id}.yaml", dump({
            "schemaVersion": "v1alpha1", "title": task_id, "prompt": "Fix add().\n",
            "startingCommit": START, "check": {"run": "true", "protect": ["tests/**"]}}))

    def commit(self, message: str = "team assets") -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.root, "rev-parse", "HEAD")

    def review(self, *args: str) -> Result:
        return armbench(self.root, "review", *args, home=self.home)


@dataclass
class Member:
    """A project checkout tied to the team repo, with the roles its config lists."""

    root: Path
    team: Team

    def roles(self, *roles: str) -> None:
        """Write `.armbench/config.yaml` with these active roles and projects."""
        config = self.root / ".armbench" / "config.yaml"
        config.parent.mkdir(exist_ok=True)
        config.write_text(dump({"team": str(self.team.root), "roles": list(roles)}))

    def armbench(self, *args: str) -> Result:
        return armbench(self.root, *args, home=self.team.home)

    @property
    def cache(self) -> dict[str, Any]:
        return json.loads((self.root / ".armbench" / "cache" / "suites.json").read_text())


@pytest.fixture
def team(tmp_path: Path) -> Team:
    """An empty team repo with `armbench.yaml`, not yet committed."""
    root, home = tmp_path / "team", tmp_path / "home"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    home.mkdir()
    made = Team(root=root, home=home)
    made.write("armbench.yaml", "schemaVersion: v1alpha1\nname: review-tests\n")
    return made


def make_member(team: Team, name: str) -> Member:
    """A project checkout with one commit, next to the team repo."""
    root = team.root.parent / name
    git(team.root.parent, "init", "-q", "-b", "main", str(root))
    (root / "README.md").write_text("# calc\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return Member(root=root, team=team)
