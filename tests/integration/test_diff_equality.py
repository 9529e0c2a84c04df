"""`work_diff` reads a trial's diff in process (libgit2) where it can be sure of printing what
git prints, and through git's own `add -A` and `diff --cached` elsewhere: each kind of change
gives git's bytes exactly, by the path it is meant to take."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import armbench.edge.gitclone as gitclone
from armbench.edge.gitclone import DiffLimits, keep_index, make_isolated_clone, work_diff

ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
       "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t"}


def git(cwd: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True).stdout


@pytest.fixture
def trial(tmp_path: Path) -> tuple[Path, Path, str, Path]:
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    (source / "src").mkdir()
    for n in range(30):
        (source / "src" / f"m{n}.py").write_text("".join(f"line {i} of {n}\n" for i in range(40)))
    (source / "run.sh").write_text("echo hi\n")
    (source / "logo.bin").write_bytes(bytes(range(256)) * 4)
    (source / ".gitignore").write_text("*.log\nbuild/\n")
    os.symlink("src/m0.py", source / "link")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "start")
    base = git(source, "rev-parse", "HEAD").decode().strip()
    clone = tmp_path / "clone"
    make_isolated_clone(source / ".git", base, clone)
    kept = tmp_path / "work" / "indexes" / "clone"
    keep_index(clone, kept)
    return source / ".git", clone, base, kept


def _edit(c: Path) -> None:
    (c / "src" / "m1.py").write_text((c / "src" / "m1.py").read_text().replace("line 20", "LINE 20"))


def _add(c: Path) -> None:
    (c / "new.py").write_text("NEW = 1\n")
    (c / "deep" / "er").mkdir(parents=True)
    (c / "deep" / "er" / "x.txt").write_text("untracked in a new folder\n")


def _rename(c: Path) -> None:
    (c / "src" / "m2.py").rename(c / "src" / "moved.py")


def _binary(c: Path) -> None:
    (c / "logo.bin").write_bytes(b"\0\1\2" * 500)
    (c / "new.bin").write_bytes(b"\0" * 64)


def _mode(c: Path) -> None:
    (c / "run.sh").chmod(0o755)


def _link(c: Path) -> None:
    (c / "link").unlink()
    os.symlink("src/m3.py", c / "link")
    os.symlink("nowhere", c / "dangling")


def _ignored(c: Path) -> None:
    (c / "debug.log").write_text("ignored\n")
    (c / "build").mkdir()
    (c / "build" / "out.txt").write_text("ignored too\n")
    (c / "kept.txt").write_text("not ignored\n")


def _not_utf8(c: Path) -> None:
    (c / os.fsdecode(b"caf\xe9.py")).write_bytes(b"x = '\xe9'\n")
    (c / "na\u00efve.txt").write_text("utf-8 name\n")


def _attributes(c: Path) -> None:
    (c / ".gitattributes").write_text("*.txt text eol=crlf\n*.dat binary\nsrc/m8.py ident\n")
    (c / "notes.txt").write_bytes(b"one\r\ntwo\r\n")
    (c / "table.dat").write_text("text marked binary\n")
    (c / "src" / "m8.py").write_text("# $Id$\n")


def _nested_repo(c: Path) -> None:
    git(c, "init", "-q", "vendored")
    (c / "vendored" / "lib.py").write_text("LIB = 1\n")
    git(c / "vendored", "add", "-A")
    git(c / "vendored", "commit", "-qm", "its own")


def _commit(c: Path) -> None:
    _edit(c)
    git(c, "-c", "core.hooksPath=/dev/null", "commit", "-qam", "the tool's commit")
    (c / "after.txt").write_text("after the commit\n")


def _everything(c: Path) -> None:
    for change in (_edit, _add, _rename, _binary, _mode, _link, _ignored, _not_utf8, _remove):
        change(c)


def _remove(c: Path) -> None:
    (c / "src" / "m5.py").unlink()
    (c / "src" / "m6.py").write_text("")


CHANGES: dict[str, Callable[[Path], None]] = {
    "edited": _edit, "added and untracked": _add, "removed and emptied": _remove,
    "renamed": _rename, "binary": _binary, "mode change": _mode, "symlink": _link,
    "ignored": _ignored, "non-UTF-8 name": _not_utf8, "attributes": _attributes, "the tool's commit": _commit,
    "everything": _everything,
}


def gits_own(clone: Path, base: str) -> bytes:
    """What git itself prints for the clone's change (run in the clone, after ours)."""
    git(clone, "-c", "core.hooksPath=/dev/null", "add", "-A")
    return git(clone, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", base)


def _no_git(*args: object, **kwargs: object) -> bytes:
    raise AssertionError("git's path was taken where the in-process path should read the diff")


@pytest.mark.parametrize("with_index", [True, False], ids=["kept index", "no index"])
@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_the_in_process_diff_is_gits_own(trial, monkeypatch: pytest.MonkeyPatch, change: str,
                                         with_index: bool) -> None:
    gitdir, clone, base, kept = trial
    CHANGES[change](clone)
    monkeypatch.setattr(gitclone, "_diff_by_git", _no_git)
    ours = work_diff(clone, base, source=gitdir, index=kept if with_index else None)
    assert ours, "a change gives a diff"
    assert ours == gits_own(clone, base)


def test_an_ignored_file_is_not_in_the_diff(trial) -> None:
    gitdir, clone, base, kept = trial
    _ignored(clone)
    diff = work_diff(clone, base, source=gitdir, index=kept)
    assert b"kept.txt" in diff and b"debug.log" not in diff and b"build/out.txt" not in diff


def _changed_rename(c: Path) -> None:
    text = (c / "src" / "m7.py").read_text()
    (c / "src" / "m7.py").unlink()
    (c / "src" / "seven.py").write_text(text.replace("line 3 ", "LINE 3 "))


def _large_odd_name(c: Path) -> None:
    _edit(c)
    with (c / os.fsdecode(b"big-\xfe[1].bin")).open("wb") as f:
        f.truncate(2 << 20)


def _many_added(c: Path) -> None:
    for n in range(gitclone._IN_PROCESS_RENAMES + 1):
        (c / f"gen{n}.txt").write_text(f"{n}\n")


def _more_than_read_in_process(c: Path) -> None:
    _edit(c)
    (c / "grown.txt").write_text("x" * 60_000 + "\n")  # past the 50,000 bytes set below


def _touched_in_place(c: Path) -> None:
    _edit(c)
    info = (c / "logo.bin").stat()  # over the limit set below: libgit2 would hash it again
    os.utime(c / "logo.bin", ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


@pytest.mark.parametrize("change", [_changed_rename, _many_added, _nested_repo,
                                    _more_than_read_in_process],
                         ids=["rename with changes", "more added files than the rename limit",
                              "nested repository", "more bytes than read in process"])
def test_where_libgit2_may_differ_gits_path_reads_it(trial, monkeypatch: pytest.MonkeyPatch,
                                                     change: Callable[[Path], None]) -> None:
    gitdir, clone, base, kept = trial
    monkeypatch.setattr(gitclone, "_IN_PROCESS_BYTES", 50_000)
    change(clone)
    taken: list[bool] = []
    by_git = gitclone._diff_by_git

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        taken.append(True)
        return by_git(*args, **kwargs)
    monkeypatch.setattr(gitclone, "_diff_by_git", spy)
    ours = work_diff(clone, base, source=gitdir, index=kept)
    assert taken == [True]
    assert ours == gits_own(clone, base)


def test_a_large_tracked_file_touched_in_place_sends_the_diff_to_gits_path(
        trial, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its size is the kept index's and its stat is not: libgit2's walk would hash it whole."""
    gitdir, clone, base, kept = trial
    _touched_in_place(clone)
    taken: list[bool] = []
    by_git = gitclone._diff_by_git

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        taken.append(True)
        return by_git(*args, **kwargs)
    monkeypatch.setattr(gitclone, "_diff_by_git", spy)
    ours = work_diff(clone, base, source=gitdir, index=kept, limits=DiffLimits(file_limit=1000))
    assert taken == [True]
    head, _, body = ours.partition(b"\n")
    assert head == b"(armbench: left out of this diff, unread, each over 1000 bytes: logo.bin (1024 bytes))"
    assert body == gits_own(clone, base)


def test_large_files_are_left_out_in_process_and_the_rest_is_gits_own(
        trial, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each file over the limit is named, whether the tool added it (an odd name included),
    grew a tracked one, left it ignored or left it as it was; none of them is in the diff."""
    gitdir, clone, base, kept = trial
    _large_odd_name(clone)
    (clone / "src" / "m3.py").write_text("x" * 1500)  # tracked, grown past the limit
    (clone / "debug.log").write_text("y" * 2000)  # ignored
    monkeypatch.setattr(gitclone, "_diff_by_git", _no_git)
    ours = work_diff(clone, base, source=gitdir, index=kept, limits=DiffLimits(file_limit=1000))
    head, _, body = ours.partition(b"\n")
    assert head == (b"(armbench: left out of this diff, unread, each over 1000 bytes: "
                    b"big-\\xfe[1].bin (2097152 bytes), debug.log (2000 bytes), "
                    b"logo.bin (1024 bytes), src/m3.py (1500 bytes))")
    (clone / os.fsdecode(b"big-\xfe[1].bin")).unlink()
    git(clone, "checkout", "--", "src/m3.py")
    assert body == gits_own(clone, base)


def _bytes_read() -> int:
    return int(dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())["rchar"])


def test_a_tracked_empty_file_grown_to_gigabytes_is_never_read(trial) -> None:
    """libgit2's walk hashes a file its index says was empty and is not now, whatever its size,
    and cannot be stopped: such a file over the limit sends the diff to git's path, which
    leaves it out unread (it read 3 GiB of zeros here, for 13 s, before)."""
    gitdir, clone, base, _ = trial
    git(gitdir.parent, "rm", "-q", "src/m4.py")
    (gitdir.parent / "src" / "__init__.py").write_text("")
    git(gitdir.parent, "add", "-A")
    git(gitdir.parent, "commit", "-qm", "a package")
    base = git(gitdir.parent, "rev-parse", "HEAD").decode().strip()
    clone = gitdir.parent.parent / "clone-2"
    make_isolated_clone(gitdir, base, clone)
    kept = gitdir.parent.parent / "work" / "indexes" / "clone-2"
    keep_index(clone, kept)
    _edit(clone)
    with (clone / "src" / "__init__.py").open("r+b") as f:
        f.truncate((3 << 30) + 5)
    before = _bytes_read()
    ours = work_diff(clone, base, source=gitdir, index=kept)
    assert _bytes_read() - before < 64 << 20
    head, _, body = ours.partition(b"\n")
    assert head == (b"(armbench: left out of this diff, unread, each over 1048576 bytes: "
                    b"src/__init__.py (3221225477 bytes))")
    assert b"+LINE 20 of 1" in body and b"__init__" not in body


@pytest.mark.parametrize("in_process", [True, False], ids=["in process", "git's path"])
def test_the_members_own_ignore_file_hides_nothing(trial, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  in_process: bool) -> None:
    """Both paths read the same ignore rules: the worktree's, never `~/.config/git/ignore`."""
    gitdir, clone, base, kept = trial
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("made.txt\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    if not in_process:
        monkeypatch.setattr(gitclone, "_IN_PROCESS_BYTES", -1)
    (clone / "made.txt").write_text("the tool made it\n")
    assert b"+the tool made it" in work_diff(clone, base, source=gitdir, index=kept)


def _setup(c: Path) -> None:
    (c / ".venv" / "lib").mkdir(parents=True)
    for n in range(gitclone._IN_PROCESS_RENAMES + 50):  # setup's own files never count
        (c / ".venv" / "lib" / f"mod{n}.py").write_text(f"M = {n}\n")
    (c / ".venv" / "lib" / "core [x]*.so").write_bytes(b"\0" * 2_000_000)  # over the limit
    (c / "src" / "m9.py").write_text("rewritten by setup\n")  # tracked: changed by setup
    (c / "src" / "m10.py").unlink()  # tracked: removed by setup
    (c / "src" / "m11.py").unlink()  # removed by setup, made again by the tool
    (c / "src" / "m12.py").write_text("rewritten by setup\n")  # then removed by the tool


def _tool_after_setup(c: Path) -> list[str]:
    """The tool's change after `_setup`; the paths whose state the diff should show."""
    _edit(c)
    (c / ".venv" / "lib" / "mod7.py").write_text("changed by the tool\n")
    (c / "src" / "m11.py").write_text("the tool made it again\n")
    (c / "src" / "m12.py").unlink()
    (c / "new.py").write_text("NEW = 1\n")
    return ["src/m1.py", ".venv/lib/mod7.py", "src/m11.py", "src/m12.py", "new.py"]


@pytest.mark.parametrize("in_process", [True, False], ids=["in process", "git's path"])
def test_what_setup_made_is_left_out_of_the_diff_unless_the_tool_changed_it(
        trial, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_process: bool) -> None:
    gitdir, clone, base, kept = trial
    _setup(clone)
    settled = gitclone.settled_changes(clone, source=gitdir, index=kept)
    assert settled is not None and len(settled) == gitclone._IN_PROCESS_RENAMES + 55
    # The kernel stamps files from a coarse clock (a tick of 1 to 10 ms): an edit of the same size
    # in the tick the clone was checked out in has the stat data the kept index holds, and git
    # takes it for clean (racy git). No tool starts that soon after its clone; this test did.
    time.sleep(0.02)
    shown = _tool_after_setup(clone)
    if in_process:
        monkeypatch.setattr(gitclone, "_diff_by_git", _no_git)
    else:
        monkeypatch.setattr(gitclone, "_IN_PROCESS_BYTES", -1)
    ours = work_diff(clone, base, source=gitdir, index=kept, settled=settled)
    oracle = tmp_path / "oracle"  # the starting commit with only the tool's paths as they are
    make_isolated_clone(gitdir, base, oracle)
    for path in shown:
        if (clone / path).exists():
            (oracle / path).parent.mkdir(parents=True, exist_ok=True)
            (oracle / path).write_bytes((clone / path).read_bytes())
        else:
            (oracle / path).unlink()
    assert ours == gits_own(oracle, base)
    assert b"mod7.py" in ours and b"mod8.py" not in ours and b"m9.py" not in ours


def test_settled_changes_is_none_without_a_kept_index(trial, tmp_path: Path) -> None:
    gitdir, clone, _, _ = trial
    _setup(clone)
    assert gitclone.settled_changes(clone, source=gitdir, index=tmp_path / "missing") is None


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("in_process", [True, False], ids=["in process", "git's path"])
def test_a_tool_swapping_setups_files_for_links_and_a_fifo_reaches_no_host_file(
        trial, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_process: bool) -> None:
    """What settling and the diff read is what an attacker left: a link in place of a file
    setup made (aimed at a host secret), a folder of setup's swapped for a link to a host
    folder, a FIFO where setup's file was. Nothing is followed, opened or written: the host's
    files hash the same after, the diff holds links as links and none of the secret."""
    gitdir, clone, base, kept = trial
    host = tmp_path / "host"
    (host / "lib").mkdir(parents=True)
    (host / "secret").write_bytes(b"HOST-SECRET-BYTES\n")
    (host / "lib" / "mod1.py").write_bytes(b"HOST-SECRET-IN-A-FOLDER\n")
    before = {p: _sha(p) for p in host.rglob("*") if p.is_file()}
    _setup(clone)
    (clone / ".venv" / "share").mkdir()
    (clone / ".venv" / "share" / "mod1.py").write_text("setup's\n")
    settled = gitclone.settled_changes(clone, source=gitdir, index=kept)
    assert settled is not None
    (clone / ".venv" / "lib" / "mod3.py").unlink()
    os.symlink(host / "secret", clone / ".venv" / "lib" / "mod3.py")
    (clone / ".venv" / "lib" / "mod4.py").unlink()
    os.mkfifo(clone / ".venv" / "lib" / "mod4.py")
    (clone / "pkg").mkdir()
    (clone / "pkg" / "x.py").write_text("x = 1\n")
    os.rename(clone / ".venv" / "share", tmp_path / "setups-share")
    os.symlink(host / "lib", clone / ".venv" / "share")
    if not in_process:
        monkeypatch.setattr(gitclone, "_IN_PROCESS_BYTES", -1)
    ours = work_diff(clone, base, source=gitdir, index=kept, settled=settled)
    assert {p: _sha(p) for p in host.rglob("*") if p.is_file()} == before
    assert b"HOST-SECRET" not in ours
    for link, target in ((".venv/share", host / "lib"), (".venv/lib/mod3.py", host / "secret")):
        assert f"+++ b/{link}\n".encode() in ours and f"+{target}\n".encode() in ours  # as links
    assert b"+x = 1" in ours
