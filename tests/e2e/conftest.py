"""End-to-end builders: real git repos, a real team repo, and the installed `armbench` command.

Fakes, not mocks. A `World` is one tmp folder holding:

- `calc/`: the member's project checkout, a tiny Python project made with the git CLI, whose
  checks are `python3 -m unittest ...` (see `PROJECT_COMMITS`);
- `team.git` (bare, what `armbench init --team` points at) and `team-work/` (a clone the tests and
  the scripted tools commit and push from): `armbench.yaml`, `models/aliases.yaml`,
  `tools/<name>/tool.yaml` with a scripted agent, `benchmarks/<suite>/suite.yaml` and `tasks/`;
- `home/` (`$ARMBENCH_HOME`, where the commit cache lives), `out/`, a folder outside every
  clone where tools, setups and checks leave evidence (`$E2E_OUT`), and `tmp/` (`$TMPDIR`, so the
  run's work folder with its clones stays in the test's folder).

`World.armbench(...)` runs the venv's `armbench` in a subprocess and returns a `Result`
(exit code, the parsed stdout envelope, stderr). Nothing is shared between worlds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

ARMBENCH = Path(sys.executable).with_name("armbench")
WITHHELD = ("GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "GL_TOKEN", "CI_JOB_TOKEN", "SSH_AUTH_SOCK",
            "GIT_ASKPASS", "SSH_ASKPASS", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE")
REPO_URL = "https://example.invalid/e2e/calc"
SANDBOX_MESSAGE = (
    'Step "trials" requires strict isolation, and the local driver here is not a sandbox. Run it '
    "in CI or a container, and declare it with --sandbox or workflows.sandbox: true."
)
IDENTITY = {"GIT_AUTHOR_NAME": "armbench e2e", "GIT_AUTHOR_EMAIL": "e2e@armbench.invalid",
            "GIT_COMMITTER_NAME": "armbench e2e", "GIT_COMMITTER_EMAIL": "e2e@armbench.invalid"}

# ---------------------------------------------------------------- the project

CALC_BUGGY = '''"""A tiny calculator."""


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
'''
CALC_FIXED = CALC_BUGGY.replace("return a - b", "return a + b")
TESTS_INIT = '''"""The test package. A developer may drop overrides into tests/local.py; it is imported."""

try:
    from tests import local  # noqa: F401
except ImportError:
    pass
'''
TEST_MUL = '''import unittest

import calc


class MulTest(unittest.TestCase):
    def test_mul(self):
        self.assertEqual(calc.mul(2, 3), 6)
'''
TEST_CONFIG = "[tests]\n# names of test modules to skip, separated by spaces\nskip =\n"


def add_test_source(*, hidden: bool) -> str:
    """tests/test_add.py; the fix's version logs `<$E2E_TASK> hidden` to `$E2E_CHECK_LOG` when it runs."""
    log = '''
def setUpModule():
    log = os.environ.get("E2E_CHECK_LOG")
    if log:
        with open(log, "a") as f:
            f.write(os.environ.get("E2E_TASK", "?") + " hidden\\n")
''' if hidden else ""
    return f'''import configparser
import os
import unittest

import calc

_config = configparser.ConfigParser()
_config.read("testconfig.ini")
SKIP = _config.get("tests", "skip", fallback="").split()
{log}

class AddTest(unittest.TestCase):
    def setUp(self):
        if "add" in SKIP:
            self.skipTest("skipped by testconfig.ini")

    def test_add(self):
        self.assertEqual(calc.add(2, 3), 5)
        self.assertEqual(calc.add(-1, 1), 0)
'''


PROJECT_COMMITS: list[tuple[str, str, dict[str, str]]] = [
    ("start", "calc: add and mul, with a test for mul", {
        "README.md": "# calc\n", "calc.py": CALC_BUGGY, "testconfig.ini": TEST_CONFIG,
        "tests/__init__.py": TESTS_INIT, "tests/test_mul.py": TEST_MUL}),
    ("test", "tests: add should add", {"tests/test_add.py": add_test_source(hidden=False)}),
    ("fix", "calc: add adds; the test logs that it ran", {
        "calc.py": CALC_FIXED, "tests/test_add.py": add_test_source(hidden=True)}),
]
"""(name, message, files) in order: `start` has the bug and no test for it, `test` adds a test
that fails, `fix` fixes the bug (and is the source of the hidden test). main ends at `fix`."""


def git_raw(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run git with no user or system config and no inherited `GIT_*` (such as a hook's GIT_DIR)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    hermetic = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          env={**base, **hermetic, **IDENTITY, **(env or {})})


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    """Run git (see `git_raw`); its stdout, stripped."""
    done = git_raw(cwd, *args, env=env)
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed in {cwd}: {done.stderr}")
    return done.stdout.strip()


def write_files(root: Path, files: dict[str, str]) -> None:
    """Write text files under root, making folders."""
    for rel, text in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


TIDY_SCORER = """---
name: tidy
description: Is the change tidy?
labels:
  - {value: tidy, score: 1}
  - {value: messy, score: 0}
passingScore: 1
---
The smallest change that fixes the bug is tidy.
"""
"""A team scorer the scripted judge below always answers `tidy`."""
TIDY_JUDGE = """cat > /dev/null
echo judged >> "$E2E_OUT/judged"
echo '{"label": "tidy", "reason": "scripted"}'
"""
"""A scripted judge tool: `tidy` for every trial, one line in `$E2E_OUT/judged` per call."""

@dataclass
class Project:
    """The member's checkout of the project: main at `fix`, commit ids by name."""

    root: Path
    commits: dict[str, str]

    def blob(self, commit: str, path: str) -> str:
        """The blob id of a file at a commit."""
        return git(self.root, "rev-parse", f"{self.commits[commit]}:{path}")

    def status(self) -> tuple[str, str]:
        """(HEAD, `git status --porcelain`) of the checkout."""
        status = git_raw(self.root, "status", "--porcelain", "--untracked-files=all").stdout
        return git(self.root, "rev-parse", "HEAD"), status


def make_project(root: Path) -> Project:
    """A git repo with the commits of PROJECT_COMMITS."""
    git(root.parent, "init", "-q", "-b", "main", str(root))
    commits = {}
    for name, message, files in PROJECT_COMMITS:
        write_files(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message)
        commits[name] = git(root, "rev-parse", "HEAD")
    return Project(root=root, commits=commits)


# ---------------------------------------------------------------- the team repo

def dump(data: dict[str, Any]) -> str:
    """YAML text of a dict, keys in the order given."""
    return yaml.safe_dump(data, sort_keys=False, width=1000)


@dataclass
class TeamRepo:
    """A bare team repo and a working clone to commit and push from."""

    bare: Path
    work: Path

    def write(self, rel: str, text: str) -> None:
        write_files(self.work, {rel: text})

    def suite(self, name: str, **fields: Any) -> None:
        """benchmarks/<name>/suite.yaml from keyword fields over sensible defaults."""
        body = {"schemaVersion": "v1alpha1", "name": name, "repo": REPO_URL,
                "defaults": {"tool": "agent"}, "arms": [{"name": "base"}], "repetitions": 1,
                "timeout": "2m", "trial": {"timeout": "1m"}}
        body.update(fields)
        self.write(f"benchmarks/{name}/suite.yaml", dump(body))

    def task(self, suite: str, task_id: str, **fields: Any) -> None:
        """benchmarks/<suite>/tasks/<task_id>.yaml."""
        body = {"schemaVersion": "v1alpha1", "title": f"Task {task_id}",
                "prompt": f"Task {task_id}: add() in calc.py subtracts. Fix it.\n"}
        body.update(fields)
        self.write(f"benchmarks/{suite}/tasks/{task_id}.yaml", dump(body))

    def tool(self, name: str, script: str, *, lang: str = "bash") -> None:
        """tools/<name>/tool.yaml running a scripted agent (bash or python) from the tool's folder."""
        file, runner = ("agent.sh", "bash") if lang == "bash" else ("agent.py", "python3")
        self.write(f"tools/{name}/tool.yaml", dump({
            "schemaVersion": "v1alpha1", "name": name,
            "description": "A scripted stand-in for an agent, for the end-to-end tests.",
            "run": f'{runner} "$ARMBENCH_TOOL_DIR/{file}"'}))
        self.write(f"tools/{name}/{file}", script)

    def aliases(self, aliases: dict[str, dict[str, Any]]) -> None:
        self.write("models/aliases.yaml", dump({"schemaVersion": "v1alpha1", "aliases": aliases}))

    def publish(self, message: str = "team assets") -> str:
        """Commit everything and push main; return the new revision."""
        git(self.work, "add", "-A")
        git(self.work, "commit", "-q", "--allow-empty", "-m", message)
        git(self.work, "push", "-q", "origin", "HEAD:main")
        return git(self.work, "rev-parse", "HEAD")


def make_team(root: Path) -> TeamRepo:
    """An empty bare team repo with a working clone that holds armbench.yaml."""
    bare, work = root / "team.git", root / "team-work"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    git(root, "init", "-q", "-b", "main", str(work))
    git(work, "remote", "add", "origin", str(bare))
    team = TeamRepo(bare=bare, work=work)
    team.write("armbench.yaml", dump({"schemaVersion": "v1alpha1", "name": "e2e-team"}))
    return team


# ---------------------------------------------------------------- tasks over the project

def visible_task(project: Project, **check: Any) -> dict[str, Any]:
    """A task at `test`: the failing test is in the clone, protected."""
    return {"startingCommit": project.commits["test"],
            "check": {"run": "python3 -m unittest -q tests.test_add",
                      "protect": ["tests/**", "testconfig.ini"], **check}}


def hidden_task(project: Project, **check: Any) -> dict[str, Any]:
    """A task at `start`: the test comes from the fix through check.add; the agent never sees it."""
    return {"startingCommit": project.commits["start"],
            "check": {"run": "python3 -m unittest -q tests.test_add",
                      "protect": ["tests/**", "testconfig.ini"], "add": ["tests/test_add.py"],
                      **check},
            "source": {"fix": project.commits["fix"]}}


FIX_ADD = "sed -i 's/return a - b/return a + b/' calc.py\n"
"""A bash line that makes the fix in the clone."""

# ---------------------------------------------------------------- running armbench


@dataclass
class Result:
    """How one `armbench` invocation ended."""

    code: int
    envelope: dict[str, Any] | None
    stdout: str
    stderr: str

    @property
    def data(self) -> dict[str, Any]:
        assert self.envelope is not None and "data" in self.envelope, self
        return self.envelope["data"]

    @property
    def error(self) -> dict[str, Any]:
        assert self.envelope is not None and "error" in self.envelope, self
        return self.envelope["error"]

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.stdout}\n--- stderr\n{self.stderr}"


def parse_envelope(stdout: str) -> dict[str, Any] | None:
    """The last JSON line of stdout, or None."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    return None


def run_armbench(args: list[str], cwd: Path, env: dict[str, str], *,
                 timeout: float = 240) -> Result:
    """`armbench <args>` with the venv's command, in cwd, with exactly env."""
    done = subprocess.run([str(ARMBENCH), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return Result(done.returncode, parse_envelope(done.stdout), done.stdout, done.stderr)


def interrupted(args: list[str], cwd: Path, env: dict[str, str], *, once: Path,
                sig: int = signal.SIGINT) -> Result:
    """`armbench <args>` sent `sig` as soon as the file `once` exists (a scripted tool makes it
    when the trial to stop at is running); how it then ended."""
    with subprocess.Popen([str(ARMBENCH), *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True) as proc:
        deadline = time.monotonic() + 120
        while not once.exists():
            assert proc.poll() is None and time.monotonic() < deadline, f"{once.name} never appeared"
            time.sleep(0.05)
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)
    return Result(proc.returncode, parse_envelope(stdout), stdout, stderr)


def base_env(home: Path, out: Path) -> dict[str, str]:
    """The caller's environment without armbench, git-location and withheld variables, plus ours."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ARMBENCH_", "GIT_", "E2E_")) and k not in WITHHELD}
    env.update(IDENTITY)
    env.update(ARMBENCH_HOME=str(home), E2E_OUT=str(out), E2E_ARMBENCH=str(ARMBENCH),
               ARMBENCH_SANDBOX_WRITE=str(out),  # where tools and checks leave evidence
               PATH=f"{ARMBENCH.parent}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONDONTWRITEBYTECODE="1")
    if os.environ.get("ARMBENCH_OVERLAYS"):  # `ARMBENCH_OVERLAYS=0 pytest tests/e2e/...`: every
        env["ARMBENCH_OVERLAYS"] = os.environ["ARMBENCH_OVERLAYS"]  # trial's clone without one
    return env


@dataclass
class World:
    """A project checkout, a team repo, a home and an out folder, tied by `armbench init`."""

    root: Path
    project: Project
    team: TeamRepo
    home: Path
    out: Path
    env: dict[str, str] = field(default_factory=dict)

    @property
    def checkout(self) -> Path:
        return self.project.root

    def armbench(self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                 timeout: float = 240) -> Result:
        return run_armbench(list(args), cwd or self.checkout, {**self.env, **(env or {})},
                            timeout=timeout)

    def init_and_pull(self) -> Result:
        """Publish the team, `armbench init --team <team.git>` and `armbench pull`; the pull's result."""
        self.team.publish()
        init = self.armbench("init", "--team", str(self.team.bare))
        assert init.code == 0, init
        pulled = self.armbench("pull")
        assert pulled.code == 0, pulled
        return pulled

    def configure(self, **workflows: Any) -> None:
        """Set keys of `workflows:` in the checkout's .armbench/config.yaml."""
        path = self.checkout / ".armbench" / "config.yaml"
        config = yaml.safe_load(path.read_text())
        config.setdefault("workflows", {}).update(workflows)
        path.write_text(dump(config))

    # ------------------------------------------------------------ what a run left

    @property
    def ledger(self) -> Path:
        return self.checkout / ".armbench" / "ledger.sqlite"

    def events(self, topic: str | None = None) -> list[dict[str, Any]]:
        """Every event in the ledger (all runs), in order, as dicts; optionally one tag."""
        if not self.ledger.exists():
            return []
        with sqlite3.connect(self.ledger) as db:
            rows = db.execute("SELECT topic, state FROM events ORDER BY rowid").fetchall()
        return [json.loads(state)["event"] for t, state in rows if topic in (None, t)]

    def kept(self, kind: str, step: str = "") -> dict[str, bytes]:
        """The evidence of `kind` (`diff`, `transcript`, `check`, ...) every run kept, by the step
        it is of (those whose id holds `step`), read from the evidence folder by its hash."""
        folder = self.checkout / ".armbench" / "evidence" / "sha256"
        return {e["step"]: (folder / e["sha256"][:2] / e["sha256"]).read_bytes()
                for e in self.events("EvidenceKept") if e["kind"] == kind and step in e["step"]}

    def record(self, run: str) -> dict[str, Any]:
        return json.loads(self.record_path(run).read_text())

    def record_path(self, run: str) -> Path:
        return self.checkout / ".armbench" / "runs" / run / "benchmark.json"

    def out_lines(self, name: str) -> list[str]:
        path = self.out / name
        return path.read_text().splitlines() if path.exists() else []


def make_world(root: Path) -> World:
    """A fresh world in root (made if missing)."""
    root.mkdir(parents=True, exist_ok=True)
    home, out, tmp = root / "home", root / "out", root / "tmp"
    for folder in (home, out, tmp):
        folder.mkdir()
    world = World(root=root, project=make_project(root / "calc"), team=make_team(root),
                  home=home, out=out)
    world.env = base_env(home, out) | {"E2E_CHECKOUT": str(world.checkout),
                                       "E2E_TEAM_WORK": str(world.team.work),
                                       "E2E_CHECK_LOG": str(out / "checks.log"),
                                       "TMPDIR": str(tmp)}  # armbench's work folders stay in here
    return world


@pytest.fixture
def world(tmp_path: Path) -> World:
    """A fresh world for one test."""
    return make_world(tmp_path / "w")


# ---------------------------------------------------------------- reading results


def table_rows(text: str, header_start: str) -> list[dict[str, str]]:
    """The rows of the Markdown table whose header line starts with `header_start`, as dicts."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    names = [c.strip() for c in lines[start].strip().strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append(dict(zip(names, cells, strict=True)))
    return rows


def arm_rows(stderr: str) -> dict[str, dict[str, str]]:
    """The per-arm results table printed on stderr, as {arm: {column: cell}}."""
    return {row["Arm"]: row for row in table_rows(stderr, "| Arm | Tool |")}


def baseline_rows(stderr: str) -> dict[str, str]:
    """The baselines table printed on stderr, as {task: baseline}."""
    if "| Task | Baseline |" not in stderr:
        return {}
    return {row["Task"]: row["Baseline"] for row in table_rows(stderr, "| Task | Baseline |")}


def serve(server: socket.socket) -> None:
    """Accept and close connections until the server is closed (a loopback peer for the tests)."""
    while True:
        try:
            server.accept()[0].close()
        except OSError:
            return
