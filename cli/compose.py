"""The composition root: the one place that wires the edge into the engine and the host."""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from aggregates.workflow import MAX_ATTEMPTS
from benchmark.host import BenchmarkHost
from edge.config import Checkout, ProjectConfig, armbench_home, find_checkout, load_config
from edge.gitclone import CommitCache
from edge.ledgerkey import key_file, load_key
from edge.sandbox import for_checkout
from engine import snapshots
from engine.service import Engine
from ledger.errors import Refusal
from ledger.store import EventStore

__all__ = ["App", "clock", "compose", "new_id", "progress"]


def clock() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """A fresh id: `r` for runs, `l` for leases."""
    return prefix + secrets.token_hex(8 if prefix == "r" else 6)


def progress(message: str) -> None:
    """A line for people, on stderr."""
    print(message, file=sys.stderr, flush=True)


@dataclass
class App:
    """Everything a command needs, wired once."""

    checkout: Checkout
    config: ProjectConfig
    store: EventStore
    host: BenchmarkHost
    engine: Engine
    key_file: Path
    """Where the ledger key is (or would be)."""


def _env_number(name: str, default: float, unit: str) -> float:
    """A positive number from the environment, or a refusal that says what was wrong."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise Refusal(f"{name} is {raw!r}; expected a positive number of {unit} (unset it for "
                      f"the default, {default:g}).", code="bad_environment")
    return value


def compose(cwd: Path | None = None, *, make_key: bool = True) -> App:
    """Wire the checkout's ledger (keyed with the ledger key, made on first use unless
    `make_key` is False: verify never makes one), the benchmark host and the engine."""
    checkout = find_checkout(cwd or Path.cwd())
    config = load_config(checkout)
    keys = key_file()
    store = EventStore(checkout.ledger_path(config), key=load_key(keys, create=make_key))
    cache = CommitCache(armbench_home() / "cache" / "commits", notify=progress)
    host = BenchmarkHost(store=store, checkout=checkout, config=config, cache=cache,
                         clock=clock, progress=progress, sandbox=for_checkout(checkout, config))
    ttl = timedelta(seconds=_env_number("ARMBENCH_LEASE_TTL", 60.0, "seconds"))
    every = int(_env_number("ARMBENCH_SNAPSHOT_EVERY", snapshots.EVERY, "events"))
    attempts = int(_env_number("ARMBENCH_MAX_ATTEMPTS", MAX_ATTEMPTS, "attempts"))
    engine = Engine(store, host, clock=clock, new_id=new_id, ttl=ttl, snapshot_every=every,
                    max_attempts=attempts)
    return App(checkout=checkout, config=config, store=store, host=host, engine=engine,
               key_file=keys)
