"""The composition root: the one place that wires the edge into the engine and the host."""

from __future__ import annotations

import os
import secrets
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmark.host import BenchmarkHost
from edge.config import Checkout, ProjectConfig, armbench_home, find_checkout, load_config
from edge.gitclone import CommitCache
from engine.service import Engine
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


def compose(cwd: Path | None = None) -> App:
    """Wire the checkout's ledger, the benchmark host and the engine."""
    checkout = find_checkout(cwd or Path.cwd())
    config = load_config(checkout)
    store = EventStore(checkout.ledger_path(config))
    cache = CommitCache(armbench_home() / "cache" / "commits")
    host = BenchmarkHost(store=store, checkout=checkout, config=config, cache=cache,
                         clock=clock, progress=progress)
    ttl = timedelta(seconds=float(os.environ.get("ARMBENCH_LEASE_TTL", "60")))
    engine = Engine(store, host, clock=clock, new_id=new_id, ttl=ttl)
    return App(checkout=checkout, config=config, store=store, host=host, engine=engine)
