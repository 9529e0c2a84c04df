"""The layers show in the imports: pure packages import nothing that does I/O, and the engine
never imports the benchmark domain."""

from __future__ import annotations

import ast
import shutil
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


def files(package: str, root: Path = ROOT) -> list[Path]:
    return sorted((root / package).rglob("*.py"))


def io_imports(package: str, root: Path = ROOT) -> list[str]:
    """Each import of a pure package that does I/O."""
    bad = []
    for f in files(package, root):
        for name in imports(f):
            top = name.split(".")[0]
            if top in IO_MODULES or any(name == m or name.startswith(m + ".")
                                        for m in ARMBENCH_IO):
                bad.append(f"{f.relative_to(root)} imports {name}")
    return bad


def engine_domain_imports(root: Path = ROOT) -> list[str]:
    """Each import of the engine from the benchmark domain."""
    return [f"{f.relative_to(root)} imports {name}"
            for f in files("engine", root) for name in imports(f)
            if name.split(".")[0] in ENGINE_FORBIDDEN]


@pytest.mark.parametrize("package", sorted(PURE))
def test_pure_packages_import_nothing_that_does_io(package: str) -> None:
    assert files(package)
    assert io_imports(package) == []


def test_the_engine_never_imports_the_benchmark_domain() -> None:
    assert files("engine")
    assert engine_domain_imports() == []


def test_the_layer_check_can_fail(tmp_path: Path) -> None:
    """A copy of the tree with a bad import planted in each layer: the check names each one."""
    for package in [*PURE, "engine"]:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    assert [p for p in PURE if io_imports(p, tmp_path)] == []
    with (tmp_path / "aggregates" / "workflow.py").open("a") as f:
        f.write("\n\ndef _planted() -> None:\n    import subprocess  # noqa\n")
    (tmp_path / "projections" / "planted.py").write_text("from ledger.store import EventStore\n")
    (tmp_path / "suites" / "planted.py").write_text("import os.path\n")
    with (tmp_path / "engine" / "service.py").open("a") as f:
        f.write("\nfrom benchmark.host import BenchmarkHost  # noqa\n")
    assert {p: io_imports(p, tmp_path) for p in sorted(PURE)} == {
        "aggregates": ["aggregates/workflow.py imports subprocess"],
        "projections": ["projections/planted.py imports ledger.store"],
        "suites": ["suites/planted.py imports os.path"],
    }
    assert engine_domain_imports(tmp_path) == ["engine/service.py imports benchmark.host"]
