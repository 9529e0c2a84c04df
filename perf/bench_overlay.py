"""A trial's clone as an overlay (`edge.overlay`): preparing one trial against git's floor.

Run with `python -m perf.bench_overlay [rounds]` (7 by default, about a minute and a half).

Two repositories, 2,000 and 20,000 files (one commit of all of them, then a commit that
changes 1 in 50), each on a disk file system (ext4 under `/var/tmp`, `ARMBENCH_BENCH_DISK` to
choose) and on tmpfs (`/dev/shm`). The floor is the least git does for a clone at a commit:
`git init`, fetch the commit by SHA from the bare repository, check it out, all on the same file
system. Ours is what a trial's preparation costs once the task's pristine tree exists (made once
a run, before the rounds, as `setup: once` makes its tree): its empty upper and work folders and
the overlay mounted in this process's holder (started before the rounds, once a process). Each
round times both, alternating which goes first, and the figure is the median of the rounds'
ratios. Target: at most 0.1x. Informative: the same trial prepared as today's fallback, a copy
of the pristine tree (`cp -a --reflink=auto`: a plain copy on ext4 and tmpfs).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from armbench.edge import overlay
from armbench.edge.gitclone import git_env, make_isolated_clone
from armbench.edge.prepared import copy_tree

__all__ = ["build_repo", "measure"]

TARGET = 0.1
SIZES = (2_000, 20_000)


def _stream(files: int) -> bytes:
    """fast-import input: every file in the first commit, 1 in 50 changed in the second."""
    chunks = []
    for c, changed in ((1, range(files)), (2, range(0, files, 50))):
        message = f"commit {c}".encode()
        chunks.append(b"commit refs/heads/main\nmark :%d\ncommitter b <b@example.com> %d +0000\n"
                      b"data %d\n%s\n" % (c, 1_700_000_000 + c, len(message), message))
        chunks.append(b"from :1\n" if c == 2 else b"")
        for n in changed:
            body = b"# file %d, commit %d\n" % (n, c) + b"x = %d\n" % n * 20
            path = f"{'test' if n % 2 else 'src'}/d{n % 100:02d}/f{n:05d}.py".encode()
            chunks.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(body), body))
    return b"".join(chunks)


def build_repo(root: Path, files: int) -> tuple[Path, str]:
    """A packed bare repository of `files` files; returns it and its tip."""
    gitdir, env = root / "source.git", git_env()
    subprocess.run(["git", "init", "-q", "--bare", "--template=", str(gitdir)], env=env, check=True)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=gitdir, input=_stream(files), env=env,
                   check=True)
    subprocess.run(["git", "repack", "-adq"], cwd=gitdir, env=env, check=True)
    tip = subprocess.run(["git", "rev-parse", "main"], cwd=gitdir, env=env, capture_output=True,
                         check=True)
    return gitdir, tip.stdout.decode().strip()


def _floor(source: Path, sha: str, dest: Path) -> None:
    env = git_env()
    subprocess.run(["git", "init", "-q", "--template=", str(dest)], env=env, check=True)
    subprocess.run(["git", "fetch", "-q", "--no-tags", "--no-write-fetch-head", str(source), sha],
                   cwd=dest, env=env, check=True)
    subprocess.run(["git", "-c", "advice.detachedHead=false", "checkout", "-q", sha], cwd=dest,
                   env=env, check=True)


def _timed(run: Callable[[], object]) -> float:
    began = time.perf_counter()
    run()
    return (time.perf_counter() - began) * 1000


def _disk() -> str:
    return os.environ.get("ARMBENCH_BENCH_DISK", "/var/tmp")


def measure(files: int, where: str, rounds: int = 7) -> dict[str, object]:
    """Median ms of the floor and of an overlay trial (and of a copy), paired by round."""
    with tempfile.TemporaryDirectory(prefix="armbench-bench-overlay-", dir=where) as temp:
        root = Path(temp)
        source, sha = build_repo(root, files)
        pristine = root / "pristine"
        make_isolated_clone(source, sha, pristine)
        overlay.holder()  # once a process, as a run's first trial starts it
        (root / "copies").mkdir()
        floor: list[float] = []
        ours: list[float] = []
        copies: list[float] = []
        for r in range(rounds):
            mounted: list[overlay.Overlay] = []

            def trial(r: int = r, mounted: list[overlay.Overlay] = mounted) -> None:
                mounted.append(overlay.mount([pristine], root / "layers" / str(r),
                                             root / "clones" / str(r)))

            def floored(r: int = r) -> None:
                _floor(source, sha, root / "floor" / str(r))

            order = [(floor, floored), (ours, trial)]
            for times, run in order if r % 2 == 0 else order[::-1]:
                times.append(_timed(run))
            copies.append(_timed(lambda r=r: copy_tree(pristine, root / "copies" / str(r))))
            seen = mounted[0].host
            if not (seen / "src" / "d00" / "f00000.py").is_file() or not (seen / ".git").is_dir():
                raise SystemExit("the overlay does not show the pristine tree")
            mounted[0].unmount()
            for folder in ("floor", "copies", "layers", "clones"):
                shutil.rmtree(root / folder / str(r))
    ratios = [o / f for o, f in zip(ours, floor, strict=True)]
    return {"files": files, "where": where, "floor_ms": statistics.median(floor),
            "ours_ms": statistics.median(ours), "ratio": statistics.median(ratios),
            "copy_ms": statistics.median(copies), "rounds": rounds,
            "fs": _fs_type(where)}


def _fs_type(where: str) -> str:
    done = subprocess.run(["df", "--output=fstype", where], capture_output=True, text=True)
    return (done.stdout.split() or ["?"])[-1]


def _line(figure: dict[str, object]) -> str:
    ratio = float(str(figure["ratio"]))
    verdict = "ok" if ratio <= TARGET else "OVER TARGET"
    return (f"overlay-trial {figure['files']} files on {figure['fs']} ({figure['where']}): floor "
            f"{figure['floor_ms']:.1f} ms, ours {figure['ours_ms']:.1f} ms, ratio {ratio:.4f}x "
            f"(target <= {TARGET}x, {verdict}; a copy instead {figure['copy_ms']:.1f} ms, "
            f"informative; {figure['rounds']} paired rounds)")


def main(argv: list[str]) -> None:
    """Print one line per repository size and file system."""
    if not overlay.available():
        print("overlay-trial: no overlay can be mounted here (no user namespaces?); nothing measured")
        return
    rounds = int(argv[0]) if argv else 7
    for files in SIZES:
        for where in (_disk(), "/dev/shm"):
            print(_line(measure(files, where, rounds)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
