"""How fast `armbench` starts: three commands, each against `python -c "import typer, msgspec"`.

Run from the repo root: `python -m perf.bench_startup [rounds]` (7 by default; needs
`armbench` on PATH, as `pip install -e .` leaves it).

- help: `armbench --help`.
- runs: `armbench runs` on a ledger holding one 500-trial run.
- verify: `armbench verify r1` on that run: the keyed chain, the lease rule, the record against
  its log.

The ledger is made the way bench_ledger makes one (`bench_ledger.generate`: the pure decider
drives the run, an instant fake host adds what the benchmark host would), keyed with a ledger key
in the benchmark's own `ARMBENCH_HOME`, and its report step writes the record as the host does
(chain head, record, `RecordWritten`), so `verify` finds the run whole; the benchmark checks that
`runs` lists it and `verify` says ok before it times anything. A real `armbench run` of 500
trials would take minutes and measure the same start.

The floor is the least a typer CLI that decodes msgspec envelopes pays to start: a fresh
interpreter importing typer and msgspec. Each round runs the floor and the command back to back,
which goes first alternating, after a warm-up; the figure is the median over rounds of that
round's command / floor in wall time (a shared VM's speed drifts, and the two sides of one round
drift together). Target: at most 3x each.

Before it times anything, the benchmark compiles armbench's own modules to bytecode
(`compileall`), as `pip install` does for a package it installs and as Python does on a first
start: the floor's typer and msgspec start from their bytecode, and an editable install under
`PYTHONDONTWRITEBYTECODE=1` (set in some images) would otherwise compile every module of armbench
on each start (`verify` 305 against 205 ms on 2026-12-05).
"""

from __future__ import annotations

import compileall
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import msgspec

from armbench.edge.config import find_checkout, load_config
from armbench.edge.ledgerkey import load_key
from armbench.ledger.store import EventStore
from perf import bench_ledger

__all__ = ["make_ledger", "measure_startup"]

TARGET, TRIALS = 3.0, 500
FLOOR = [sys.executable, "-c", "import typer, msgspec"]


def _armbench() -> str:
    """The `armbench` installed beside this interpreter, or the one on PATH."""
    beside = Path(sys.executable).with_name("armbench")
    found = str(beside) if beside.exists() else shutil.which("armbench")
    if found is None:
        raise SystemExit("armbench is not on PATH: `pip install -e .` first.")
    return found


def _packages() -> list[str]:
    """armbench's own packages (`armbench.ledger`, ...), as pyproject.toml's `packages` names
    them; their subpackages are compiled with them."""
    with (Path(__file__).resolve().parent.parent / "pyproject.toml").open("rb") as f:
        found = tomllib.load(f)["tool"]["setuptools"]["packages"]
    return [name for name in found if name.count(".") == 1]


def compiled() -> None:
    """Bytecode for every module of armbench's packages, where they are installed (an editable
    install: the checkout's `__pycache__` folders, which git ignores)."""
    for name in _packages():
        folder = Path(importlib.import_module(name).__file__ or "").parent
        if not compileall.compile_dir(folder, quiet=1):
            raise SystemExit(f"armbench's {name} package did not compile to bytecode")


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "ARMBENCH_HOME": str(root / "home")}


def make_ledger(root: Path, trials: int = TRIALS) -> Path:
    """A checkout whose keyed ledger holds one finished run, `r1`, of `trials` trials, with its
    record; returns the checkout."""
    project = root / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    subprocess.run([_armbench(), "init", "--team", "../team"], cwd=project, env=_env(root),
                   check=True, capture_output=True)
    checkout = find_checkout(project)
    config = load_config(checkout)
    key = load_key(root / "home" / "ledger.key", create=True)
    store = EventStore(checkout.ledger_path(config), key=key)
    bench_ledger.generate(store, "r1", trials, runs_dir=checkout.runs_dir(config))
    store.close()
    return project


def _ok(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} exited {done.returncode}: {done.stderr}{done.stdout}")
    return done.stdout


def commands(project: Path, trials: int = TRIALS) -> dict[str, list[str]]:
    """Each timed command, checked once: `runs` lists r1 and `verify` finds it whole."""
    armbench, env = _armbench(), _env(project.parent)
    runs = _ok([armbench, "runs"], project, env)
    if "| r1 | bench | succeeded |" not in runs or f"| {trials}/{trials} |" not in runs:
        raise SystemExit(f"armbench runs does not list r1 with its {trials} trials: {runs}")
    verified = msgspec.json.decode(_ok([armbench, "verify", "r1"], project, env).splitlines()[-1])
    if verified.get("data", {}).get("verify", {}).get("ok") is not True:
        raise SystemExit(f"armbench verify r1 did not find the run whole: {verified}")
    return {"help": [armbench, "--help"], "runs": [armbench, "runs"],
            "verify": [armbench, "verify", "r1"]}


def _timed(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def paired(floor: list[str], ours: list[str], cwd: Path, env: dict[str, str],
           rounds: int) -> tuple[float, float, float, list[float]]:
    """Each side's median seconds, the median of the rounds' ours / floor, and those ratios."""
    _timed(floor, cwd, env), _timed(ours, cwd, env)  # warm-up: page cache, .pyc files
    floors, ourses = [], []
    for n in range(rounds):
        order = (floor, ours) if n % 2 == 0 else (ours, floor)
        took = {id(args): _timed(args, cwd, env) for args in order}
        floors.append(took[id(floor)])
        ourses.append(took[id(ours)])
    ratios = [o / f for o, f in zip(ourses, floors, strict=True)]
    return statistics.median(floors), statistics.median(ourses), statistics.median(ratios), ratios


def measure_startup(rounds: int = 7) -> list[dict[str, object]]:
    """One figure per command against the floor, on a 500-trial ledger."""
    compiled()
    with tempfile.TemporaryDirectory(prefix="armbench-bench-startup-") as temp:
        project = make_ledger(Path(temp))
        env = _env(Path(temp))
        out: list[dict[str, object]] = []
        for name, args in commands(project).items():
            floor_s, ours_s, ratio, ratios = paired(FLOOR, args, project, env, rounds)
            out.append({"name": name, "floor_ms": floor_s * 1000, "ours_ms": ours_s * 1000,
                        "ratio": ratio, "low": min(ratios), "high": max(ratios)})
        return out


def main(argv: list[str]) -> None:
    """Print one line per command: floor, ours, the ratio (and its rounds' range), the target."""
    for f in measure_startup(int(argv[0]) if argv else 7):
        ok = "ok" if f["ratio"] <= TARGET else "OVER TARGET"  # type: ignore[operator]
        print(f"startup {f['name']:<7} floor {f['floor_ms']:6.0f} ms  ours {f['ours_ms']:6.0f} ms  "
              f"ratio {f['ratio']:.2f}x (rounds {f['low']:.2f} to {f['high']:.2f})  "
              f"(target <= {TARGET}x) {ok}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
