"""What armbench's sandbox can run: asked once, in the sandbox a check runs in."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

from armbench.benchmark.trials.checks import check_env
from armbench.benchmark.trials.workspace import remove_tree
from armbench.edge.proc import run_step
from armbench.edge.sandbox import Room, Sandbox

__all__ = ["sandbox_imports"]


def sandbox_imports(sandbox: Sandbox, module: str) -> bool:
    """Whether `python3 -c 'import <module>'` succeeds in a check's sandbox (an empty home and
    /tmp, no network, the check's PATH and variables)."""
    root = Path(tempfile.mkdtemp(prefix="armbench-probe-"))
    try:
        clone = root / "clones" / "probe"
        clone.mkdir(parents=True)
        launch = sandbox.launch(Room.of(clone).make(), fresh=True)
        proc = run_step(f"python3 -c {shlex.quote('import ' + module)}", cwd=launch.cwd,
                        env=check_env(launch), timeout_s=60, cancel=None, sandbox=launch.argv,
                        enter=launch.enter)
        return proc.cause == "ok"
    finally:
        remove_tree(root)
