"""What the sandbox costs one step: `true` through `edge.proc.run_step` in bubblewrap, against the
same step without a sandbox, in paired rounds that alternate the order.

Run from the repo root: `python -m benchmarks.bench_sandbox [rounds]`. Each round starts STEPS
steps each way in a room like a trial's (a clone folder, a private home and /tmp) with the
sandbox a run uses (armbench's own folders hidden), and the figure is the median over rounds of
the per-step difference (ms) and ratio. The whole trial's cost with the sandbox on is
`bench_run`'s per-trial figure (armbench's own work against the plain clone floor, target 1.5x).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from edge.proc import run_step
from edge.sandbox import Room, Sandbox, for_checkout, probe

__all__ = ["measure_step"]

STEPS, ROUNDS = 20, 7


def _steps(room: Room, sandbox: Sandbox | None) -> float:
    """Seconds for STEPS runs of `true`, sandboxed or not."""
    env = dict(os.environ)
    started = time.perf_counter()
    for _ in range(STEPS):
        if sandbox is None:
            done = run_step("true", cwd=room.clone, env=env)
        else:
            launch = sandbox.launch(room)
            done = run_step("true", cwd=launch.cwd, env={**env, **launch.env}, sandbox=launch.argv)
        if done.cause != "ok":
            raise SystemExit(f"a step did not run: {done.cause} {done.stderr_tail!r}")
    return time.perf_counter() - started


def measure_step(rounds: int = ROUNDS) -> dict[str, float | list[float]]:
    """Median per-step milliseconds each way, their difference, and the ratio, over paired rounds."""
    sandbox = for_checkout(None, None)
    probe(sandbox)
    with tempfile.TemporaryDirectory(prefix="armbench-bench-sandbox-") as temp:
        room = Room.of(Path(temp) / "clones" / "c")
        room.clone.mkdir(parents=True)
        room.make()
        _steps(room, sandbox), _steps(room, None)  # warm both
        plain_ms: list[float] = []
        boxed_ms: list[float] = []
        for r in range(rounds):
            order = [sandbox, None] if r % 2 else [None, sandbox]
            for which in order:
                ms = _steps(room, which) * 1000 / STEPS
                (plain_ms if which is None else boxed_ms).append(ms)
    ratios = [b / p for b, p in zip(boxed_ms, plain_ms, strict=True)]
    return {"plain_ms": statistics.median(plain_ms), "sandbox_ms": statistics.median(boxed_ms),
            "extra_ms": statistics.median(b - p for b, p in zip(boxed_ms, plain_ms, strict=True)),
            "ratio": statistics.median(ratios), "ratios": ratios}


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv else ROUNDS
    f = measure_step(rounds)
    spread = ", ".join(f"{r:.2f}" for r in f["ratios"])  # type: ignore[union-attr]
    print(f"sandbox-step: {f['sandbox_ms']:.1f} ms sandboxed against {f['plain_ms']:.1f} ms plain "
          f"(+{f['extra_ms']:.1f} ms, {f['ratio']:.2f}x; rounds {spread}); informative: the "
          "trial's figure is bench_run's per-trial", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
