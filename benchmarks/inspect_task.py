"""The Inspect AI side of `bench_inspect`: the same workload as armbench's, through Inspect's `local` sandbox.

Run only with the python of the benchmark's own venv (`.cache/bench-inspect-venv`, where `pip install
inspect-ai` put Inspect); armbench's environment never imports this file or `inspect_ai`:

    <venv>/bin/python benchmarks/inspect_task.py <source gitdir> <sha> <trials> <lanes> <log dir> \
        <tool> <check>

`trials` samples, each in its own `local` sandbox (a fresh temp dir): the sample's `setup` script clones
the commit into it (`git init`, `git fetch <source> <sha>`, `git checkout`, the least git does for a
clone at a commit), the solver runs the tool command and the scorer runs the check command, both
through `sandbox().exec` with bash, as armbench runs them (bench_inspect passes armbench's). The model is
Inspect's built-in `mockllm/model` (no API), which the solver never calls, as armbench's command tool
calls none. `max_samples`, `max_sandboxes` and `max_subprocesses` are `lanes`.

Prints one JSON line: the samples, how many passed, the eval's status and how long the `eval` call
took (the command less the interpreter's start and the imports).
"""

from __future__ import annotations

import json
import shlex
import sys
import time

from inspect_ai import Task, eval, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.util import sandbox


def clone_script(source: str, sha: str) -> str:
    """The sample's setup: clone the commit into the sandbox's directory (its working dir)."""
    src, commit = shlex.quote(source), shlex.quote(sha)
    return ("#!/bin/bash\nset -e\n"
            "git init -q --template= .\n"
            f"git fetch -q --no-tags --no-write-fetch-head {src} {commit}\n"
            f"git -c advice.detachedHead=false checkout -q {commit}\n")


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
def touch_file(source: str, sha: str, trials: int, tool: str, check: str) -> Task:
    """`trials` samples of one workload, each cloned fresh into its own local sandbox."""
    setup = clone_script(source, sha)
    samples = [Sample(id=i, input=tool, setup=setup) for i in range(trials)]
    return Task(dataset=samples, solver=run_tool(tool), scorer=run_check(check), sandbox="local")


def main(argv: list[str]) -> None:
    """Run the eval and print what it did as one JSON line."""
    source, sha, trials, lanes, log_dir, tool, check = argv
    began = time.perf_counter()
    [log] = eval(touch_file(source, sha, int(trials), tool, check), model="mockllm/model", log_dir=log_dir,
                 display="none", max_samples=int(lanes), max_sandboxes=int(lanes),
                 max_subprocesses=int(lanes))
    eval_ms = (time.perf_counter() - began) * 1000
    samples = log.samples or []
    passed = sum(1 for s in samples if s.scores and s.scores["run_check"].value == CORRECT)
    print(json.dumps({"status": log.status, "samples": len(samples), "passed": passed,
                      "errors": sum(1 for s in samples if s.error),
                      "eval_ms": eval_ms,
                      "version": log.eval.packages.get("inspect_ai")}))


if __name__ == "__main__":
    main(sys.argv[1:])
