"""armbench installs as one package, `armbench`: its wheel puts nothing else in site-packages, a
neighbour distribution with a package named like one of armbench's folders (`cli/`) neither
breaks it nor is broken by it, and the sandbox hides armbench's one folder, not the neighbour's.

The wheel is built from the checkout's tracked files with the build backend pyproject.toml
names (installed with the test tools, so no network is needed), into a venv of its own whose
dependencies come from the test venv's site-packages through a `.pth` line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("pyproject.toml", "README.md", "py.typed", "ledger", "aggregates", "projections",
                 "suites", "engine", "edge", "benchmark", "cli")


def _wheel(source: Path, out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(source)], check=True, capture_output=True)
    return next(out.glob("*.whl"))


def _armbench_source(tmp: Path) -> Path:
    """The checkout's tracked files of the package, copied (a build writes into its source)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", *PACKAGE_FILES], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    source = tmp / "armbench-src"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    return source


def _neighbour(tmp: Path) -> Path:
    """A one-file distribution whose package is `cli/`, as any other project may have."""
    source = tmp / "neighbour-src"
    (source / "cli").mkdir(parents=True)
    (source / "cli" / "__init__.py").write_text("")
    (source / "cli" / "main.py").write_text('WHO = "the neighbour"\n')
    (source / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=77"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "neighbour"
        version = "1.0"

        [tool.setuptools]
        packages = ["cli"]
        """))
    return source


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("install")
    return _wheel(_armbench_source(tmp), tmp / "dist"), _wheel(_neighbour(tmp), tmp / "dist-neighbour")


def test_the_wheel_holds_one_top_level_package(built: tuple[Path, Path]) -> None:
    wheel, _ = built
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        info = next(n for n in names if n.endswith(".dist-info/top_level.txt"))
        top_level = z.read(info).decode().split()
    assert top_level == ["armbench"]
    assert {n.split("/")[0] for n in names} == {"armbench", info.split("/")[0]}
    assert {"armbench/py.typed", "armbench/cli/main.py", "armbench/ledger/events.py",
            "armbench/benchmark/dashboard/static/index.html"} <= set(names)
    assert not [n for n in names if n.startswith(("armbench/tests/", "armbench/perf/", "armbench/docs/"))]


def _venv(tmp: Path) -> tuple[Path, Path]:
    """A venv without pip, whose dependencies are the test venv's (a `.pth` line, after its own
    site-packages); returns its python and its site-packages."""
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "zz-test-venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    return python, site


def _pip(python: Path, *args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "-q", *args], check=True,
                   capture_output=True)


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """argv run from `cwd` (never the checkout, whose folders `python -c` would import first)."""
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=120, env=env)


HIDDEN_PROBE = """
import json, sys
from pathlib import Path
from armbench.edge.sandbox import Room, for_checkout, installation_paths
work = Path(sys.argv[1])
room = Room(clone=work / "clone", home=work / "home", tmp=work / "tmp").make()
room.clone.mkdir()
argv = for_checkout(None, None).launch(room, fresh=True).argv
print(json.dumps({"hidden": [str(p) for p in installation_paths()], "argv": argv}))
"""


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder outside /tmp, which a sandbox covers whole: what it hides inside a venv there is
    armbench's doing alone."""
    folder = Path(tempfile.mkdtemp(prefix="armbench-test-install-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_armbench_and_a_neighbour_with_a_cli_package_live_side_by_side(
        built: tuple[Path, Path], outside_tmp: Path, tmp_path: Path) -> None:
    wheel, neighbour = built
    python, site = _venv(outside_tmp)
    _pip(python, "install", "--no-deps", str(wheel))
    assert sorted(p.name for p in site.iterdir() if not p.name.endswith(".pth")) == [
        "armbench", "armbench-0.1.0.dist-info"]
    _pip(python, "install", "--no-deps", str(neighbour))
    armbench = python.with_name("armbench")
    helped = _run([str(armbench), "--help"], tmp_path)
    assert helped.returncode == 0 and "Usage" in helped.stdout, helped.stderr
    versioned = _run([str(armbench), "--version"], tmp_path)
    assert (versioned.returncode, versioned.stdout) == (0, "armbench 0.1.0\n"), versioned.stderr
    theirs = _run([str(python), "-c", "import cli.main, armbench.cli.main as ours; "
                                      "print(cli.main.WHO, ours.main.__module__)"], tmp_path)
    assert theirs.stdout.split() == ["the", "neighbour", "armbench.cli.main"], theirs.stderr

    on_path = {**os.environ, "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}"}
    probed = _run([str(python), "-c", HIDDEN_PROBE, str(tmp_path / "room"), str(site)], tmp_path,
                  on_path)  # the venv activated, as pipx's or a CI job's: a toolchain steps see
    assert probed.returncode == 0, probed.stderr
    found = json.loads(probed.stdout)
    ours = [str(site / "armbench"), str(site / "armbench-0.1.0.dist-info"), str(python.parent / "armbench")]
    assert found["hidden"] == ours
    argv = found["argv"]
    covered = {argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--tmpfs"}
    covered |= {argv[i + 2] for i, arg in enumerate(argv[:-2])
                if arg == "--ro-bind" and argv[i + 1] == "/dev/null"}
    assert set(ours) <= covered  # armbench's folder and metadata by a tmpfs, its command by /dev/null
    assert not [c for c in covered if c.startswith(str(site)) and c not in ours]  # the neighbour's cli/ shows

    _pip(python, "uninstall", "-y", "neighbour")
    assert not (site / "cli").exists()
    again = _run([str(armbench), "--help"], tmp_path)
    assert again.returncode == 0 and "Usage" in again.stdout, again.stderr
