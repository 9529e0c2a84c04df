"""armbench against Inspect AI's `local` sandbox on the same workload, in paired rounds.

Run from the repo root: `python -m perf.bench_inspect [rounds]` (3 timed rounds by default,
after one untimed round that checks both sides did the work; needs `armbench` on PATH, as
`pip install -e .` leaves it). The first run creates Inspect's own venv,
`.cache/bench-inspect-venv` (`ARMBENCH_INSPECT_VENV` to choose), and installs `inspect-ai` into it
from PyPI (`ARMBENCH_INSPECT_SPEC`, default the version measured in perf/README.md).
armbench's environment never imports `inspect_ai`: Inspect runs in a subprocess with that venv's
python, on `perf/inspect_task.py`.

The workload: 40 trials of a 2,000-file, 50-commit repo (bench_clone's), each in a fresh clone of
the same commit, a tool that touches a file, a check that tests for it (and for a file of the
clone), 4 lanes.

- armbench: a real suite run the way bench_run builds one (a team repo, `armbench init`, `pull`,
  then `armbench run --sandbox` timed): 4 tasks (all alike) x 1 arm x 10 repetitions, the most a
  suite allows, a command tool `touch .bench-done`, `parallel: 4` and `workflows.max_parallel: 4`,
  with whatever isolation armbench does by default (the bubblewrap sandbox). A trial's clone is
  armbench's default too: as root, an overlay over the commit's pristine tree (checked out once
  per run; `edge.overlay`), which copies no file; otherwise (or with `ARMBENCH_OVERLAYS=0`)
  `edge.gitclone`'s: the commit fetched once per run (`fetch_commit`), then per clone that git
  dir copied and the commit checked out (`make_isolated_clone(..., template=)`).
- Inspect: one `inspect_ai.eval` of 40 samples with `sandbox="local"` (a temp dir per sample),
  cloned the same way: the commit fetched once before the eval (same git commands), each sample's
  `setup` copies that git dir into its sandbox and checks the commit out; the solver runs the tool
  with `sandbox().exec`, the scorer runs the check the same way; model `mockllm/model`, never
  called; `max_samples` and `max_subprocesses` 4. `max_sandboxes` is not set: with it Inspect
  sleeps a random 0 to 1 s before each sample (`inspect_ai/_eval/task/sandbox.py`,
  `sandboxenv_context`), which is not its work; `max_samples` keeps it to 4 sandboxes at once.

What still differs: as root, armbench's trial clone is an overlay (no file copied), where
Inspect's `local` sandbox has no such thing and checks each sample's clone out (with
`ARMBENCH_OVERLAYS=0` both check out); and work armbench does that Inspect's side does not:
armbench checks each of the 4 tasks once at its starting commit (the baseline: 4 more clones and
checks); runs every step (setup, tool, check) in bubblewrap with credentials withheld; stamps and
restores `protect` (one file here); gives the check a fresh git dir (one more copy of the fetched
one); and writes its ledger (every step leased and reported), record and table. Inspect writes its
`.eval` log and sample buffer.
Neither side calls a model; Inspect's Docker sandbox is not measured.

Both sides' TMPDIR is a folder inside the workload, so the clones of both go to the same file
system. One run measures each folder of `locations()` (a disk folder, `/var/tmp`, and tmpfs,
`/dev/shm`; `ARMBENCH_INSPECT_DIRS` to choose), every round visiting each: clones on ext4 cost
creating 2,000 files each, on tmpfs almost nothing. Each round runs both commands back to back,
which goes first alternating; the figure is, per folder, the median over rounds of that round's
armbench wall time / Inspect wall time, each the whole command (interpreter start and imports
included). Every round checks that both sides report 40 passes, and fails loudly otherwise.
Target (issue 25): at most 0.4x on a disk file system; the tmpfs figure is informative.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

from perf.bench_clone import build_repo
from perf.bench_run import _at, _checkout, _env, _events, _sh, _team

__all__ = ["inspect_python", "measure_inspect", "prepare", "run_armbench", "run_inspect"]

TARGET = 0.4  # issue 25: on a disk file system (ext4)
MEMORY_FILE_SYSTEMS = ("tmpfs", "ramfs")
TRIALS, LANES, ROUNDS = 40, 4, 3
MAX_REPETITIONS = 10  # a suite's most
SUITE = "bench"
TOOL = "touch .bench-done"
CHECK = "test -f .bench-done && test -f src/d00/f0000.py"  # the second file shows the clone is there
PROTECT = "['test/d01/f0001.py']"  # one file: the check reads no protected file, and Inspect has none
INSPECT_SPEC = "inspect-ai==0.3.285"
REPO = Path(__file__).resolve().parents[1]
TASK_FILE = Path(__file__).resolve().parent / "inspect_task.py"


class Workload(msgspec.Struct, frozen=True):
    """One prepared workload: the project armbench runs in, and what Inspect clones."""

    root: Path
    project: Path
    sha: str
    trials: int
    lanes: int
    tmp: Path
    """Both sides' TMPDIR: where armbench's run makes its clones and Inspect's local sandbox its
    temp dirs, on the workload's own file system."""


class Side(msgspec.Struct, frozen=True):
    """One side's run: the whole command's wall time, the run's own span, and the passes."""

    wall_ms: float
    span_ms: float
    passed: int
    trials: int
    version: str = ""


def inspect_python() -> Path:
    """The python of Inspect's own venv; (re)creates it with inspect-ai when missing or another version."""
    venv = Path(os.environ.get("ARMBENCH_INSPECT_VENV", REPO / ".cache" / "bench-inspect-venv"))
    python = venv / "bin" / "python"
    spec = os.environ.get("ARMBENCH_INSPECT_SPEC", INSPECT_SPEC)
    if python.exists():
        found = subprocess.run([python, "-c", "import inspect_ai; print(inspect_ai.__version__)"],
                               capture_output=True, text=True)
        pinned = spec.partition("==")[2]
        if found.returncode == 0 and (not pinned or found.stdout.strip() == pinned):
            return python
    print(f"installing {spec} into {venv} (once)", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    done = subprocess.run([python, "-m", "pip", "install", "-q", spec], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pip install {spec} into {venv} failed:\n{done.stderr[-3000:]}")
    return python


def prepare(root: Path, trials: int = TRIALS, lanes: int = LANES) -> Workload:
    """The repo, the member's checkout of it and a pulled team suite of `trials` trials.

    A suite repeats a task at most 10 times, so the trials are the fewest tasks (each checked once at
    its starting commit too) of up to 10 repetitions: 4 x 10 for 40.
    """
    tasks = -(-trials // MAX_REPETITIONS)
    if trials % tasks:
        raise SystemExit(f"{trials} trials do not split into {tasks} tasks of equal repetitions")
    source, sha = build_repo(root)
    project = _checkout(root, source)
    _team(root, suite=SUITE, tool_run=json.dumps(TOOL), check=json.dumps(CHECK), sha=sha,
          reps=trials // tasks, parallel=lanes, tasks=tasks, protect=PROTECT)
    env = _env(root / "home")
    _sh(_armbench(), "init", "--team", "../team", cwd=project, env=env)
    config = project / ".armbench" / "config.yaml"
    config.write_text(config.read_text() + f"workflows:\n  max_parallel: {lanes}\n")
    pulled = msgspec.json.decode(_sh(_armbench(), "pull", cwd=project, env=env))["data"]["pull"]
    if pulled["rejected"]:
        raise SystemExit(f"armbench pull rejected the benchmark's suite: {pulled['diagnostics']}")
    tmp = root / "tmp"
    tmp.mkdir()
    return Workload(root=root, project=project, sha=sha, trials=trials, lanes=lanes, tmp=tmp)


def _armbench() -> str:
    beside = Path(sys.executable).parent / "armbench"
    return str(beside) if beside.exists() else (shutil.which("armbench") or "armbench")


def run_armbench(w: Workload) -> Side:
    """One `armbench run` of the suite: its wall time, first lease to last check, trial passes."""
    began = time.perf_counter()
    out = _sh(_armbench(), "run", SUITE, "--sandbox", cwd=w.project,
              env={**_env(w.root / "home"), "TMPDIR": str(w.tmp)})
    wall_ms = (time.perf_counter() - began) * 1000
    run = msgspec.json.decode(out.splitlines()[-1])["data"]["done"]["run"]
    events = _events(w.project, run)
    checks = [e for e in events if e["type"] == "CheckRan" and e["kind"] == "trial"]
    starts = [_at(e) for e in events if e["type"] == "StepLeased" and e["step"].endswith(".prompt")]
    ends = [_at(e) for e in events if e["type"] == "StepReported" and e["step"].endswith(".check")]
    span_ms = (max(ends) - min(starts)) * 1000 if starts and ends else 0.0
    return Side(wall_ms=wall_ms, span_ms=span_ms, passed=sum(1 for e in checks if e["result"] == "passed"),
                trials=len(checks))


def run_inspect(w: Workload, python: Path, tag: str) -> Side:
    """One Inspect eval of the same workload: its wall time, the `eval` call's, sample passes."""
    logs = w.root / f"inspect-logs-{tag}"
    env = {**os.environ, "TMPDIR": str(w.tmp)}
    args = [str(python), str(TASK_FILE), str(w.project / ".git"), w.sha, str(w.trials), str(w.lanes),
            str(logs), TOOL, CHECK]
    began = time.perf_counter()
    done = subprocess.run(args, cwd=w.root, env=env, capture_output=True, text=True)
    wall_ms = (time.perf_counter() - began) * 1000
    if done.returncode != 0:
        raise SystemExit(f"Inspect's eval failed:\n{done.stderr[-3000:]}{done.stdout[-3000:]}")
    got = json.loads(done.stdout.splitlines()[-1])
    if got["status"] != "success":
        raise SystemExit(f"Inspect's eval ended {got['status']}: {got}")
    shutil.rmtree(logs, ignore_errors=True)
    return Side(wall_ms=wall_ms, span_ms=got["eval_ms"], passed=got["passed"], trials=got["samples"],
                version=got["version"])


def _verified(name: str, side: Side, trials: int) -> Side:
    if side.trials != trials or side.passed != trials:
        raise SystemExit(f"{name} did not do the work: {side.passed} of {side.trials} trials passed, "
                         f"{trials} expected")
    return side


def file_system(path: str) -> str:
    """The type of the file system holding `path` (`ext4`, `tmpfs`, ...), from /proc/mounts."""
    real, best, kind = os.path.realpath(path), "", "unknown"
    with open("/proc/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            point = fields[1].replace("\\040", " ")
            if (real == point or real.startswith(point.rstrip("/") + "/")) and len(point) >= len(best):
                best, kind = point, fields[2]
    return kind


def locations() -> list[str]:
    """Where the workload is measured, each in the same run: a disk folder (`/var/tmp`, ext4 here)
    and tmpfs (`/dev/shm`) when there is one; `ARMBENCH_INSPECT_DIRS` (comma-separated) to choose."""
    chosen = os.environ.get("ARMBENCH_INSPECT_DIRS")
    if chosen:
        return [d for d in chosen.split(",") if d]
    return ["/var/tmp", *(["/dev/shm"] if os.path.isdir("/dev/shm") else [])]


def measure_inspect(rounds: int = ROUNDS, trials: int = TRIALS, lanes: int = LANES,
                    dirs: list[str] | None = None) -> list[dict[str, object]]:
    """Per folder, the median over paired rounds of armbench's wall time / Inspect's, after a
    checked warm-up round. Every round visits every folder, both sides back to back in each."""
    python = inspect_python()
    dirs = dirs or locations()
    with contextlib.ExitStack() as stack:
        temps = [stack.enter_context(tempfile.TemporaryDirectory(prefix="armbench-bench-inspect-", dir=d))
                 for d in dirs]
        loads = [prepare(Path(t), trials, lanes) for t in temps]
        times: list[dict[str, list[Side]]] = [{"armbench": [], "inspect": []} for _ in dirs]
        for r in range(rounds + 1):  # round 0 warms both up and is not timed
            for w, timed in zip(loads, times, strict=True):
                for name in (["armbench", "inspect"] if r % 2 else ["inspect", "armbench"]):
                    os.sync()
                    ran = run_armbench(w) if name == "armbench" else run_inspect(w, python, str(r))
                    side = _verified(name, ran, trials)
                    if r:
                        timed[name].append(side)
    return [_figure(d, t, rounds, trials, lanes) for d, t in zip(dirs, times, strict=True)]


def _figure(folder: str, times: dict[str, list[Side]], rounds: int, trials: int,
            lanes: int) -> dict[str, object]:
    ratios = [a.wall_ms / i.wall_ms for a, i in zip(times["armbench"], times["inspect"], strict=True)]
    spans = [a.span_ms / i.span_ms for a, i in zip(times["armbench"], times["inspect"], strict=True)]

    def per_trial(name: str, field: str) -> float:
        return statistics.median(getattr(s, field) for s in times[name]) / trials

    return {"name": "vs-inspect", "folder": folder, "file_system": file_system(folder),
            "inspect_version": times["inspect"][0].version, "trials": trials,
            "lanes": lanes, "rounds": rounds,
            "armbench_ms_per_trial": per_trial("armbench", "wall_ms"),
            "inspect_ms_per_trial": per_trial("inspect", "wall_ms"),
            "ratio": statistics.median(ratios), "ratios": ratios,
            "armbench_span_ms_per_trial": per_trial("armbench", "span_ms"),
            "inspect_span_ms_per_trial": per_trial("inspect", "span_ms"),
            "span_ratio": statistics.median(spans), "span_ratios": spans, "target": TARGET}


def _lines(f: dict[str, object]) -> list[str]:
    if f["file_system"] in MEMORY_FILE_SYSTEMS:
        verdict = "informative: the target is on a disk file system"
    else:
        verdict = "ok" if f["ratio"] <= f["target"] else "OVER TARGET"  # type: ignore[operator]
    spread = ", ".join(f"{r:.2f}" for r in f["ratios"])  # type: ignore[attr-defined]
    spans = ", ".join(f"{r:.2f}" for r in f["span_ratios"])  # type: ignore[attr-defined]
    return [
        f"vs-inspect on {f['file_system']} ({f['folder']})  "
        f"inspect {f['inspect_ms_per_trial']:7.1f} ms/trial  "
        f"armbench {f['armbench_ms_per_trial']:7.1f} ms/trial  ratio {f['ratio']:.2f}x  "
        f"(target <= {f['target']}x) {verdict}",
        f"  {f['trials']} trials, {f['lanes']} lanes, inspect-ai {f['inspect_version']}, whole commands;"
        f" rounds: {spread}",
        f"  informative, without start-up (armbench first lease to last check, Inspect's fetch and eval() "
        f"call): inspect {f['inspect_span_ms_per_trial']:.1f} ms/trial, armbench "
        f"{f['armbench_span_ms_per_trial']:.1f} ms/trial, ratio {f['span_ratio']:.2f}x; rounds: {spans}",
    ]


def main(argv: list[str]) -> None:
    """Print the figure, its rounds and the informative in-run figure."""
    began = time.perf_counter()
    rounds = int(argv[0]) if argv else ROUNDS
    for figure in measure_inspect(rounds):
        for line in _lines(figure):
            print(line, flush=True)
    print(f"({time.perf_counter() - began:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
