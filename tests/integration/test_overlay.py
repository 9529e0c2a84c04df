"""A trial's clone as an overlay (`edge.overlay`): the pristine tree is the lower layer, and
nothing a sandboxed tool does in its clone (write, delete, rename a lower file, a whole folder)
reaches it; armbench's host code reads the merged tree (the diff, a fresh `.git`, protect's
restore); the layers outlive the holder and mount again."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from edge import overlay
from edge.gitclone import FileBlob, make_isolated_clone
from edge.prepared import manifest
from edge.proc import run_step
from edge.protect import restore_protected
from edge.sandbox import Room, Sandbox, probe

pytestmark = pytest.mark.skipif(not overlay.available(), reason="no overlay can be mounted here")

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

TOOL = """
set -e
echo changed > src/a.py            # a lower file written
rm src/b.py                        # deleted
mv src/c.py src/renamed.py         # renamed
rm -rf tests                       # a whole lower folder
mkdir -p new && echo made > new/n.py
chmod 600 src/d.py
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def pristine(tmp_path: Path) -> tuple[Path, str, Path]:
    """A source repo, and the pristine tree: a clone of it at its commit (the lower layer)."""
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    (source / "src").mkdir()
    (source / "tests").mkdir()
    for name in "abcd":
        (source / "src" / f"{name}.py").write_text(f"{name} = 1\n")
    (source / "tests" / "test_a.py").write_text("def test(): pass\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "start")
    base = git(source, "rev-parse", "HEAD").strip()
    lower = tmp_path / "work" / "pristine" / base
    make_isolated_clone(source / ".git", base, lower)
    return source / ".git", base, lower


def trial(tmp_path: Path, lower: Path, key: str) -> overlay.Overlay:
    made = overlay.mount([lower], tmp_path / "work" / "layers" / key, tmp_path / "work" / "clones" / key)
    Room.of(made.merged).make()
    return made


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_tool(made: overlay.Overlay, tmp_path: Path) -> None:
    """TOOL in the real sandbox, started inside the holder's namespaces."""
    probe(Sandbox())
    (tmp_path / "member-home").mkdir(exist_ok=True)
    launch = Sandbox(name="project", home=tmp_path / "member-home").launch(Room.of(made.merged))
    done = run_step(TOOL, cwd=made.host, env={**os.environ, **launch.env}, sandbox=launch.argv,
                    limits=launch.limits, enter=made.holder.enter(), timeout_s=60)
    assert done.cause == "ok", done.stderr_tail.decode()


def test_a_sandboxed_tool_changes_its_merged_tree_and_never_the_lower_layer(pristine, tmp_path: Path) -> None:
    _, _, lower = pristine
    before_bytes, before_manifest = snapshot(lower), manifest(lower, skip=frozenset())
    made = trial(tmp_path, lower, "t1")
    assert (made.host / "src" / "a.py").read_text() == "a = 1\n"  # the whole tree, nothing copied
    assert not any(made.upper.iterdir())
    run_tool(made, tmp_path)
    merged = made.host
    assert (merged / "src" / "a.py").read_text() == "changed\n"
    assert not (merged / "src" / "b.py").exists() and not (merged / "tests").exists()
    assert (merged / "src" / "renamed.py").read_text() == "c = 1\n"
    assert (merged / "new" / "n.py").read_text() == "made\n"
    assert snapshot(lower) == before_bytes
    assert manifest(lower, skip=frozenset()) == before_manifest
    assert stat.S_ISCHR(os.lstat(made.upper / "src" / "b.py").st_mode)  # a whiteout, in the upper layer
    assert not (Path(made.merged) / "src").exists()  # the host's own view: the empty mount point


def test_two_trials_over_one_lower_layer_never_see_each_other(pristine, tmp_path: Path) -> None:
    _, _, lower = pristine
    one, two = trial(tmp_path, lower, "one"), trial(tmp_path, lower, "two")
    run_tool(one, tmp_path)
    assert (two.host / "src" / "a.py").read_text() == "a = 1\n"
    assert (two.host / "src" / "b.py").exists() and not (two.host / "new").exists()


def test_the_host_restores_protect_through_the_holders_root_and_runs_git_inside_it(
        pristine, tmp_path: Path) -> None:
    """Python's own file calls reach the merged tree at `/proc/<holder>/root/...`; git must run
    inside the namespace (`Holder.enter`): git and libgit2 resolve a work tree's path, and
    `/proc/<pid>/root` resolves to `/`, the host's empty mount point."""
    _, base, lower = pristine
    before = snapshot(lower)
    made = trial(tmp_path, lower, "t1")
    run_tool(made, tmp_path)
    seen = subprocess.run([*made.holder.enter(), "git", "-C", str(made.merged), "status", "--porcelain"],
                          env=ENV, check=True, capture_output=True, text=True).stdout
    assert seen.splitlines()[:4] == [" M src/a.py", " D src/b.py", " D src/c.py", " D tests/test_a.py"], seen
    restored = restore_protected(made.host, ["tests/**", "src/a.py"], {
        "tests/test_a.py": FileBlob(data=b"def test(): pass\n", mode=0o100644),
        "src/a.py": FileBlob(data=b"a = 1\n", mode=0o100644)})
    assert restored == ["src/a.py", "tests/test_a.py"]
    assert (made.host / "tests" / "test_a.py").read_text() == "def test(): pass\n"
    assert (made.host / "src" / "a.py").read_text() == "a = 1\n"
    assert snapshot(lower) == before


def test_the_layers_outlive_the_holder_and_mount_again(pristine, tmp_path: Path) -> None:
    _, _, lower = pristine
    first = overlay.Holder()
    try:
        layers, merged = tmp_path / "work" / "layers" / "t1", tmp_path / "work" / "clones" / "t1"
        layers.mkdir(parents=True)
        (layers / "upper").mkdir()
        (layers / "work").mkdir()
        merged.mkdir(parents=True)
        first.mount([lower], layers / "upper", layers / "work", merged)
        (first.seen(merged) / "src" / "a.py").write_text("kept\n")
    finally:
        first.close()
    assert not first.seen(merged).exists()
    again = overlay.Holder()
    try:
        again.mount([lower], layers / "upper", layers / "work", merged)
        assert (again.seen(merged) / "src" / "a.py").read_text() == "kept\n"
        assert (again.seen(merged) / "src" / "b.py").read_text() == "b = 1\n"
    finally:
        again.close()
    assert (lower / "src" / "a.py").read_text() == "a = 1\n"


def test_a_path_an_overlay_option_cannot_spell_is_refused_before_mounting(tmp_path: Path) -> None:
    odd = tmp_path / "a,b"
    odd.mkdir()
    with pytest.raises(OSError, match="cannot name"):
        overlay.mount([odd], tmp_path / "layers", tmp_path / "merged")
