"""The layers show in the imports: pure packages import nothing that does I/O, and the engine
never imports the benchmark domain."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
IO_MODULES = {"os", "subprocess", "sqlite3", "pygit2", "shutil", "tempfile", "socket", "io",
              "pathlib", "threading", "time", "random", "secrets", "urllib", "http",
              "eventsourcing", "sqlite_utils", "typer"}
PURE = {"aggregates": set(), "projections": set(), "suites": set()}
ARMBENCH_IO = {"edge", "cli", "benchmark", "engine", "ledger.store"}
ENGINE_FORBIDDEN = {"suites", "projections", "benchmark", "cli", "edge"}


def imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(PURE))
def test_pure_packages_import_nothing_that_does_io(package: str) -> None:
    bad = []
    for f in files(package):
        for name in imports(f):
            top = name.split(".")[0]
            if top in IO_MODULES or any(name == m or name.startswith(m + ".")
                                        for m in ARMBENCH_IO):
                bad.append(f"{f.relative_to(ROOT)} imports {name}")
    assert bad == []


def test_the_engine_never_imports_the_benchmark_domain() -> None:
    bad = [f"{f.relative_to(ROOT)} imports {name}"
           for f in files("engine") for name in imports(f)
           if name.split(".")[0] in ENGINE_FORBIDDEN]
    assert bad == []


def test_the_layer_check_can_fail(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("import os\nfrom edge.proc import run_step\n")
    assert {"os", "edge.proc"} <= imports(sample)
