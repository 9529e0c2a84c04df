"""Every benchmark, one after another: `python -m benchmarks` from the repo root (about a minute
and a half on a 2-core VM; `armbench` must be on PATH for the run figures, as `pip install -e .`
leaves it). Each module also runs alone: `python -m benchmarks.bench_clone`, `.bench_run`,
`.bench_ledger`."""

from __future__ import annotations

import sys

from benchmarks import bench_clone, bench_ledger, bench_run


def main() -> None:
    """Print each benchmark's figures under its name."""
    for name, module in (("clone", bench_clone), ("run", bench_run), ("ledger", bench_ledger)):
        print(f"# {name}", flush=True)
        module.main([])
        sys.stdout.flush()


if __name__ == "__main__":
    main()
