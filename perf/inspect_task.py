"""The Inspect AI side of `bench_inspect`: the same workload as armbench's, through Inspect's `local` sandbox.

Run only with the python of the benchmark's own venv (`.cache/bench-inspect-venv`, where `pip install
inspect-ai` put Inspect); armbench's environment never imports this file or `inspect_ai`:

    <venv>/bin/python perf/inspect_task.py <source gitdir> <sha> <trials> <lanes> <log dir> \
        <tool> <check>

`trials` samples, each in its own `local` sandbox (a fresh temp dir under `$TMPDIR`). The clone is
made the way armbench makes a trial's (`edge.gitclone`: `fetch_commit` once per commit, then
`make_isolated_clone(..., template=)` per trial): before the eval, the commit and its ancestors are
fetched once into a git dir (`git init --template=`, `git fetch <source> <sha>`, hooks off); each
sample's `setup` script copies that git dir into its sandbox as `.git` and checks the commit out on
a branch of its own. The solver runs the tool command and the scorer runs the check command, both
through `sandbox().exec` with bash, as armbench runs them (bench_inspect passes armbench's). The model
is Inspect's built-in `mockllm/model` (no API), which the solver never calls, as armbench's command
tool calls none. `max_samples` and `max_subprocesses` are `lanes`; `max_sandboxes` is not set (the
`local` sandbox has no default limit), since setting it makes Inspect sleep a random 0 to 1 s before
each sample (`inspect_ai/_eval/task/sandbox.py`, `sandboxenv_context`): `max_samples` bounds the
sandboxes alive at once to `lanes` all the same.

Prints one JSON line: the samples, how many passed, the eval's status and how long the one fetch
and the `eval` call took (the command less the interpreter's start and the imports).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import sandbox

BRANCH = "armbench-trial"
GIT = ["git", "-c", f"core.hooksPath={os.devnull}"]
FETCH = ["fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance",
         "-q"]


def fetch_once(source: str, sha: str, dest: Path) -> None:
    """The git dir every sample's clone is copied from, as armbench's `fetch_commit` makes it: a new
    repository, hooks off, holding the commit and its ancestors fetched from `source`, no refs."""
    work = dest.parent / "work"
    subprocess.run([*GIT, "init", "--template=", "-q", "-b", BRANCH, str(work)], check=True)
    with (work / ".git" / "config").open("a") as config:
        config.write("[core]\n\thooksPath = /dev/null\n")
    subprocess.run([*GIT, "-c", "protocol.version=2", *FETCH, source, sha], cwd=work, check=True)
    (work / ".git").rename(dest)
    work.rmdir()


def clone_script(template: str, sha: str) -> str:
    """The sample's setup, as armbench's `make_isolated_clone(..., template=)`: copy the fetched git
    dir into the sandbox's directory (its working dir) and check the commit out on a branch."""
    src, commit = shlex.quote(template), shlex.quote(sha)
    return ("#!/bin/bash\nset -e\n"
            f"cp -R {src} .git\n"
            f"git -c core.hooksPath=/dev/null -c advice.detachedHead=false -c core.attributesFile=/dev/null "
            f"checkout -q -B {BRANCH} {commit}\n")


@solver
def run_tool(command: str):  # type: ignore[no-untyped-def]
    """The tool: run the command in the sample's sandbox, as armbench's command tool does."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        done = await sandbox().exec(["bash", "-c", command])
        if not done.success:
            raise RuntimeError(f"the tool failed: {done.stderr}")
        return state

    return solve


@scorer(metrics=[accuracy()])
def run_check(command: str):  # type: ignore[no-untyped-def]
    """The check: pass when the command exits 0 in the sample's sandbox."""

    async def score(state: TaskState, target: Target) -> Score:
        done = await sandbox().exec(["bash", "-c", command])
        return Score(value=CORRECT if done.success else INCORRECT)

    return score


@task
def touch_file(template: str, sha: str, trials: int, tool: str, check: str) -> Task:
    """`trials` samples of one workload, each cloned fresh from `template` into its own local sandbox."""
    setup = clone_script(template, sha)
    samples = [Sample(id=i, input=tool, setup=setup) for i in range(trials)]
    return Task(dataset=samples, solver=run_tool(tool), scorer=run_check(check), sandbox="local")


def main(argv: list[str]) -> None:
    """Run the eval and print what it did as one JSON line."""
    source, sha, trials, lanes, log_dir, tool, check = argv
    began = time.perf_counter()
    fetched = Path(tempfile.mkdtemp(prefix="inspect-fetched-"))
    try:
        fetch_once(source, sha, fetched / "git")
        [log] = eval(touch_file(str(fetched / "git"), sha, int(trials), tool, check), model="mockllm/model",
                     log_dir=log_dir, display="none", max_samples=int(lanes), max_subprocesses=int(lanes))
    finally:
        shutil.rmtree(fetched, ignore_errors=True)
    eval_ms = (time.perf_counter() - began) * 1000
    samples = log.samples or []
    passed = sum(1 for s in samples if s.scores and s.scores["run_check"].value == CORRECT)
    print(json.dumps({"status": log.status, "samples": len(samples), "passed": passed,
                      "errors": sum(1 for s in samples if s.error),
                      "eval_ms": eval_ms,
                      "version": log.eval.packages.get("inspect_ai")}))


if __name__ == "__main__":
    main(sys.argv[1:])
