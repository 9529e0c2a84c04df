"""The harness runs after `pip install -e .` alone, as perf/README.md says: no benchmark
module needs pytest (or any other test-only package) to import.

Each `perf.bench_*` module, and `perf.__main__` which runs them all, is imported in a
fresh interpreter in which `import pytest` fails (`sys.modules['pytest'] = None`), from the repo
root, as `python -m perf` runs them.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import perf

REPO = Path(__file__).resolve().parents[2]
IMPORT_ALL = """
import importlib, sys
sys.modules["pytest"] = None  # `import pytest` now raises ImportError, as where it is not installed
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError as e:
        print(f"{name}: {e!r}")
"""


def _bench_modules() -> list[str]:
    names = [f"perf.{m.name}" for m in pkgutil.iter_modules(perf.__path__)
             if m.name.startswith("bench_")]
    return sorted(names) + ["perf.__main__"]


def test_every_benchmark_module_imports_without_pytest() -> None:
    modules = _bench_modules()
    assert len(modules) >= 11, modules  # the ten benchmarks and the module that runs them all
    done = subprocess.run([sys.executable, "-c", IMPORT_ALL, *modules], cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", f"these benchmark modules need pytest to import:\n{done.stdout}"
