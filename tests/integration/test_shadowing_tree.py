"""edge.shadowing on a real, hostile tree: the root entries a change adds that would shadow a
standard-library or runner module, looked at without following a link."""

from __future__ import annotations

import os
from pathlib import Path

from armbench.edge.shadowing import added_shadowing


def test_only_what_the_starting_commit_lacks_and_python_would_import_is_named(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "calc.py").write_text("")
    (clone / "types.py").write_text("")  # the project's own, at the starting commit
    (clone / "difflib.py").write_text("import os\nos._exit(0)\n")
    (clone / "email").mkdir()
    (clone / "email" / "__init__.py").write_text("")
    (clone / "test").mkdir()  # a folder of tests, no package
    (clone / "test" / "test_calc.js").write_text("")
    (clone / "json").mkdir()
    (clone / "json" / "__init__.cpython-311.pyc").write_bytes(b"")  # a package by its bytecode
    outside = tmp_path / "outside"
    (outside / "pkg").mkdir(parents=True)
    (outside / "pkg" / "__init__.py").write_text("")
    os.symlink(outside / "pkg", clone / "pluggy")  # a link: named, never followed
    os.mkfifo(clone / "queue.py")
    found = added_shadowing(clone, {"calc.py", "types.py"})
    assert found == ["difflib.py", "email", "json", "pluggy", "queue.py"]
    assert sorted(os.listdir(outside / "pkg")) == ["__init__.py"]


def test_a_clone_whose_root_is_a_link_is_refused_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "difflib.py").write_text("")
    (tmp_path / "clone").symlink_to(real)
    try:
        added_shadowing(tmp_path / "clone", set())
    except OSError:
        return
    raise AssertionError("a linked root was followed")


def test_a_clean_clone_names_nothing(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    assert added_shadowing(tmp_path, {"calc.py", "tests"}) == []
