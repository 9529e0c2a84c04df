"""100 trials of a no-op tool through the reference external driver against `armbench run`.

Run from the repo root: `python -m perf.bench_drivers` (needs `armbench` on PATH, nothing
else: no test package is imported). One world, built here as tests/e2e builds one (a real
project made with git, a real team repo, `armbench init --team` and `pull` through the installed
`armbench`, the environment tests/e2e gives it), one suite of 10 tasks x 1 arm x 10 repetitions
of a tool that only touches a file, and a check that tests for it (each task's baseline fails, so
every trial runs); each side must run the tool 100 times, or the benchmark stops.
`armbench run` is timed, then `workflow start --driver external` plus
examples/drivers/driver.py until the run is done, once one-shot (each request a process) and once
with `--serve` (one `armbench workflow serve` process for the run), alternating which goes first
over 2 rounds (`python -m perf.bench_drivers 4`: 4 rounds); each figure is the median of the
rounds' ratios. Each trial through the one-shot driver costs three process starts (`next`,
`launch`, `report`), so the CLI's start-up is most of its difference; the serve driver pays one
start for the run. The target applies to the serve figure: it is what a driver can use (the
one-shot figure is printed beside it, for drivers that cannot keep a process). armbench's
modules are compiled first, as an installed armbench's are (the worlds' environment never writes
bytecode, and a source tree fresh from git has none: each process would compile every module it
imports, about 80 ms).
Target: at most 1.5x. Each side's CPU time (its processes' user and system time, every
descendant's included) is printed beside its wall time: on a shared machine the wall time moves
with the load, the CPU time much less.
"""

from __future__ import annotations

import compileall
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ARMBENCH = Path(sys.executable).with_name("armbench")
TARGET = 1.5
TASKS, REPS = 10, 10
NOOP = "cat >/dev/null\ntouch .bench-done\necho x >> \"$BENCH_OUT/ran\"\n"
IDENTITY = {"GIT_AUTHOR_NAME": "armbench bench", "GIT_AUTHOR_EMAIL": "bench@armbench.invalid",
            "GIT_COMMITTER_NAME": "armbench bench", "GIT_COMMITTER_EMAIL": "bench@armbench.invalid"}
WITHHELD = ("GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "GL_TOKEN", "CI_JOB_TOKEN", "SSH_AUTH_SOCK",
            "GIT_ASKPASS", "SSH_ASKPASS", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE")


@dataclass(frozen=True)
class World:
    """A project checkout tied to a team repo by `armbench init`, a home, and an out folder the
    tool's sandbox may write (each trial adds a line to `out/ran`)."""

    checkout: Path
    out: Path
    env: dict[str, str]

    def armbench(self, *args: str) -> dict[str, Any]:
        """`armbench <args>` in the checkout; its envelope's data (stops on a failure)."""
        done = subprocess.run([str(ARMBENCH), *args], cwd=self.checkout, env=self.env, text=True,
                              capture_output=True, timeout=3600, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            raise SystemExit(f"armbench {' '.join(args)} failed (exit {done.returncode}):\n"
                             f"{done.stderr[-3000:]}{done.stdout[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])["data"]

    def ran(self) -> int:
        path = self.out / "ran"
        return len(path.read_text().splitlines()) if path.exists() else 0


def _git(cwd: Path, *args: str, env: dict[str, str]) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _env(home: Path, out: Path, tmp: Path) -> dict[str, str]:
    """tests/e2e's environment: the caller's without armbench, git-location and withheld
    variables; a private home; the out folder writable from the sandbox; no bytecode written."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ARMBENCH_", "GIT_", "E2E_", "BENCH_")) and k not in WITHHELD}
    return env | IDENTITY | {
        "ARMBENCH_HOME": str(home), "BENCH_OUT": str(out), "ARMBENCH_SANDBOX_WRITE": str(out),
        "PATH": f"{ARMBENCH.parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONDONTWRITEBYTECODE": "1", "TMPDIR": str(tmp)}


def _world(root: Path) -> World:
    """The project (a tiny Python project, one commit), the team (the `noop` tool, the suite of
    TASKS tasks x 1 arm x REPS repetitions, each task's check testing for the file the tool
    touches), `armbench init --team` and `pull`."""
    home, out, tmp, checkout, team = (root / n for n in ("home", "out", "tmp", "calc", "team"))
    for folder in (home, out, tmp, checkout, team):
        folder.mkdir(parents=True)
    env = _env(home, out, tmp)
    _write(checkout, {"README.md": "# calc\n", "calc.py": "def add(a, b):\n    return a + b\n",
                      "tests/__init__.py": "", "tests/test_add.py": "import calc\n"})
    _git(checkout, "init", "-q", "-b", "main", env=env)
    _git(checkout, "add", "-A", env=env)
    _git(checkout, "commit", "-qm", "calc", env=env)
    start = _git(checkout, "rev-parse", "HEAD", env=env)
    suite = {"schemaVersion": "v1alpha1", "name": "bench", "repo": "https://example.invalid/bench/calc",
             "defaults": {"tool": "noop"}, "arms": [{"name": "noop"}], "repetitions": REPS,
             "timeout": "2h", "trial": {"timeout": "1m"}}
    files = {"armbench.yaml": json.dumps({"schemaVersion": "v1alpha1", "name": "bench-team"}),
             "tools/noop/tool.yaml": json.dumps({"schemaVersion": "v1alpha1", "name": "noop",
                                                 "run": 'bash "$ARMBENCH_TOOL_DIR/agent.sh"'}),
             "tools/noop/agent.sh": NOOP, "benchmarks/bench/suite.yaml": json.dumps(suite)}
    for i in range(TASKS):
        files[f"benchmarks/bench/tasks/t{i}.yaml"] = json.dumps({
            "schemaVersion": "v1alpha1", "title": f"Task t{i}", "prompt": "Touch a file.\n",
            "startingCommit": start,
            "check": {"run": "test -f .bench-done", "protect": ["tests/**"]}})
    _write(team, files)
    _git(team, "init", "-q", "-b", "main", env=env)
    _git(team, "add", "-A", env=env)
    _git(team, "commit", "-qm", "team assets", env=env)
    world = World(checkout=checkout, out=out, env=env)
    world.armbench("init", "--team", str(team))
    pulled = world.armbench("pull")["pull"]
    if pulled["rejected"]:
        raise SystemExit(f"armbench pull rejected the benchmark's suite: {pulled['diagnostics']}")
    return world


def _cpu() -> float:
    """User and system seconds of every finished descendant so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _local(world: World) -> tuple[float, float]:
    started, cpu = time.perf_counter(), _cpu()
    before = world.ran()
    world.armbench("run", "bench", "--sandbox")
    if world.ran() - before != TASKS * REPS:
        raise SystemExit(f"armbench run ran the tool {world.ran() - before} times, not {TASKS * REPS}")
    return time.perf_counter() - started, _cpu() - cpu


def _external(world: World, *serve: str) -> tuple[float, float]:
    started, cpu = time.perf_counter(), _cpu()
    before = world.ran()
    started_run = world.armbench("workflow", "start", "bench", "--benchmark", "--driver", "external",
                                 "--sandbox")
    done = subprocess.run([sys.executable, str(ROOT / "examples/drivers/driver.py"),
                           started_run["run"]["id"], "--tools", "noop", *serve], cwd=world.checkout,
                          env={**world.env, "ARMBENCH": str(ARMBENCH)}, capture_output=True,
                          text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"the reference driver failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    if world.ran() - before != TASKS * REPS:
        raise SystemExit(f"the driver ran the tool {world.ran() - before} times, not {TASKS * REPS}")
    return time.perf_counter() - started, _cpu() - cpu


def main(rounds: int = 2) -> None:
    for package in ("ledger", "aggregates", "engine", "projections", "suites", "edge", "benchmark",
                    "cli"):
        compileall.compile_dir(ROOT / package, quiet=1)
    sides = {"one-shot": (), "serve": ("--serve",)}
    with tempfile.TemporaryDirectory() as tmp:
        world = _world(Path(tmp) / "w")
        ratios: dict[str, list[float]] = {name: [] for name in sides}
        cpu_ratios: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(rounds):
            timed: dict[str, tuple[float, float]] = {}
            order = ["local", *sides] if i % 2 == 0 else [*reversed(sides), "local"]
            for name in order:
                timed[name] = _local(world) if name == "local" else _external(world, *sides[name])
            local, local_cpu = timed["local"]
            line = f"round {i}: armbench run {local:.1f} s ({local_cpu:.1f} s CPU)"
            for name in sides:
                wall, cpu = timed[name]
                ratios[name].append(wall / local)
                cpu_ratios[name].append(cpu / local_cpu)
                line += (f"; {name} driver {wall:.1f} s ({cpu:.1f} s CPU): {wall / local:.2f}x "
                         f"wall, {cpu / local_cpu:.2f}x CPU")
            print(line + f", for {TASKS * REPS} trials")
        for name in sides:
            ratio = statistics.median(ratios[name])
            verdict = ("ok" if ratio <= TARGET else "over") if name == "serve" \
                else "for drivers that start a process per request"
            print(f"{name} external driver / armbench run: {ratio:.2f}x (target at most "
                  f"{TARGET}x, for the serve driver): {verdict}; CPU "
                  f"{statistics.median(cpu_ratios[name]):.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2)
