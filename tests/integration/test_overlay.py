"""A trial's clone as an overlay (`edge.overlay`): the pristine tree is the lower layer, and
nothing a sandboxed tool does in its clone (write, delete, rename a lower file, remove a whole
folder) reaches it; armbench's host code reads the merged tree (the diff, a fresh `.git`,
protect's restore); the layers outlive the holder and mount again; a released clone leaves
nothing mounted. Every test runs with each kind of holder (`overlay.Mode`): `host` (root: a
lower folder renames) and `user` (anyone: it does not)."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from armbench.edge import overlay
from armbench.edge.gitclone import (
    FileBlob,
    fetch_commit,
    head_commit,
    make_isolated_clone,
    renew_git_dir,
    work_diff,
)
from armbench.edge.prepared import manifest
from armbench.edge.proc import run_step
from armbench.edge.protect import restore_protected
from armbench.edge.sandbox import Room, Sandbox, probe

pytestmark = pytest.mark.skipif(not overlay.available(), reason="no overlay can be mounted here")

@pytest.fixture(params=["host", "user"], autouse=True)
def kind(request, monkeypatch) -> Iterator[overlay.Mode]:
    """This process's holder, of each kind in turn."""
    if request.param == "host" and os.geteuid() != 0:
        pytest.skip("a host holder mounts as root only")  # CI runs as root: it never skips there
    made = overlay.Holder(request.param)
    made.renames_folders = overlay._probe(made)
    monkeypatch.setattr(overlay, "_holder", made)
    yield request.param
    made.close()


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
    Room.of(made.host).make()  # the room's folders are the host's, seen through the holder's root
    assert Room.of(made.merged).home.is_dir()
    return made


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_tool(made: overlay.Overlay, tmp_path: Path, tool: str = TOOL) -> bytes:
    """`tool` in the real sandbox, started inside the holder's namespaces; what it printed."""
    probe(Sandbox())
    (tmp_path / "member-home").mkdir(exist_ok=True)
    launch = Sandbox(name="project", home=tmp_path / "member-home").launch(Room.of(made.host))
    assert list(launch.enter) == made.holder.enter() and launch.cwd == made.host
    assert str(made.merged) in launch.argv and not any(a.startswith("/proc/") for a in launch.argv)
    done = run_step(tool, cwd=launch.cwd, env={**os.environ, **launch.env}, sandbox=launch.argv,
                    limits=launch.limits, enter=launch.enter, timeout_s=60)
    assert done.cause == "ok", done.stderr_tail.decode()
    return done.stdout_tail


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


FORGE = """python3 -c '
import os
for path, name in (("src", "trusted.overlay.redirect"), ("src", "trusted.overlay.opaque"),
                   ("src/a.py", "trusted.overlay.metacopy"), ("src", "user.overlay.redirect")):
    try:
        os.setxattr(path, name, b"/tests")
        print("set", path, name)
    except OSError as exc:
        print("refused", path, name, exc.errno)
'
"""


def test_a_tool_cannot_forge_the_attributes_an_overlay_follows(pristine, tmp_path: Path, kind) -> None:
    """A `host` overlay follows `trusted.overlay.*` attributes, a `user` one `user.overlay.*`: a
    tool in the sandbox (every capability dropped) cannot write the first, and the second,
    written through a `user` overlay, is kept escaped (`user.overlay.overlay.*`) in the upper
    layer, so no tool can point its clone at another folder of the pristine tree or beyond."""
    _, _, lower = pristine
    before = snapshot(lower)
    made = trial(tmp_path, lower, "t1")
    said = run_tool(made, tmp_path, FORGE).decode()
    assert "refused src trusted.overlay.redirect" in said, said
    assert "set src trusted" not in said and "set src/a.py trusted" not in said, said
    kept = os.listxattr(made.upper / "src")
    assert not {"trusted.overlay.redirect", "trusted.overlay.opaque"} & set(kept), kept
    if kind == "user":
        assert "user.overlay.redirect" not in kept and "user.overlay.overlay.redirect" in kept, kept
    assert (made.host / "src" / "a.py").read_text() == "a = 1\n"
    assert sorted(p.name for p in (made.host / "src").iterdir()) == ["a.py", "b.py", "c.py", "d.py"]
    assert snapshot(lower) == before


def test_two_trials_over_one_lower_layer_never_see_each_other(pristine, tmp_path: Path) -> None:
    _, _, lower = pristine
    one, two = trial(tmp_path, lower, "one"), trial(tmp_path, lower, "two")
    run_tool(one, tmp_path)
    assert (two.host / "src" / "a.py").read_text() == "a = 1\n"
    assert (two.host / "src" / "b.py").exists() and not (two.host / "new").exists()


def test_the_host_reads_the_diff_renews_git_and_restores_protect_in_the_merged_tree(
        pristine, tmp_path: Path) -> None:
    """Python's own file calls reach the merged tree at `/proc/<holder>/root/...`; git and
    libgit2 resolve a work tree's path (`/proc/<pid>/root` resolves to `/`, the host's empty
    mount point), so `edge.gitclone` runs git inside the namespace (`gitclone.inside`)."""
    gitdir, base, lower = pristine
    before = snapshot(lower)
    made = trial(tmp_path, lower, "t1")
    run_tool(made, tmp_path)
    assert head_commit(made.host) == base
    diff = work_diff(made.host, base, source=gitdir).decode()
    assert "+changed" in diff and "deleted file mode" in diff and "new/n.py" in diff
    assert "tests/test_a.py" in diff and "src/renamed.py" in diff
    fetch_commit(gitdir, base, tmp_path / "work" / "fetched" / base)
    (made.host / ".git" / "config").write_text("[core]\n\tfsmonitor = touch /tmp/never\n")
    (made.host / "new" / ".git").mkdir()  # a repository the tool made inside its clone
    renew_git_dir(made.host, base, template=tmp_path / "work" / "fetched" / base, index=None,
                  trash=tmp_path / "work" / "rooms" / "t1" / "tool-git")
    assert "fsmonitor" not in (made.host / ".git" / "config").read_text()
    assert not (made.host / "new" / ".git").exists()
    assert head_commit(made.host) == base
    restored = restore_protected(made.host, ["tests/**", "src/a.py"], {
        "tests/test_a.py": FileBlob(data=b"def test(): pass\n", mode=0o100644),
        "src/a.py": FileBlob(data=b"a = 1\n", mode=0o100644)})
    assert restored == ["src/a.py", "tests/test_a.py"]
    assert (made.host / "tests" / "test_a.py").read_text() == "def test(): pass\n"
    after = work_diff(made.host, base, source=gitdir).decode()
    assert "+changed" not in after and "tests/test_a.py" not in after and "new/n.py" in after
    assert snapshot(lower) == before


def test_a_released_clone_leaves_no_mount_and_no_layers(pristine, tmp_path: Path) -> None:
    _, _, lower = pristine
    host = overlay.clone_over([lower], tmp_path / "work" / "clones" / "t1")
    (host / "src" / "a.py").write_text("mine\n")
    inner = overlay.release(host)
    assert inner == tmp_path / "work" / "clones" / "t1"
    assert not overlay.layers_of(inner).exists() and not any(inner.iterdir())
    assert not (host / "src").exists()
    assert (lower / "src" / "a.py").read_text() == "a = 1\n"


def test_a_clone_whose_holder_ended_is_reached_again_from_its_layers(pristine, tmp_path: Path) -> None:
    """A run resumed in a new process: the clone's path names a holder that is gone."""
    _, _, lower = pristine
    host = overlay.clone_over([lower], tmp_path / "work" / "clones" / "t1")
    (host / "src" / "a.py").write_text("kept\n")
    assert overlay.reach(host) == host
    ended = overlay.current()
    assert ended is not None
    ended.close()
    again = overlay.reach(host)
    assert again != host and (again / "src" / "a.py").read_text() == "kept\n"
    assert (again / "src" / "b.py").read_text() == "b = 1\n"
    overlay.release(again)


def test_the_layers_outlive_the_holder_and_mount_again(pristine, tmp_path: Path, kind) -> None:
    _, _, lower = pristine
    first = overlay.Holder(kind)
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
    again = overlay.Holder(kind)
    try:
        again.mount([lower], layers / "upper", layers / "work", merged)
        assert (again.seen(merged) / "src" / "a.py").read_text() == "kept\n"
        assert (again.seen(merged) / "src" / "b.py").read_text() == "b = 1\n"
    finally:
        again.close()
    assert (lower / "src" / "a.py").read_text() == "a = 1\n"


def test_a_path_through_a_processs_root_is_entered_and_others_are_not() -> None:
    # a pid above the kernel's pid_max: no process has it, so whose user namespace it is in
    # cannot be told and entering it is tried (a real pid 4242 in this namespace, met in CI at
    # efc79a1, was entered without -U, rightly)
    pid = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    into = overlay.entered(Path(f"/proc/{pid}/root/work/clones/abc"))
    assert into is not None and into.pid == pid and into.enter[-6:] == (
        "-t", str(pid), "-U", "-m", "--preserve-credentials", "--")
    assert into.inner(Path(f"/proc/{pid}/root/work/rooms/abc/home")) == Path("/work/rooms/abc/home")
    assert into.inner(Path(f"/proc/{pid}/root")) == Path("/")
    assert into.inner(Path("/proc/99/root/x")) == Path("/proc/99/root/x")
    assert into.inner(Path("/usr/bin")) == Path("/usr/bin")
    assert overlay.entered(Path("/proc/self/root/x")) is None
    assert overlay.entered(Path("/work/clones/abc")) is None
    assert Sandbox(isolation="declared").launch(Room.of(Path(f"/proc/{pid}/root/w/clones/a"))).enter == ()


def test_a_holder_in_this_user_namespace_is_entered_without_one(kind) -> None:
    """nsenter cannot enter the user namespace it is in: a `host` holder is entered by its mount
    namespace alone, a `user` holder by both."""
    found = overlay.holder()
    into = overlay.entered(found.seen(Path("/tmp")))
    assert into is not None and into.pid == found.pid
    assert ("-U" in into.enter) == (kind == "user")
    done = subprocess.run([*found.enter(), "true"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_path_an_overlay_option_cannot_spell_is_refused_before_mounting(tmp_path: Path) -> None:
    odd = tmp_path / "a,b"
    odd.mkdir()
    with pytest.raises(OSError, match="cannot name"):
        overlay.mount([odd], tmp_path / "layers", tmp_path / "merged")


def test_the_overlay_benchmark_runs_small(tmp_path: Path) -> None:
    """perf.bench_overlay's code, on 60 files in one round (no time is asserted: perf/README.md
    has the figures); it stops when an overlay does not show the pristine tree."""
    from perf.bench_overlay import measure
    figure = measure(60, str(tmp_path), rounds=1)
    assert figure["files"] == 60 and figure["rounds"] == 1
    assert float(str(figure["floor_ms"])) > 0 and float(str(figure["ours_ms"])) > 0
    assert not any(tmp_path.iterdir())  # every round's clones and layers removed


def test_a_folder_of_the_lower_layer_renames_only_in_a_host_overlay(pristine, tmp_path: Path, kind) -> None:
    """A `user` overlay cannot write `trusted.*` redirects: renaming a folder that comes from the
    pristine tree fails with EXDEV (`mv` copes by copying; `git mv` of a folder and a program's
    own rename do not), which keeps trials off it by default. A `host` overlay renames it, and
    `git mv` of a folder works in the sandbox as in a clone; the lower layer keeps its folder.
    A folder the trial made, and a file, rename in both."""
    _, _, lower = pristine
    host = overlay.clone_over([lower], tmp_path / "work" / "clones" / "t1")
    assert overlay.holder().renames_folders == (kind == "host")
    if kind == "user":
        with pytest.raises(OSError) as refused:
            os.rename(host / "src", host / "source")
        assert refused.value.errno == errno.EXDEV
    else:
        os.rename(host / "src", host / "source")
        assert (host / "source" / "a.py").read_text() == "a = 1\n" and not (host / "src").exists()
        done = subprocess.run([*overlay.holder().enter(), "git", "-C", str(overlay.entered(host).inner(host)),
                               "mv", "tests", "checks"], env=ENV, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert (host / "checks" / "test_a.py").is_file() and not (host / "tests").exists()
        assert (lower / "src" / "a.py").is_file() and (lower / "tests" / "test_a.py").is_file()
    code = host / ("source" if kind == "host" else "src")
    (host / "made").mkdir()
    os.rename(host / "made", host / "moved")
    os.rename(code / "b.py", code / "moved.py")  # a file renames
    assert (host / "moved").is_dir() and (code / "moved.py").is_file()
    overlay.release(host)


def test_trials_take_overlays_by_default_only_where_a_lower_folder_renames(monkeypatch, kind) -> None:
    from armbench.benchmark.trials.workspace import overlays_for
    monkeypatch.delenv("ARMBENCH_OVERLAYS", raising=False)
    assert overlays_for(Sandbox()) == (kind == "host")
    assert not overlays_for(Sandbox(isolation="declared"))
    monkeypatch.setenv("ARMBENCH_OVERLAYS", "1")
    assert overlays_for(Sandbox())  # this module runs only where an overlay can be mounted
    assert not overlays_for(Sandbox(isolation="declared"))
    monkeypatch.setenv("ARMBENCH_OVERLAYS", "0")
    assert not overlays_for(Sandbox())


def test_a_host_holders_tree_is_read_in_process_from_joined_threads_as_git_reads_it(
        pristine, tmp_path: Path, kind, monkeypatch) -> None:
    """A `host` holder's overlays are reached by threads of this process that joined its mount
    namespace (`overlay.joined`): libgit2 reads the diff and HEAD there, byte for byte what git
    started through nsenter reads; a `user` holder's are reached only through nsenter. When the
    holder ends, so do its joined threads."""
    import armbench.edge.gitclone as gitclone
    gitdir, base, lower = pristine
    made = trial(tmp_path, lower, "t1")
    index = tmp_path / "work" / "index-t1"
    gitclone.keep_index(made.host, index)
    run_tool(made, tmp_path)
    threads = overlay.joined(made.host)
    assert (threads is not None) == (kind == "host")
    assert overlay.joined(lower) is None and overlay.joined(Path("/proc/4242/root/x")) is None
    with monkeypatch.context() as only_libgit2:
        if kind == "host":  # git is not started: libgit2 reads it all
            only_libgit2.setattr(gitclone, "_diff_by_git", None)
            only_libgit2.setattr(gitclone.subprocess, "run", None)
        in_process = work_diff(made.host, base, source=gitdir, index=index)
        assert head_commit(made.host) == base
    monkeypatch.setattr(gitclone, "joined", lambda path: None)
    by_git = work_diff(made.host, base, source=gitdir, index=index)
    assert in_process == by_git and b"+changed" in by_git and b"new/n.py" in by_git
    if threads is not None:
        assert threads.run(made.host, lambda inner: sorted(os.listdir(inner / "src"))) == [
            "a.py", "d.py", "renamed.py"]
        made.holder.close()
        assert threads.pool._shutdown  # the namespace is not kept by a thread of ours


def test_a_discarded_overlay_keeps_its_empty_mount_point_until_the_run_ends(pristine, tmp_path: Path) -> None:
    """A sandbox that starts while another trial's clone is discarded holds a copy of the
    holder's mounts, and bubblewrap's recursive bind of `/` fails ("Unable to apply mount flags")
    when the folder one of them sits on is renamed or removed under it: `discard` unmounts the
    overlay and removes its layers and room, and leaves the empty mount point to the run's end."""
    from armbench.benchmark.trials.workfolder import discard, settle_discards
    _, _, lower = pristine
    host = overlay.clone_over([lower], tmp_path / "work" / "clones" / "t1")
    Room.of(host).make()
    inner = tmp_path / "work" / "clones" / "t1"
    discard(host)
    settle_discards()
    assert inner.is_dir() and not any(inner.iterdir()) and not (host / "src").exists()
    assert not Room.of(inner).base.exists() and not overlay.layers_of(inner).exists()
    assert not (tmp_path / "work" / "trash").exists() or not any(
        p.name.startswith("clones-") for p in (tmp_path / "work" / "trash").iterdir())


UPPER_TOOL = TOOL + """
mkdir -p deep && mv src deep/src         # a lower folder renamed (copied where it cannot be)
rm -rf deep/src/d.py && mkdir deep/src/d.py && echo x > deep/src/d.py/inner
mkdir gone && rmdir gone
ln -s deep/src/a.py link.py
git commit -qam 'the tool commits' --allow-empty || true
echo '*.log' > .gitignore && echo noise > debug.log
"""


def test_the_upper_layer_reads_the_change_a_walk_of_the_whole_tree_reads(pristine, tmp_path: Path) -> None:
    """A clone with no setup: its upper layer holds the tool's work alone, so reading the change
    from it (what a check grades, cheaply) finds what git's own reading of the merged tree finds,
    whatever the tool did: writes, removals, renames of lower folders (redirected or copied), a
    folder recreated over a removed file (opaque), links, its own commit, an ignored file."""
    from armbench.edge.change import ignored_by, read_change, read_upper
    from armbench.edge.gitclone import keep_index, paths_at

    gitdir, base, lower = pristine
    made = trial(tmp_path, lower, "t1")
    keep_index(made.host, tmp_path / "kept")
    run_tool(made, tmp_path, UPPER_TOOL)
    fresh = trial(tmp_path, lower, "t2").host

    walked = ignored_by(fresh, read_change(made.host, base, source=gitdir, index=tmp_path / "kept"))
    layered = ignored_by(fresh, read_upper(made.upper, made.host, fresh, paths_at(gitdir, base)))

    # the starting tree ignores no `*.log`: the tool's own rule hides debug.log from git's walk
    # (which only loses the tool its own work), not from the layer
    assert set(layered.written) == set(walked.written) | {"debug.log"}, (layered, walked)
    assert set(layered.removed) == set(walked.removed), (layered, walked)
    assert "deep/src/d.py/inner" in layered.written and "src/b.py" in layered.removed
    assert not any(p.startswith(".git/") for p in layered.written)
