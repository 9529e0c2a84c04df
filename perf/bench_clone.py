"""Clone preparation: `make_isolated_clone` and `files_matching_at` against their floors.

Run with `python -m perf.bench_clone [rounds]`; temp dirs go under `$ARMBENCH_BENCH_DIR`,
else `/dev/shm` (tmpfs) when there is one (`bench_dir`).
"""

from __future__ import annotations

import functools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pygit2

from armbench.edge.gitclone import fetch_commit, files_matching_at, git_env, make_isolated_clone

__all__ = ["bench_dir", "build_repo", "measure_clone", "measure_read"]

FILES, COMMITS, CHANGED_PER_COMMIT = 2000, 50, 40
CLONE_TARGET, READ_TARGET_MS = 1.2, 200.0
PATTERNS = ["test/**", "src/**/*.py"]


def _path(n: int) -> str:
    return f"{'test' if n % 2 else 'src'}/d{n % 40:02d}/f{n:04d}.py"


def _fast_import_stream() -> bytes:
    """COMMITS commits on main: all FILES files first, then CHANGED_PER_COMMIT edits in each."""
    chunks = []
    for c in range(1, COMMITS + 1):
        changed = range(FILES) if c == 1 else range(c * 7 % FILES, FILES, FILES // CHANGED_PER_COMMIT)
        message = f"commit {c}".encode()
        chunks.append(b"commit refs/heads/main\nmark :%d\n" % c)
        chunks.append(
            b"committer b <b@example.com> %d +0000\ndata %d\n%s\n"
            % (1_700_000_000 + c, len(message), message)
        )
        chunks.append(b"from :%d\n" % (c - 1) if c > 1 else b"")
        for n in changed:
            body = b"# file %d, commit %d\n" % (n, c) + b"x = %d\n" % n * 20
            chunks.append(b"M 100644 inline %s\ndata %d\n%s\n" % (_path(n).encode(), len(body), body))
    return b"".join(chunks)


def build_repo(root: Path) -> tuple[Path, str]:
    """A packed bare repo of FILES files over COMMITS commits; returns it and the commit before the tip."""
    gitdir = root / "source.git"
    env = git_env()
    subprocess.run(["git", "init", "-q", "--bare", "--template=", str(gitdir)], env=env, check=True)
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=gitdir, input=_fast_import_stream(), env=env, check=True
    )
    subprocess.run(["git", "repack", "-adq"], cwd=gitdir, env=env, check=True)
    start = subprocess.run(
        ["git", "rev-parse", "main~1"], cwd=gitdir, env=env, capture_output=True, check=True
    )
    return gitdir, start.stdout.decode().strip()


def _floor_clone(source: Path, sha: str, dest: Path) -> None:
    """The least git can do: init, fetch the commit by SHA, check it out."""
    env = git_env()
    subprocess.run(["git", "init", "-q", "--template=", str(dest)], env=env, check=True)
    subprocess.run(
        ["git", "fetch", "-q", "--no-tags", "--no-write-fetch-head", str(source), sha],
        cwd=dest,
        env=env,
        check=True,
    )
    subprocess.run(
        ["git", "-c", "advice.detachedHead=false", "checkout", "-q", sha], cwd=dest, env=env, check=True
    )


def _timed(run: Callable[[], object]) -> float:
    began = time.perf_counter()
    run()
    return (time.perf_counter() - began) * 1000


def _figure(name: str, floor: list[float], ours: list[float], **extra: object) -> dict[str, object]:
    floor_ms, ours_ms = statistics.median(floor), statistics.median(ours)
    return {"name": name, "floor_ms": floor_ms, "ours_ms": ours_ms, "ratio": ours_ms / floor_ms, **extra}


def bench_dir() -> str:
    """Where clones go, for armbench and the floor alike: tmpfs (`/dev/shm`) when there is one,
    `ARMBENCH_BENCH_DIR` to choose. On ext4, writeback of one clone's 2,000 files lands on
    whichever clone comes next (a clone took 0.2 s in one run and 2 s in the next), which swamps
    the figure being measured: armbench's own work, not the disk's."""
    default = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    return os.environ.get("ARMBENCH_BENCH_DIR", default)


def measure_clone(rounds: int = 5, *, fetched: bool = False) -> dict[str, object]:
    """Median ms of the floor and of `make_isolated_clone`, interleaved, alternating which goes
    first. With `fetched`, ours is a run's later clone of the commit: a copy of the git dir
    `fetch_commit` made once (before the rounds), then the checkout."""
    with tempfile.TemporaryDirectory(prefix="armbench-bench-clone-", dir=bench_dir()) as temp:
        root = Path(temp)
        source, sha = build_repo(root)
        ours: Callable[[Path, str, Path], None] = make_isolated_clone
        if fetched:
            fetch_commit(source, sha, root / "fetched")
            ours = functools.partial(make_isolated_clone, template=root / "fetched")
        times: dict[str, list[float]] = {"floor": [], "ours": []}
        for r in range(rounds):
            order = [("floor", _floor_clone), ("ours", ours)]
            for label, clone in order if r % 2 == 0 else order[::-1]:
                dest = root / f"{label}-{r}"
                times[label].append(_timed(lambda clone=clone, dest=dest: clone(source, sha, dest)))
                shutil.rmtree(dest)
    return _figure(
        "clone-from-fetched" if fetched else "clone-preparation",
        times["floor"],
        times["ours"],
        **({"informative": True} if fetched else {"target_ratio": CLONE_TARGET}),
        files=FILES,
        commits=COMMITS,
        rounds=rounds,
        directory=bench_dir(),
    )


def _floor_read(source: Path, sha: str) -> dict[str, bytes]:
    """Every blob at the commit, walking its tree with no pathspec at all."""
    found: dict[str, bytes] = {}

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            if isinstance(entry, pygit2.Tree):
                walk(entry, f"{prefix}{entry.name}/")
            else:
                found[prefix + entry.name] = entry.data

    walk(pygit2.Repository(str(source))[sha].peel(pygit2.Tree), "")
    return found


def measure_read(rounds: int = 5) -> dict[str, object]:
    """Median ms of reading every file at a commit, without and with `:(glob)` pathspec matching."""
    with tempfile.TemporaryDirectory(prefix="armbench-bench-read-", dir=bench_dir()) as temp:
        source, sha = build_repo(Path(temp))
        floor = [_timed(lambda: _floor_read(source, sha)) for _ in range(rounds)]
        ours = [_timed(lambda: files_matching_at(source, sha, PATTERNS)) for _ in range(rounds)]
        assert len(files_matching_at(source, sha, PATTERNS)) == FILES
    return _figure("read-protected", floor, ours, target_ms=READ_TARGET_MS, files=FILES, rounds=rounds)


def _line(figure: dict[str, object]) -> str:
    target = (
        f"target <= {figure['target_ratio']:.2f}x"
        if "target_ratio" in figure
        else "informative: a run's later clones of a commit" if figure.get("informative")
        else f"target < {figure['target_ms']:.0f} ms"
    )
    return (
        f"{figure['name']}: floor {figure['floor_ms']:.1f} ms, ours {figure['ours_ms']:.1f} ms, "
        f"ratio {figure['ratio']:.2f}x ({target}; {figure['files']} files, {figure['rounds']} rounds)"
    )


def main(argv: list[str]) -> None:
    """Print one line per figure."""
    rounds = int(argv[0]) if argv else 5
    for figure in (measure_clone(rounds), measure_clone(rounds, fetched=True),
                   measure_read(rounds)):
        print(_line(figure))


if __name__ == "__main__":
    main(sys.argv[1:])
