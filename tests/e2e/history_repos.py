"""Projects with a history, for `armbench task new --from-commit` and `task harvest`: real git
repos made commit by commit with the e2e clean-config git, and the environment the installed
`armbench` runs in (a private home, `TMPDIR` in the test's folder)."""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import dataclass
from pathlib import Path

from e2e.conftest import Result, base_env, git, run_armbench, write_files

__all__ = ["NODE_MODULES", "Repo", "history_env", "pytest_folder"]

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / ".cache" / "node-test" / "node_modules"
"""vitest from the npm registry, installed by scripts/install-node-test.sh (scripts/test.sh runs it)."""


@dataclass
class Repo:
    """A project checkout whose commits a test makes one by one."""

    root: Path
    env: dict[str, str]

    @classmethod
    def make(cls, root: Path, env: dict[str, str]) -> Repo:
        git(root.parent, "init", "-q", "-b", "main", str(root))
        return cls(root=root, env=env)

    def commit(self, message: str, files: dict[str, str], *, delete: tuple[str, ...] = ()) -> str:
        """Write `files`, remove `delete`, commit everything with `message`; the new SHA."""
        write_files(self.root, files)
        for path in delete:
            (self.root / path).unlink()
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.root, "rev-parse", "HEAD")

    def armbench(self, *args: str, env: dict[str, str] | None = None) -> Result:
        return run_armbench(list(args), self.root, {**self.env, **(env or {})}, timeout=600)

    def status(self) -> str:
        return git(self.root, "status", "--porcelain", "--untracked-files=all")


def history_env(root: Path) -> dict[str, str]:
    """The installed armbench's environment: a private home, out and TMPDIR under `root`."""
    home, out, tmp = root / "home", root / "out", root / "tmp"
    for folder in (home, out, tmp):
        folder.mkdir(parents=True, exist_ok=True)
    return base_env(home, out) | {"TMPDIR": str(tmp)}


def pytest_folder(root: Path) -> Path:
    """A folder holding this interpreter's pytest and what it imports, for a sandbox's python3
    (shown read-only with ARMBENCH_SANDBOX_READ, found through PYTHONPATH)."""
    target = root / "pylib"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "py"):
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        if origin.name == "__init__.py":
            shutil.copytree(origin.parent, target / name, dirs_exist_ok=True)
        else:
            shutil.copy2(origin, target / origin.name)
    return target
