"""A check's Python reads no bytecode from the trial's tree (a planted unchecked-hash `.pyc` is
never run), yet loads the system's standard library from its own bytecode, through the seed
(`edge.pycache`) the check's sandbox shows read-only under its pycache prefix."""

from __future__ import annotations

import importlib.util
import py_compile
import subprocess
from pathlib import Path

import pytest

from armbench.edge import pycache
from armbench.edge.sandbox import Room, Sandbox

PYTHON = "/usr/bin/python3"
TAG = subprocess.run([PYTHON, "-c", "import sys; print(sys.implementation.cache_tag)"],
                     capture_output=True, text=True, check=True).stdout.strip()


def _check(room: Room, *argv: str, seeded: bool = True) -> subprocess.CompletedProcess[str]:
    launch = Sandbox(pycache=pycache.seed() if seeded else None).launch(room, fresh=True)
    return subprocess.run([*launch.argv, *argv], cwd=launch.cwd, env=launch.env, capture_output=True,
                          text=True, timeout=60)


def _code_objects(verbose: str, module: str) -> list[str]:
    """`python -v`'s lines saying where a module's code came from."""
    return [line for line in verbose.splitlines() if "code object from" in line and module in line]


@pytest.fixture
def room(tmp_path: Path) -> Room:
    made = Room(clone=tmp_path / "clone", home=tmp_path / "home", tmp=tmp_path / "tmp").make()
    made.clone.mkdir()
    return made


def test_a_planted_unchecked_pyc_in_the_tree_is_never_run(room: Room, tmp_path: Path) -> None:
    (room.clone / "mod.py").write_text('print("source")\n')
    fixed = tmp_path / "fixed.py"
    fixed.write_text('print("planted")\n')
    cached = room.clone / "__pycache__" / f"mod.{TAG}.pyc"
    cached.parent.mkdir()
    py_compile.compile(str(fixed), cfile=str(cached),
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    plain = subprocess.run([PYTHON, "-c", "import mod"], cwd=room.clone, capture_output=True, text=True)
    assert plain.stdout == "planted\n"  # what the attack relied on, outside armbench's check
    assert _check(room, PYTHON, "-c", "import mod").stdout == "source\n"


def test_the_standard_library_is_loaded_from_the_systems_own_bytecode(room: Room) -> None:
    seeded = pycache.seed()
    assert seeded is not None
    spec = importlib.util.find_spec("difflib")
    assert spec is not None and spec.origin is not None
    ran = _check(room, PYTHON, "-v", "-c", "import difflib")
    assert ran.returncode == 0, ran.stderr
    loaded = _code_objects(ran.stderr, "difflib")
    assert loaded and "/tmp/.pycache/usr/lib/python3" in loaded[0], loaded
    unseeded = _check(room, PYTHON, "-v", "-c", "import difflib", seeded=False)
    compiled = _code_objects(unseeded.stderr, "difflib")
    assert compiled and compiled[0].endswith("difflib.py"), compiled  # no seed: compiled from source


def test_the_seed_links_only_into_the_systems_python_folders() -> None:
    seeded = pycache.seed()
    assert seeded is not None
    links = [p for p in seeded.rglob("*.pyc")]
    assert links
    for link in links[:200]:
        target = Path(link.readlink())
        assert target.parent.name == "__pycache__"
        assert str(target).startswith(("/usr/lib/python3", "/usr/local/lib/python3")), target
        assert target.parent.parent == Path("/") / link.parent.relative_to(seeded.parent)


def test_try_harvest_and_task_new_check_history_with_the_trees_own_bytecode(tmp_path: Path) -> None:
    """No agent wrote the commits `try` checks: their sandbox sets no prefix, so neither the
    standard library nor setup's venv is compiled again (a harvest's candidate cost 441 ms with
    the prefix against 114 ms of bare check runs), and nothing is written to ~/.armbench."""
    from armbench.cli.compose import try_sandbox

    room = Room(clone=tmp_path / "clone", home=tmp_path / "home", tmp=tmp_path / "tmp").make()
    room.clone.mkdir()
    tried = try_sandbox(tmp_path)
    assert tried.agent_tree is False and tried.pycache is None
    assert "PYTHONPYCACHEPREFIX" not in tried.launch(room, fresh=True).env
    assert Sandbox().launch(room, fresh=True).env["PYTHONPYCACHEPREFIX"] == "/tmp/.pycache"
