"""The layers show in the imports: pure packages import nothing that does I/O, the engine never
imports the benchmark domain, edge/ never imports what sits on it, benchmark/'s rooms import one
way, and benchmark/ reaches git and processes only through edge/. Every module names armbench's
packages as `armbench.<package>`, never as a top-level package of their own."""

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
EDGE_FORBIDDEN = {"engine", "benchmark", "cli"}
ROOMS: dict[str, set[str]] = {"team": set(), "records": set(), "trials": set(),
                              "agents": {"trials"}, "tryout": {"trials"},
                              "dashboard": {"records"},
                              "harvest": {"trials", "tryout", "team", "agents"}}
"""Each room of benchmark/ and the rooms it may import; no room imports host.py or run.py."""
COMPOSERS = {"host", "run", "runtools", "teamdelivery", "calibrate", "rescore", "drivers"}
MACHINE = {"pygit2", "subprocess", "signal", "socket"}
"""What benchmark/ reaches only through edge/: git and processes (files, temporary folders and
threads for its work folder it uses itself)."""


PACKAGES = {"ledger", "aggregates", "projections", "suites", "engine", "edge", "benchmark", "cli"}
"""armbench's packages, each installed as `armbench.<name>` (pyproject.toml's `packages`)."""


def imported_names(path: Path) -> set[str]:
    """Every module a file imports, as written."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def imports(path: Path) -> set[str]:
    """Every module a file imports, armbench's named by their package (`ledger.store` for
    `armbench.ledger.store`), so the rules below read as the map does."""
    return {name.removeprefix("armbench.") for name in imported_names(path)}


def bare_imports(root: Path = ROOT) -> list[str]:
    """Each import of one of armbench's packages as a top-level package (`from ledger.store
    import ...`): with the repo's root on a path it would load a second copy of the module."""
    bad = []
    for f in sorted(root.rglob("*.py")):
        if {".venv", ".git", "build", "node_modules", ".cache"} & set(f.relative_to(root).parts):
            continue
        bad += [f"{f.relative_to(root)} imports {name}" for name in sorted(imported_names(f))
                if name.split(".")[0] in PACKAGES]
    return bad


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


def full_imports(path: Path) -> set[str]:
    """Every module a file imports, with `from a import b` also as `a.b` (b may be a module)."""
    found = imports(path)
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {f"{node.module}.{a.name}".removeprefix("armbench.") for a in node.names}
    return found


def edge_upward_imports(root: Path = ROOT) -> list[str]:
    """Each import by edge/ of a package that sits on it."""
    return [f"{f.relative_to(root)} imports {name}"
            for f in files("edge", root) for name in imports(f)
            if name.split(".")[0] in EDGE_FORBIDDEN]


def room_imports(root: Path = ROOT) -> list[str]:
    """Each import by a room of benchmark/ of a room (or host.py, run.py) it may not import."""
    bad = []
    for room, allowed in ROOMS.items():
        for f in files(f"benchmark/{room}", root):
            for name in sorted(full_imports(f)):
                parts = name.split(".")
                if parts[0] != "benchmark" or len(parts) < 2:
                    continue
                target = parts[1]
                if target in COMPOSERS or (target in ROOMS and target != room
                                           and target not in allowed):
                    bad.append(f"{f.relative_to(root)} imports {name}")
    return bad


def machine_imports(root: Path = ROOT) -> list[str]:
    """Each import by benchmark/ of git or processes, which it reaches through edge/."""
    return [f"{f.relative_to(root)} imports {name}"
            for f in files("benchmark", root) for name in imports(f)
            if name.split(".")[0] in MACHINE]


@pytest.mark.parametrize("package", sorted(PURE))
def test_pure_packages_import_nothing_that_does_io(package: str) -> None:
    assert files(package)
    assert io_imports(package) == []


def test_the_engine_never_imports_the_benchmark_domain() -> None:
    assert files("engine")
    assert engine_domain_imports() == []


def test_edge_never_imports_what_sits_on_it() -> None:
    assert files("edge")
    assert edge_upward_imports() == []


def test_every_module_of_benchmark_is_in_a_room_or_composes_them() -> None:
    top = {f.stem for f in (ROOT / "benchmark").glob("*.py")}
    rooms = {d.name for d in (ROOT / "benchmark").iterdir() if (d / "__init__.py").is_file()}
    assert (top, rooms) == ({"__init__", *COMPOSERS}, set(ROOMS))


def test_the_rooms_of_benchmark_import_one_way() -> None:
    assert all(files(f"benchmark/{room}") for room in ROOMS)
    assert room_imports() == []


def test_benchmark_reaches_git_and_processes_only_through_edge() -> None:
    assert machine_imports() == []


def test_every_module_imports_armbench_as_one_package() -> None:
    assert bare_imports() == []


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_the_layer_check_can_fail(tmp_path: Path) -> None:
    """A copy of the tree with a bad import planted in each layer: the check names each one."""
    for package in [*PURE, "engine", "edge", "benchmark"]:
        shutil.copytree(ROOT / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    assert [p for p in PURE if io_imports(p, tmp_path)] == []
    with (tmp_path / "aggregates" / "workflow.py").open("a") as f:
        f.write("\n\ndef _planted() -> None:\n    import subprocess  # noqa\n")
    (tmp_path / "projections" / "planted.py").write_text("from armbench.ledger.store import EventStore\n")
    (tmp_path / "suites" / "planted.py").write_text("import os.path\n")
    with (tmp_path / "engine" / "service.py").open("a") as f:
        f.write("\nfrom armbench.benchmark.host import BenchmarkHost  # noqa\n")
    assert {p: io_imports(p, tmp_path) for p in sorted(PURE)} == {
        "aggregates": ["aggregates/workflow.py imports subprocess"],
        "projections": ["projections/planted.py imports ledger.store"],
        "suites": ["suites/planted.py imports os.path"],
    }
    assert engine_domain_imports(tmp_path) == ["engine/service.py imports benchmark.host"]
    assert (edge_upward_imports(tmp_path), room_imports(tmp_path), machine_imports(tmp_path)) == ([], [], [])
    (tmp_path / "edge" / "planted.py").write_text("from armbench.engine.protocol import Report\n")
    (tmp_path / "benchmark" / "records" / "planted.py").write_text(
        "from armbench.benchmark.trials import workspace\nfrom armbench.benchmark.run import run_suite\n")
    (tmp_path / "benchmark" / "trials" / "planted.py").write_text("import armbench.benchmark.agents.base\n")
    (tmp_path / "benchmark" / "tryout" / "planted.py").write_text(  # allowed: not named
        "from armbench.benchmark.trials.checks import run_setup\n")
    (tmp_path / "benchmark" / "team" / "planted.py").write_text("import pygit2\nimport subprocess\n")
    assert edge_upward_imports(tmp_path) == ["edge/planted.py imports engine.protocol"]
    assert room_imports(tmp_path) == [
        "benchmark/records/planted.py imports benchmark.run",
        "benchmark/records/planted.py imports benchmark.run.run_suite",
        "benchmark/records/planted.py imports benchmark.trials",
        "benchmark/records/planted.py imports benchmark.trials.workspace",
        "benchmark/trials/planted.py imports benchmark.agents.base",
    ]
    assert sorted(machine_imports(tmp_path)) == ["benchmark/team/planted.py imports pygit2",
                                                 "benchmark/team/planted.py imports subprocess"]
    assert bare_imports(tmp_path) == []
    (tmp_path / "edge" / "bare.py").write_text("from ledger.errors import Refusal\nimport cli.main\n")
    assert bare_imports(tmp_path) == ["edge/bare.py imports cli.main", "edge/bare.py imports ledger.errors"]
