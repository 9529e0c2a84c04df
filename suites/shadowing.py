"""Which top-level names of a clone would stand in front of Python's standard library, or of a
test runner's own modules, in a check. Pure: it names, it reads nothing.

`python -m unittest` and `python -m pytest` put the folder they start in first on `sys.path`, so
a `difflib.py` at a clone's root is imported instead of the standard library's `difflib` by
whatever imports it, the runner itself included: one that calls `os._exit(0)` passes any check.
A change that adds such a module is refused as the check's input (`edge.shadowing`); one the
starting commit already has is the project's own.
"""

from __future__ import annotations

import sys

__all__ = ["RUNNER_MODULES", "SHADOWABLE", "import_name"]

RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "iniconfig", "py", "sitecustomize",
                            "usercustomize"})
"""The runners' own modules and the ones Python imports by name at start, beside the standard
library's."""
SHADOWABLE = frozenset(sys.stdlib_module_names) | RUNNER_MODULES
"""Every top-level module name a clone's root must not newly provide."""
_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".pyd")


def import_name(name: str, *, package: bool, link: bool) -> str | None:
    """The module a root entry named `name` gives `import` when it is shadowable: a module file
    (`difflib.py`, `difflib.cpython-311-x86_64-linux-gnu.so`), a regular package (a folder with
    an `__init__`, `package`), or a link of either name (where it points is the sandbox's to
    decide, so the name alone counts); None for anything else (a `test/` folder of JavaScript
    tests is no package)."""
    stem, dot, _ = name.partition(".")
    if dot and any(name.endswith(s) for s in _SUFFIXES) and stem in SHADOWABLE:
        return stem
    if not dot and (package or link) and name in SHADOWABLE:
        return name
    return None
