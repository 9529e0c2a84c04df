"""One composition root: `cli/compose.py` hands the host and the engine everything they use in
their constructors (the run's tools, the progress sink, the sandbox), and nothing assigns into a
host or an engine afterwards. An assignment after composition is how a process that never ran
the assigning code (an external driver's `workflow next --prepare`) came to judge with no
tools."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cli", "benchmark", "engine")


def _names(node: ast.expr) -> list[str]:
    """The attribute names along an assignment target: `a.host.tools[run]` -> [tools, host]."""
    names = []
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
        node = node.value
    return names


def assignments_into_host_or_engine(root: Path = ROOT) -> list[str]:
    """Each `<...>.host.<x> = ...` or `<...>.engine.<x> = ...` (or into an item of one) outside
    the host's and the engine's own `self`."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, ast.AugAssign | ast.AnnAssign) else []
                for target in targets:
                    if {"host", "engine"} & set(_names(target)[1:]):
                        found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_nothing_assigns_into_a_host_or_an_engine_after_composition() -> None:
    assert assignments_into_host_or_engine() == []


def test_the_check_finds_such_an_assignment(tmp_path: Path) -> None:
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "benchmark" / "run.py").write_text("engine.host.tools[run] = tools\n")
    (tmp_path / "cli" / "main.py").write_text("a.host.progress = live.say\nself.host = host\n")
    assert assignments_into_host_or_engine(tmp_path) == ["cli/main.py:1", "benchmark/run.py:1"]


def test_the_host_takes_the_runs_tools_in_its_constructor() -> None:
    import inspect

    from armbench.benchmark.host import BenchmarkHost

    assert "tools" in inspect.signature(BenchmarkHost).parameters
