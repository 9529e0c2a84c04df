"""A tiny project and team for the ledger's tests, with a deterministic scripted tool and hooks.

The tool (`scripted`) acts by its model: `fixer` makes the fix, `lazy` changes nothing, `broken`
exits 3. Every tool, setup and check call appends a line to `$LEDGERTEST_HOOKS/calls`; a
`kill-at` file there (`tool 3`, `setup 5`, `check 3`) makes that call write `fired` (its
session id) and sleep (120 s, or until a `go` file appears there), so a test can kill
armbench at a known point. `LEDGERTEST_DRIVER` is
added to each line; `LEDGERTEST_TOOL_SLEEP` makes every tool call take that long.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["AGENT", "ARMBENCH", "HOOK", "git", "make_template"]

ARMBENCH = str(Path(sys.executable).with_name("armbench"))

HOOK = '''\
import os, sys, time
from pathlib import Path
hooks = Path(os.environ["LEDGERTEST_HOOKS"])
kind, label = sys.argv[1], " ".join(sys.argv[2:] + [os.environ.get("LEDGERTEST_DRIVER", "")]).strip()
with (hooks / "calls").open("a") as f:
    f.write(f"{kind} {label}\\n")
n = sum(1 for line in (hooks / "calls").read_text().splitlines() if line.startswith(kind + " "))
at = (hooks / "kill-at").read_text().split() if (hooks / "kill-at").exists() else []
if at == [kind, str(n)] and not (hooks / "fired").exists():
    (hooks / "fired").write_text(str(os.getsid(0)))
    until = time.monotonic() + 120
    while not (hooks / "go").exists() and time.monotonic() < until:
        time.sleep(0.05)
'''

AGENT = '''\
import os, subprocess, sys, time
from pathlib import Path
prompt = sys.stdin.read()
task = prompt.split()[0]
model = os.environ.get("ARMBENCH_MODEL", "")
hooks = os.environ.get("LEDGERTEST_HOOKS")
if hooks:
    subprocess.run([sys.executable, os.path.join(hooks, "hook.py"), "tool", model, task], check=True)
time.sleep(float(os.environ.get("LEDGERTEST_TOOL_SLEEP", "0")))
if model == "broken":
    sys.exit(3)
if model == "fixer":
    calc = Path("calc.py")
    calc.write_text(calc.read_text().replace("return x + x + 1", "return x + x")
                    .replace("return x * 3 + 1", "return x * 3"))
    Path("touched").write_text("yes")
Path(os.environ["ARMBENCH_USAGE_FILE"]).write_text('{"tokens": {"input": 100, "output": 20}}')
'''

HOOKED = 'if [ -n "$LEDGERTEST_HOOKS" ]; then python3 "$LEDGERTEST_HOOKS/hook.py" {what}; fi'
CHECKS = {
    "double": "python3 -m unittest -q tests.test_double",
    "triple": "python3 -m unittest -q tests.test_triple",
    "done-already": "true",
    "no-runner": "no-such-check-command-armbench",
    "crashy": 'if [ -e touched ]; then kill -KILL $$; fi; exit 1',
}


def git(*args: str, cwd: Path) -> str:
    """Run git, failing loudly."""
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _project(root: Path) -> str:
    root.mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests/__init__.py").write_text("")
    (root / "calc.py").write_text("def double(x):\n    return x + x + 1\n\n\n"
                                  "def triple(x):\n    return x * 3 + 1\n")
    (root / "tests/test_double.py").write_text(
        "import unittest\n\nfrom calc import double\n\n\nclass T(unittest.TestCase):\n"
        "    def test(self):\n        self.assertEqual(double(2), 4)\n")
    (root / "tests/test_triple.py").write_text(
        "import unittest\n\nfrom calc import triple\n\n\nclass T(unittest.TestCase):\n"
        "    def test(self):\n        self.assertEqual(triple(2), 6)\n")
    git("init", "-q", "-b", "main", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "start", cwd=root)
    return git("rev-parse", "HEAD", cwd=root)


def _suite(name: str, tasks: list[str], arms: list[tuple[str, str]], parallel: int) -> str:
    arm_lines = "".join(f"  - {{ name: {n}, {k} }}\n" for n, k in arms)
    return (f"schemaVersion: v1alpha1\nname: {name}\nrepo: https://example.invalid/calc\n"
            f"defaults: {{ tool: scripted, model: fixer }}\narms:\n{arm_lines}"
            f"repetitions: 1\ntimeout: 10m\nparallel: {parallel}\n"
            f"setup: '{HOOKED.format(what='setup')}'\n")


def _team(root: Path, commit: str) -> None:
    (root / "tools/scripted").mkdir(parents=True)
    (root / "armbench.yaml").write_text("schemaVersion: v1alpha1\nname: ledger-tests\n")
    (root / "tools/scripted/tool.yaml").write_text(
        "schemaVersion: v1alpha1\nname: scripted\nrun: python3 \"$ARMBENCH_TOOL_DIR/agent.py\"\n")
    (root / "tools/scripted/agent.py").write_text(AGENT)
    suites = {
        "audit": (["double", "done-already", "no-runner", "crashy"],
                  [("good", "model: fixer"), ("lazy", "model: lazy"), ("broken", "model: broken"),
                   ("ghost", "tool: ghost")], 2),
        "kill": (["double", "triple"], [("good", "model: fixer"), ("lazy", "model: lazy")], 1),
    }
    for name, (tasks, arms, parallel) in suites.items():
        folder = root / "benchmarks" / name
        (folder / "tasks").mkdir(parents=True)
        (folder / "suite.yaml").write_text(_suite(name, tasks, arms, parallel))
        for task in tasks:
            check = f"{HOOKED.format(what='check ' + task)}; {CHECKS[task]}"
            (folder / "tasks" / f"{task}.yaml").write_text(
                f"schemaVersion: v1alpha1\ntitle: {task}\nprompt: '{task} please'\n"
                f"startingCommit: {commit}\ncheck:\n  run: '{check}'\n  protect: ['tests/**']\n")
    git("init", "-q", "-b", "main", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "team", cwd=root)


def make_template(where: Path) -> Path:
    """Build the project, the team, and a checkout tied to it with `init` and `pull` done."""
    commit = _project(where / "calc")
    _team(where / "team", commit)
    env = {**os.environ, "ARMBENCH_HOME": str(where / "home")}
    for verb in (["init", "--team", "../team"], ["pull"]):
        done = subprocess.run([ARMBENCH, *verb], cwd=where / "calc", env=env,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
    return where
