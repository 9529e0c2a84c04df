"""Every benchmark, one after another: `python -m perf` from the repo root (about eight minutes
on a 2-core VM and up to nine more for bench_setup, plus up to a minute and a half the first
time to install Inspect AI into its own venv for
bench_inspect; `armbench` must be on PATH for the run figures, as `pip install -e .` leaves it).
Each module also runs alone: `python -m perf.bench_clone`, `.bench_overlay`, `.bench_run`, `.bench_ledger`,
`.bench_inspect`, `.bench_sandbox`, `.bench_startup`, `.bench_dashboard`, `.bench_scale`, `.bench_harvest`,
`.bench_strength`,
`.bench_environments`, `.bench_drivers` (about two minutes: 100 trials through the reference
external driver, twice), `.bench_setup` (about eight minutes: a `.venv` suite with `setup: each`
and `once`, on a disk and on tmpfs)."""

from __future__ import annotations

import sys

from perf import (
    bench_clone,
    bench_dashboard,
    bench_drivers,
    bench_environments,
    bench_harvest,
    bench_inspect,
    bench_ledger,
    bench_overlay,
    bench_run,
    bench_sandbox,
    bench_scale,
    bench_setup,
    bench_startup,
    bench_strength,
)


def main() -> None:
    """Print each benchmark's figures under its name."""
    for name, module in (("startup", bench_startup), ("clone", bench_clone), ("overlay", bench_overlay),
                         ("sandbox", bench_sandbox), ("environments", bench_environments),
                         ("run", bench_run),
                         ("ledger", bench_ledger), ("dashboard", bench_dashboard),
                         ("scale", bench_scale),
                         ("inspect", bench_inspect), ("harvest", bench_harvest),
                         ("strength", bench_strength), ("setup", bench_setup)):
        print(f"# {name}", flush=True)
        module.main([])
        sys.stdout.flush()
    print("# drivers", flush=True)
    bench_drivers.main(2)


if __name__ == "__main__":
    main()
