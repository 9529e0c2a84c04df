"""Files and trees an agent left, touched from the host: no link is followed to a host file, at
any level, by the cleanup (`edge.tree`, as an unprivileged user too) or by the single-file writes,
reads and removals of `edge.nofollow`."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from armbench.benchmark.trials.workfolder import remove_tree
from armbench.edge import nofollow

NOBODY = 65534
SETPRIV = shutil.which("setpriv")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder an unprivileged user can work in (the test's own tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="armbench-nofollow-", dir="/tmp"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def as_nobody(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`code` run by armbench's Python as the unprivileged user `nobody`."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [str(SETPRIV), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=120,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1",
             "HOME": str(cwd)})


@pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None, reason="needs root to become nobody")
def test_the_cleanup_as_an_unprivileged_user_never_changes_a_linked_host_file(shared: Path) -> None:
    """A read-only folder holding a link to a host file: removing the tree as `nobody` (who
    must make the folder writable again) leaves the host file's mode and bytes as they were."""
    host = shared / "host-secret"
    host.write_text("the member's own file\n")
    os.chown(host, NOBODY, NOBODY)
    host.chmod(0o400)
    before = (sha(host), stat.S_IMODE(host.lstat().st_mode))
    trial = shared / "work" / "clones" / "k"
    made = as_nobody(
        "import os, pathlib\n"
        f"t = pathlib.Path({str(trial)!r})\n"
        "(t / 'locked').mkdir(parents=True)\n"
        f"os.symlink({str(host)!r}, t / 'locked' / 'link')\n"
        "(t / 'locked').chmod(0o500)\n", shared)
    assert made.returncode == 0, made.stderr
    removed = as_nobody(
        "import pathlib\nfrom benchmark.trials.workfolder import remove_tree\n"
        f"remove_tree(pathlib.Path({str(trial)!r}))\n", shared)
    assert removed.returncode == 0, removed.stderr
    assert not trial.exists()
    assert (sha(host), stat.S_IMODE(host.lstat().st_mode)) == before


@pytest.mark.skipif(os.geteuid() != 0 or SETPRIV is None, reason="needs root to become nobody")
def test_the_cleanup_as_an_unprivileged_user_removes_folders_without_any_right(shared: Path) -> None:
    trial = shared / "work" / "rooms" / "k"
    made = as_nobody(
        "import os, pathlib\n"
        f"t = pathlib.Path({str(trial)!r})\n"
        "(t / 'home' / 'a' / 'b').mkdir(parents=True)\n"
        "(t / 'home' / 'a' / 'b' / 'f').write_text('x')\n"
        "(t / 'home' / 'a' / 'b').chmod(0o000)\n"
        "(t / 'home' / 'a').chmod(0o100)\n"
        "(t / 'home').chmod(0o400)\n", shared)
    assert made.returncode == 0, made.stderr
    removed = as_nobody(
        "import pathlib\nfrom benchmark.trials.workfolder import remove_tree\n"
        f"remove_tree(pathlib.Path({str(trial)!r}))\n", shared)
    assert removed.returncode == 0, removed.stderr
    assert not trial.exists()


def test_a_link_is_removed_as_itself_and_its_target_stays(tmp_path: Path) -> None:
    host = tmp_path / "host"
    (host / "inside").mkdir(parents=True)
    (host / "inside" / "file").write_text("keep me")
    (host / "inside").chmod(0o555)
    tree = tmp_path / "tree"
    (tree / "a").mkdir(parents=True)
    (tree / "a" / "to-folder").symlink_to(host / "inside")
    (tree / "a" / "to-file").symlink_to(host / "inside" / "file")
    (tree / "to-host").symlink_to(host)
    remove_tree(tree)
    assert not tree.exists()
    assert (host / "inside" / "file").read_text() == "keep me"
    assert stat.S_IMODE((host / "inside").stat().st_mode) == 0o555
    (host / "inside").chmod(0o755)


def test_a_write_never_goes_through_a_planted_link(tmp_path: Path) -> None:
    target = tmp_path / "ledger.key"
    target.write_bytes(b"key")
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    (home / ".config" / "auth.json").symlink_to(target)
    (home / ".other").symlink_to(tmp_path)
    assert not nofollow.write_file(home, ".config/auth.json", b"login", 0o400, replace=False)
    with pytest.raises(OSError):
        nofollow.write_file(home, ".other/ledger.key", b"login", 0o400, replace=True)
    assert target.read_bytes() == b"key"
    assert nofollow.write_file(home, ".config/auth.json", b"login", 0o400, replace=True)
    assert (home / ".config" / "auth.json").read_bytes() == b"login"
    assert not (home / ".config" / "auth.json").is_symlink()
    assert target.read_bytes() == b"key"


def test_a_read_never_goes_through_a_link_at_any_level(tmp_path: Path) -> None:
    host = tmp_path / "host"
    host.mkdir()
    (host / "usage.json").write_text('{"tokens": {"input": 1}}')
    io = tmp_path / "io"
    io.mkdir()
    (io / "usage.json").symlink_to(host / "usage.json")
    (io / "via").symlink_to(host)
    for rel in ("usage.json", "via/usage.json"):
        with pytest.raises(ValueError):
            nofollow.read_file(io, rel, 1024)
    nofollow.remove(io, "usage.json")
    nofollow.remove(io, "via/usage.json")
    assert (host / "usage.json").exists()
    assert not (io / "usage.json").is_symlink()
