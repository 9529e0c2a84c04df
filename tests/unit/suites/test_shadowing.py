"""Which root names would be imported instead of the standard library's or a runner's module."""

from __future__ import annotations

import pytest

from armbench.suites.shadowing import SHADOWABLE, import_name


@pytest.mark.parametrize(("name", "package", "link", "module"), [
    ("difflib.py", False, False, "difflib"),
    ("unittest.py", False, False, "unittest"),
    ("json.pyc", False, False, "json"),
    ("_socket.cpython-311-x86_64-linux-gnu.so", False, False, "_socket"),
    ("pytest.py", False, False, "pytest"),
    ("_pytest", True, False, "_pytest"),
    ("sitecustomize.py", False, False, "sitecustomize"),
    ("email", True, False, "email"),
    ("difflib", False, True, "difflib"),  # a link: where it points is the sandbox's
    ("difflib.py", False, True, "difflib"),
    ("test", False, False, None),  # a folder of JavaScript tests is no package
    ("json", False, False, None),
    ("calc.py", False, False, None),
    ("README.md", False, False, None),
    ("json.txt", False, False, None),
    ("difflib.py.orig", False, False, None),
    ("difflib.old.py", False, False, None),  # Python imports no such file as difflib
    ("difflib.\x1b[2J.py", False, False, None),
    ("_json.abi3.so", False, False, "_json"),
    ("mypackage", True, False, None),
])
def test_a_root_entry_shadows_by_its_import_name(name: str, package: bool, link: bool,
                                                 module: str | None) -> None:
    assert import_name(name, package=package, link=link) == module


def test_the_standard_library_and_the_runners_are_both_shadowable() -> None:
    assert {"difflib", "unittest", "os", "json", "pytest", "_pytest", "pluggy"} <= SHADOWABLE
    assert "calc" not in SHADOWABLE
