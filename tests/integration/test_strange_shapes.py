"""Issue 22.4 at the edge: trees of any depth walked iteratively, never through a link; a trial's
diff bounded in bytes, file size and time; a step's output capped on the host; the judge's clone
mounted read-only. Each on the real thing (the file system, git, processes, bubblewrap)."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from armbench.edge.gitclone import DiffLimits, FileBlob, keep_index, make_isolated_clone, work_diff
from armbench.edge.proc import OUTPUT_CAP, TAIL_BYTES, run_step
from armbench.edge.protect import restore_protected
from armbench.edge.sandbox import Room, Sandbox
from armbench.edge.tree import clear_at, copy_read_only, large_files, read_files, remove_tree, walk

DEPTH = 3000  # deeper than Python's recursion limit, and than PATH_MAX in bytes of path
ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
BASE = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}


@pytest.fixture(autouse=True)
def _clean(tmp_path: Path):  # type: ignore[no-untyped-def]
    """pytest's own clean-up of tmp_path recurses: deep trees go first, iteratively."""
    yield
    remove_tree(tmp_path)


def nest(top: Path, depth: int = DEPTH, leaf: bytes = b"leaf.py", data: bytes = b"") -> None:
    """`top/d/d/.../d/<leaf>` holding `data`, `depth` folders deep (made through directory
    descriptors)."""
    top.mkdir(parents=True, exist_ok=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    written = os.open(leaf, os.O_WRONLY | os.O_CREAT, 0o444, dir_fd=fd)
    os.write(written, data)
    os.close(written)
    os.fchmod(fd, 0o500)  # read-only at the bottom, as an agent may leave it
    os.close(fd)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True,
                          text=True).stdout


# ---------------------------------------------------------------- walks


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_a_walk_reaches_the_bottom_of_3000_folders_with_one_descriptor_open(tmp_path: Path) -> None:
    nest(tmp_path / "t")
    before = len(os.listdir("/proc/self/fd"))
    deepest, peak = 0, 0
    fd = os.open(tmp_path / "t", os.O_RDONLY | os.O_DIRECTORY)
    try:
        for listing in walk(fd):
            deepest = max(deepest, listing.path.count("/"))
            peak = max(peak, len(os.listdir("/proc/self/fd")) - before)
    finally:
        os.close(fd)
    assert sys.getrecursionlimit() < DEPTH == deepest
    assert peak <= 3  # root, the walk's own directory, and listdir's: never one per level


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_a_3000_deep_read_only_tree_is_removed(tmp_path: Path) -> None:
    nest(tmp_path / "t")
    (tmp_path / "outside").write_text("keep")
    os.symlink(tmp_path / "outside", tmp_path / "t" / "link")
    remove_tree(tmp_path / "t")
    assert not (tmp_path / "t").exists()
    assert (tmp_path / "outside").read_text() == "keep"  # the link went, not its target


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_clear_at_removes_a_deep_folder_in_the_way(tmp_path: Path) -> None:
    nest(tmp_path / "t" / "in-the-way")
    fd = os.open(tmp_path / "t", os.O_RDONLY | os.O_DIRECTORY)
    try:
        clear_at(fd, "in-the-way")
    finally:
        os.close(fd)
    assert os.listdir(tmp_path / "t") == []


def test_large_files_finds_a_sparse_file_without_reading_it_and_skips_git_and_links(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    with (tmp_path / ".git" / "pack").open("wb") as f:
        f.truncate(5 << 30)
    with (tmp_path / "big.bin").open("wb") as f:
        f.truncate(20 << 30)
    os.symlink(tmp_path / "big.bin", tmp_path / "link.bin")
    (tmp_path / os.fsdecode(b"small-\xff")).write_bytes(b"x")
    nest(tmp_path / "deep", 50)
    assert large_files(tmp_path, 1 << 20) == ([("big.bin", 20 << 30)], True)


def test_read_files_never_follows_a_link(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude" / "projects" / "p").mkdir(parents=True)
    (home / ".claude" / "projects" / "p" / "s.jsonl").write_bytes(b"mine\n")
    (tmp_path / "secret.jsonl").write_bytes(b"host\n")
    os.symlink(tmp_path / "secret.jsonl", home / ".claude" / "projects" / "p" / "l.jsonl")
    os.symlink(tmp_path, home / ".claude" / "projects" / "dir")
    found = read_files(home, ".claude/projects", ".jsonl", 100)
    assert [(path, data) for _, path, data in found] == [("p/s.jsonl", b"mine\n")]


# ---------------------------------------------------------------- protect


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_the_restore_walks_3000_folders_and_removes_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    test = FileBlob(data=b"def test(): pass\n", mode=0o100644)
    (clone / "tests").mkdir()
    (clone / "tests" / "test_a.py").write_bytes(test.data)
    nest(clone / "tests" / "deep")
    planted = os.fsdecode(b"tests/bad-\xff.py")
    (clone / planted).write_bytes(b"x = 1\n")
    restored = restore_protected(clone, ["tests/**"], {"tests/test_a.py": test})
    assert planted in restored and len(restored) == 2  # the planted name and the deep leaf
    assert sorted(os.listdir(clone / "tests")) == ["deep", "test_a.py"]


# ---------------------------------------------------------------- the diff


@pytest.fixture
def trial(tmp_path: Path) -> tuple[Path, Path, str, Path]:
    """A source repo, a clone at its commit, the clone's index kept apart."""
    source = tmp_path / "source"
    git(tmp_path, "init", "-q", str(source))
    (source / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (source / "data.bin").write_bytes(b"small\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "start")
    base = git(source, "rev-parse", "HEAD").strip()
    clone = tmp_path / "clone"
    make_isolated_clone(source / ".git", base, clone)
    kept = tmp_path / "work" / "indexes" / "clone"
    keep_index(clone, kept)
    return source / ".git", clone, base, kept


def test_a_20_gib_sparse_file_is_left_out_unread_and_named(trial: tuple[Path, Path, str, Path]) -> None:
    source, clone, base, kept = trial
    (clone / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    for name in ("big.bin", "data.bin"):  # one new, one tracked that grew
        with (clone / name).open("wb") as f:
            f.truncate(20 << 30)
    diff = work_diff(clone, base, source=source, index=kept)
    head, _, rest = diff.partition(b"\n")
    assert head.startswith(b"(armbench: left out of this diff, unread, each over 1048576 bytes: ")
    assert b"big.bin (21474836480 bytes), data.bin (21474836480 bytes)" in head
    assert b"+    return a + b" in rest and b"big.bin" not in rest and b"data.bin" not in rest


def test_the_diff_is_cut_at_its_budget_and_says_so(trial: tuple[Path, Path, str, Path]) -> None:
    source, clone, base, kept = trial
    for n in range(40):
        (clone / f"gen{n}.txt").write_text("".join(f"line {i} of {n}\n" for i in range(2000)))
    diff = work_diff(clone, base, source=source, index=kept, limits=DiffLimits(budget=100_000))
    body, _, note = diff.rpartition(b"\n(armbench: ")
    assert len(body) == 100_000
    assert note == b"the diff was cut here, at 100000 bytes; the rest of it was not read)\n"


def test_a_diff_past_its_time_limit_is_stopped_and_says_so(trial: tuple[Path, Path, str, Path]) -> None:
    source, clone, base, kept = trial
    (clone / "calc.py").write_text("changed\n")
    diff = work_diff(clone, base, source=source, index=kept, limits=DiffLimits(timeout_s=0.0))
    assert diff == b"(armbench: reading the diff took over 0 s and was stopped; nothing of it is shown)\n"


def test_a_name_that_is_not_utf8_reaches_the_diff(trial: tuple[Path, Path, str, Path]) -> None:
    source, clone, base, kept = trial
    (clone / os.fsdecode(b"bad-\xff.py")).write_bytes(b"x = 1\n")
    with (clone / os.fsdecode(b"big-\xfe.bin")).open("wb") as f:
        f.truncate(2 << 20)
    diff = work_diff(clone, base, source=source, index=kept)
    assert b'+++ "b/bad-\\377.py"' in diff  # git quotes it
    assert b"big-\\xfe.bin (2097152 bytes)" in diff.partition(b"\n")[0]


# ---------------------------------------------------------------- output and the sandbox


def test_a_step_printing_past_the_cap_keeps_the_cap_and_the_tail(tmp_path: Path) -> None:
    out = tmp_path / "stdout"
    size = OUTPUT_CAP + 10 * TAIL_BYTES
    result = run_step(f"head -c {size} /dev/zero; printf END; head -c {size} /dev/zero >&2; "
                      "printf ERR >&2", cwd=tmp_path, env=BASE, stdout_file=out)
    assert result.cause == "ok"
    assert out.stat().st_size == OUTPUT_CAP
    assert (result.stdout_bytes, result.stderr_bytes) == (size + 3, size + 3)
    assert result.stdout_tail.endswith(b"END") and result.stderr_tail.endswith(b"ERR")
    assert len(result.stdout_tail) == TAIL_BYTES
    assert result.cut() == (f"It printed {size + 3} bytes on stdout and {size + 3} bytes on stderr: "
                            f"armbench kept the first {OUTPUT_CAP} bytes of stdout and the last "
                            f"{TAIL_BYTES} of each, and dropped the rest.")


def test_a_step_printing_past_the_cap_without_a_stdout_file_keeps_only_the_tails(tmp_path: Path) -> None:
    size = OUTPUT_CAP + 1
    result = run_step(f"head -c {size} /dev/zero", cwd=tmp_path, env=BASE)
    assert (result.stdout_bytes, result.stdout_kept, len(result.stdout_tail)) == (size, 0, TAIL_BYTES)
    assert result.cut() == (f"It printed {size} bytes on stdout: armbench kept the last "
                            f"{TAIL_BYTES} of each, and dropped the rest.")


def test_a_stdout_file_on_a_full_disk_raises_its_error_once_the_step_ended(tmp_path: Path) -> None:
    with pytest.raises(OSError) as raised:  # /dev/full: every write is ENOSPC
        run_step("head -c 5000000 /dev/zero; echo done > finished", cwd=tmp_path, env=BASE,
                 stdout_file=Path("/dev/full"))
    assert raised.value.errno == errno.ENOSPC
    assert (tmp_path / "finished").read_text() == "done\n"  # drained: the step never blocked


def test_a_step_under_the_cap_says_nothing_was_cut(tmp_path: Path) -> None:
    result = run_step("echo hi; echo there >&2", cwd=tmp_path, env=BASE)
    assert (result.stdout_tail, result.stderr_tail, result.cut()) == (b"hi\n", b"there\n", None)


def test_a_read_only_room_shows_the_clone_and_refuses_writes(tmp_path: Path) -> None:
    clone = tmp_path / "clones" / "c"
    clone.mkdir(parents=True)
    (clone / "calc.py").write_text("x = 1\n")
    room = Room(clone=clone, home=tmp_path / "rooms" / "j" / "home", tmp=tmp_path / "rooms" / "j" / "tmp",
                read_only=True).make()
    launch = Sandbox(name="project").launch(room)
    result = run_step("cat calc.py; echo more >> calc.py || echo refused; touch new || echo refused",
                      cwd=launch.cwd, env={**BASE, **launch.env}, sandbox=launch.argv)
    assert result.stdout_tail == b"x = 1\nrefused\nrefused\n"
    assert sorted(os.listdir(clone)) == ["calc.py"] and (clone / "calc.py").read_text() == "x = 1\n"


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_a_declared_judges_copy_keeps_a_sparse_file_sparse_and_is_read_only(tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    nest(clone / "deep", 1200)
    with (clone / "big.bin").open("wb") as f:
        f.truncate(20 << 30)
    os.symlink("/etc/hostname", clone / "link")
    copy_read_only(clone, tmp_path / "copy")
    big = (tmp_path / "copy" / "big.bin").stat()
    assert big.st_size == 20 << 30 and big.st_blocks == 0 and not big.st_mode & 0o222
    assert os.readlink(tmp_path / "copy" / "link") == "/etc/hostname"


def test_read_files_reads_only_the_newest_files_the_limit_needs(tmp_path: Path) -> None:
    folder = tmp_path / "home" / ".codex" / "sessions"
    folder.mkdir(parents=True)
    for n in range(200):
        path = folder / f"s{n:03}.jsonl"
        path.write_bytes(bytes([65 + n % 26]) * 1000)
        os.utime(path, ns=(n * 10**9, n * 10**9))
    (folder / "huge.jsonl").write_bytes(b"x" * 5000)  # over the limit: left out
    found = read_files(tmp_path / "home", ".codex/sessions", ".jsonl", 2500)
    assert [path for _, path, _ in found] == ["s197.jsonl", "s198.jsonl", "s199.jsonl"]


def test_the_judges_transcript_is_the_sessions_oldest_first_at_any_depth(tmp_path: Path) -> None:
    from armbench.benchmark.agents.judge import transcript_of

    home = tmp_path / "home"
    nest(home / ".claude" / "projects" / "p", 1500, b"deep.jsonl", b"deep\n")
    (home / ".claude" / "projects" / "first.jsonl").write_bytes(b"first\n")
    os.utime(home / ".claude" / "projects" / "first.jsonl", ns=(1, 1))
    (tmp_path / "host.jsonl").write_bytes(b"host\n")
    os.symlink(tmp_path / "host.jsonl", home / ".claude" / "projects" / "link.jsonl")
    assert transcript_of("claude", home) == b"first\ndeep\n"
    assert transcript_of("opencode", home) == b""
