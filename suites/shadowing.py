"""Which top-level names of a clone would stand in front of Python's standard library, or of a
test runner's own modules, in a check. Pure: it names, it reads nothing.

`python -m unittest` and `python -m pytest` put the folder they start in first on `sys.path`, so
a `difflib.py` at a clone's root is imported instead of the standard library's `difflib` by
whatever imports it, the runner itself included: one that calls `os._exit(0)` passes any check.
A change that adds such a module is refused as the check's input (`edge.shadowing`); one the
starting commit already has is the project's own.
"""

from __future__ import annotations

import re
import sys

__all__ = ["RUNNER_MODULES", "SHADOWABLE", "import_name"]

RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy", "iniconfig", "py", "sitecustomize",
                            "usercustomize"})
"""The runners' own modules and the ones Python imports by name at start, beside the standard
library's."""
SHADOWABLE = frozenset(sys.stdlib_module_names) | RUNNER_MODULES
"""Every top-level module name a clone's root must not newly provide."""
_MODULE_FILE = re.compile(r"(?:py|pyc|pyw|pyd|so|abi3\.so|cpython-[0-9A-Za-z_-]+\.so)")
"""What follows a module's name in a file Python imports as it: `difflib.py`, `_json.abi3.so`,
`_socket.cpython-311-x86_64-linux-gnu.so`."""


def import_name(name: str, *, package: bool, link: bool) -> str | None:
    """The module a root entry named `name` gives `import` when it is shadowable: a module file
    (`difflib.py`, `difflib.cpython-311-x86_64-linux-gnu.so`), a regular package (a folder with
    an `__init__`, `package`), or a link of either name (where it points is the sandbox's to
    decide, so the name alone counts); None for anything else (a `test/` folder of JavaScript
    tests is no package)."""
    stem, dot, rest = name.partition(".")
    if dot and _MODULE_FILE.fullmatch(rest) and stem in SHADOWABLE:
        return stem
    if not dot and (package or link) and name in SHADOWABLE:
        return name
    return None
