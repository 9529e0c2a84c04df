"""What the sandbox costs one step: `true` through `edge.proc.run_step` in bubblewrap, against the
same step without a sandbox, in paired rounds that alternate the order.

Run from the repo root: `python -m perf.bench_sandbox [rounds]`. Each round starts STEPS
steps each way in a room like a trial's (a clone folder, a private home and /tmp) with the
sandbox a run uses (armbench's own folders hidden), and the figure is the median over rounds of
the per-step difference (ms) and ratio. Two more ways are timed in the same rounds: a sandboxed
step in its own limits' group (`edge.limits`: setup and the check), and a tool step as a run
starts it by default (its limits and a private network, `edge.usernet`). The whole trial's cost
with the sandbox on is `bench_run`'s per-trial figure (armbench's own work against the plain
clone floor, target 1.5x).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from armbench.edge import usernet
from armbench.edge.proc import run_step
from armbench.edge.sandbox import Network, Room, Sandbox, for_checkout, probe

__all__ = ["measure_step"]

STEPS, ROUNDS = 20, 7


WAYS = ("plain", "sandbox", "limited", "tool")
"""plain: no sandbox; sandbox: bubblewrap alone (the host's network, no limits); limited: with its
limits' group (setup, the check); tool: with its limits and a private network (a tool step)."""


def _steps(room: Room, sandbox: Sandbox, way: str) -> float:
    """Seconds for STEPS runs of `true`, the given way."""
    env = dict(os.environ)
    network: Network = "private" if way == "tool" else "host"
    started = time.perf_counter()
    for _ in range(STEPS):
        if way == "plain":
            done = run_step("true", cwd=room.clone, env=env)
        else:
            launch = sandbox.launch(room, network=network)
            done = run_step("true", cwd=launch.cwd, env={**env, **launch.env}, sandbox=launch.argv,
                            limits=launch.limits if way != "sandbox" else None, net=launch.net)
        if done.cause != "ok":
            raise SystemExit(f"a step did not run: {done.cause} {done.stderr_tail!r}")
    return time.perf_counter() - started


def measure_step(rounds: int = ROUNDS) -> dict[str, float | list[float]]:
    """Median per-step milliseconds each way, the sandbox's difference and ratio to plain, and
    the limits' and the private network's extra, over rounds that rotate the order."""
    sandbox = for_checkout(None, None)
    probe(sandbox)
    ways = [w for w in WAYS if w != "tool" or usernet.available()]
    with tempfile.TemporaryDirectory(prefix="armbench-bench-sandbox-") as temp:
        room = Room.of(Path(temp) / "clones" / "c")
        room.clone.mkdir(parents=True)
        room.make()
        for way in ways:  # warm each
            _steps(room, sandbox, way)
        ms: dict[str, list[float]] = {w: [] for w in ways}
        for r in range(rounds):
            for way in ways[r % len(ways):] + ways[:r % len(ways)]:
                ms[way].append(_steps(room, sandbox, way) * 1000 / STEPS)
    ratios = [b / p for b, p in zip(ms["sandbox"], ms["plain"], strict=True)]
    found: dict[str, float | list[float]] = {f"{w}_ms": statistics.median(ms[w]) for w in ways}
    found |= {"extra_ms": _extra(ms["sandbox"], ms["plain"]), "ratio": statistics.median(ratios),
              "ratios": ratios, "limits_ms": _extra(ms["limited"], ms["sandbox"])}
    if "tool" in ms:
        found["network_ms"] = _extra(ms["tool"], ms["limited"])
    return found


def _extra(more: list[float], less: list[float]) -> float:
    """The median per-round difference."""
    return statistics.median(a - b for a, b in zip(more, less, strict=True))


def main(argv: list[str]) -> None:
    rounds = int(argv[0]) if argv else ROUNDS
    f = measure_step(rounds)
    spread = ", ".join(f"{r:.2f}" for r in f["ratios"])  # type: ignore[union-attr]
    print(f"sandbox-step: {f['sandbox_ms']:.1f} ms sandboxed against {f['plain_ms']:.1f} ms plain "
          f"(+{f['extra_ms']:.1f} ms, {f['ratio']:.2f}x; rounds {spread}); its limits' group "
          f"+{f['limits_ms']:.1f} ms ({f['limited_ms']:.1f} ms)", flush=True)
    if "tool_ms" in f:
        print(f"sandbox-tool-step: {f['tool_ms']:.1f} ms with its limits and a private network "
              f"(the network +{f['network_ms']:.1f} ms); informative: the trial's figure is "
              "bench_run's per-trial", flush=True)
    else:
        print("sandbox-tool-step: no private network can be made here (edge.usernet.available); "
              "informative: the trial's figure is bench_run's per-trial", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
