"""The shipped example is a model for a team's first tasks: `armbench try` on each of its tasks
prints no warning (protect covers what `python -m unittest` would run in place of the module),
its hidden-test task and its broken-on-purpose task still do what the README says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TASKS = sorted(p.stem for p in (ROOT / "examples/team/benchmarks/example/tasks").glob("*.yaml"))


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("example")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "GIT_"))}
    env.update(ARMBENCH_HOME=str(root / "home"), TMPDIR=str(root / "tmp"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    (root / "tmp").mkdir()
    made = subprocess.run(["bash", str(ROOT / "examples" / "setup.sh"), str(root / "ex")], env=env,
                          check=True, text=True, capture_output=True)
    return Path(made.stdout.strip()), env


@pytest.mark.parametrize("task", TASKS)
def test_try_on_each_example_task_prints_no_warning(checkout: tuple[Path, dict[str, str]],
                                                   task: str) -> None:
    where, env = checkout
    tried = subprocess.run([str(Path(sys.executable).with_name("armbench")), "try",
                            f"../team/benchmarks/example/tasks/{task}.yaml"], cwd=where, env=env,
                           text=True, capture_output=True, timeout=300)
    assert "warning" not in tried.stderr.lower(), tried.stderr
    envelope = json.loads(tried.stdout)
    if task == "add-works":  # broken on purpose: its check passes at its starting commit
        assert tried.returncode == 1, tried
        assert envelope["error"]["code"] == "task_try_failed", envelope
        assert "the check passes without changes" in envelope["error"]["message"]
    else:
        assert tried.returncode == 0, tried
        assert "the check fails at" in envelope["data"]["try"]["message"], envelope
