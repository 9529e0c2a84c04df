"""`trial: {setup: once}` against `each`: a real suite's wall time, on a disk and on tmpfs.

Run from the repo root: `python -m perf.bench_setup [repetitions]` (5 by default; needs
`armbench` on PATH and, the first time, PyPI to download the wheels).

The suite's setup is what a Python project's is: a `.venv` with real wheels installed offline
(`python3 -m venv .venv && .venv/bin/pip install --no-index --find-links <wheelhouse> requests
pytest attrs six`, 12 wheels with their dependencies, besides the pip `venv` installs), from
a wheelhouse downloaded once from PyPI into `/var/tmp/armbench-bench-wheels` (kept between
runs; `ARMBENCH_BENCH_WHEELS` to move it). The project is bench_clone's 2,000-file repository; 2
tasks (two commits) × 2 arms × `repetitions`, a tool that touches one file, and a check that imports
the installed packages from the trial's `.venv` (so a copy that broke the venv fails the run).
Each trial and baseline runs in armbench's sandbox.

The floor is the same suite with `setup: each` (the default), run in the same checkout right
before: wall time of `armbench run` from start to end, each. The figure is `once` / `each`.
Both are measured with the run's work folder (`TMPDIR`) on a disk file system (ext4 under
`/var/tmp`, `ARMBENCH_BENCH_DISK` to choose) and on tmpfs (`/dev/shm`). Target: at most 0.3x.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from perf.bench_clone import build_repo

__all__ = ["measure_setup", "wheelhouse"]

TARGET = 0.3
PACKAGES = ("requests", "pytest", "attrs", "six")
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"


def _sh(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr}{done.stdout}")
    return done.stdout


def wheelhouse() -> Path:
    """The wheels of PACKAGES and their dependencies for the setup's Python, downloaded from PyPI
    once (kept in `/var/tmp`, which a sandbox shows only through `ARMBENCH_SANDBOX_READ`)."""
    folder = Path(os.environ.get("ARMBENCH_BENCH_WHEELS", "/var/tmp/armbench-bench-wheels"))
    if (folder / ".complete").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    _sh(PYTHON, "-m", "pip", "download", "-q", "--only-binary=:all:", "--dest", str(work),
        *PACKAGES, cwd=work)
    (work / ".complete").write_text("\n".join(sorted(p.name for p in work.glob("*.whl"))) + "\n")
    work.rename(folder)
    return folder


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(root / "tmp"), "ARMBENCH_HOME": str(root / "home"),
            "ARMBENCH_SANDBOX_READ": str(wheelhouse()),  # setup's pip reads it: shown read-only
            "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com",
            "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.com"}


def _team(root: Path, shas: list[str], wheels: Path, reps: int) -> None:
    team = root / "team"
    setup = (f"{PYTHON} -m venv .venv && .venv/bin/pip install -q --no-cache-dir --no-index "
             f"--find-links {wheels} {' '.join(PACKAGES)}")
    for tool in ("noop", "noop2"):
        (team / "tools" / tool).mkdir(parents=True)
        (team / f"tools/{tool}/tool.yaml").write_text(
            f"schemaVersion: v1alpha1\nname: {tool}\nrun: touch .bench-done\n")
    (team / "armbench.yaml").write_text("schemaVersion: v1alpha1\n")
    for mode in ("each", "once"):
        suite = team / "benchmarks" / mode
        (suite / "tasks").mkdir(parents=True)
        (suite / "suite.yaml").write_text(
            f"schemaVersion: v1alpha1\nname: {mode}\nrepo: https://example.invalid/bench\n"
            f"defaults: {{ tool: noop }}\narms:\n  - name: a\n  - name: b\n    tool: noop2\n"
            f"repetitions: {reps}\ntimeout: 60m\nparallel: 1\nsetup: {setup}\n"
            f"trial: {{ setup: {mode} }}\n")
        for i, sha in enumerate(shas):
            (suite / "tasks" / f"t{i}.yaml").write_text(
                f"schemaVersion: v1alpha1\ntitle: t{i}\nprompt: do nothing\nstartingCommit: {sha}\n"
                "check:\n  run: test -f .bench-done && .venv/bin/python -c 'import requests, pytest, "
                "attrs, six'\n  protect: ['test/**']\n")
    _sh("git", "init", "-q", "-b", "main", cwd=team)
    _sh("git", "add", "-A", cwd=team)
    _sh("git", "commit", "-qm", "bench team", cwd=team, env=_env(root))


def _run(project: Path, root: Path, suite: str) -> tuple[float, list[str], float]:
    """Wall seconds of `armbench run <suite> --sandbox`, its trials' results, and the median ms
    of a trial's preparation (clone and setup, or the prepared tree's copy)."""
    os.sync()
    started = time.perf_counter()
    out = _sh("armbench", "run", suite, "--sandbox", cwd=project, env=_env(root))
    took = time.perf_counter() - started
    run = msgspec.json.decode(out.splitlines()[-1])["data"]["done"]["run"]
    record = msgspec.json.decode((project / ".armbench" / "runs" / run / "benchmark.json").read_bytes())
    with sqlite3.connect(project / ".armbench" / "ledger.sqlite") as db:
        rows = db.execute("SELECT state FROM events WHERE originator_id=?", (run,)).fetchall()
    prepared = [e["duration_ms"] for e in (msgspec.json.decode(r[0])["event"] for r in rows)
                if e["type"] == "WorkspacePrepared"]
    return took, sorted(f"{t['task']}.{t['arm']}.{t['repetition']}:{t['result']}"
                        for t in record["trials"]), statistics.median(prepared)


def measure_setup(where: str, reps: int = 5) -> dict[str, object]:
    """Wall time of the `once` suite against the `each` suite, with everything in `where`."""
    wheels = wheelhouse()
    with tempfile.TemporaryDirectory(prefix="armbench-bench-setup-", dir=where) as temp:
        root = Path(temp)
        for folder in ("tmp", "home"):
            (root / folder).mkdir()
        source, sha = build_repo(root)
        tip = _sh("git", "rev-parse", "main", cwd=source).strip()
        project = root / "project"
        _sh("git", "clone", "-q", str(source), str(project), cwd=root)
        _team(root, [sha, tip], wheels, reps)
        _sh("armbench", "init", "--team", "../team", cwd=project, env=_env(root))
        _sh("armbench", "pull", cwd=project, env=_env(root))
        each, each_results, each_prep = _run(project, root, "each")
        once, once_results, once_prep = _run(project, root, "once")
        if each_results != once_results or any(not r.endswith(":passed") for r in once_results):
            raise SystemExit(f"once and each differ or failed: {each_results} {once_results}")
        fs = _sh("stat", "-f", "-c", "%T", str(root), cwd=root).strip()
        return {"name": f"setup {fs}", "each_s": each, "once_s": once, "ratio": once / each,
                "each_prepare_ms": each_prep, "once_prepare_ms": once_prep,
                "trials": len(once_results), "target": TARGET}


def _line(f: dict[str, object]) -> str:
    ok = "ok" if f["ratio"] <= f["target"] else "OVER TARGET"  # type: ignore[operator]
    return (f"{f['name']:<14} each {f['each_s']:7.1f} s  once {f['once_s']:7.1f} s  "
            f"ratio {f['ratio']:.2f}x  ({f['trials']} trials; a trial's preparation "
            f"{f['each_prepare_ms']:.0f} against {f['once_prepare_ms']:.0f} ms; target <= "
            f"{f['target']}x) {ok}")


def main(argv: list[str]) -> None:
    """Print the figure on a disk and on tmpfs."""
    reps = int(argv[0]) if argv else 5
    disk = os.environ.get("ARMBENCH_BENCH_DISK", "/var/tmp")
    for where in (disk, "/dev/shm"):
        if os.path.isdir(where):
            print(_line(measure_setup(where, reps)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
