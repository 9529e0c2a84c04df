"""The composition root: the one place that wires the edge into the engine and the host."""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

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
from ledger.storefaults import require_room
from ledger.urls import is_postgres
from projections.text import printable

__all__ = ["App", "clock", "compose", "new_id", "progress"]


def clock() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


def new_id(prefix: str) -> str:
    """A fresh id: `r` for runs, `l` for leases."""
    return prefix + secrets.token_hex(8 if prefix == "r" else 6)


def progress(message: str) -> None:
    """A line for people, on stderr (control characters from a team file or a tool escaped)."""
    print(printable(message), file=sys.stderr, flush=True)


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


Access = Literal["read", "write", "run"]
"""What a command does with the ledger: only reads it (a read-only ledger or a full disk is
opened read-only), writes it, or also starts trials (its work folder needs room too)."""


def compose(cwd: Path | None = None, *, make_key: bool = True, access: Access = "write") -> App:
    """Wire the checkout's ledger (keyed with the ledger key, made on first use unless
    `make_key` is False: verify never makes one), the benchmark host and the engine.

    A ledger that is empty while records of its runs exist is refused; so is a full disk under
    the ledger or, for `run`, under the work folder, before anything is written."""
    checkout = find_checkout(cwd or Path.cwd())
    config = load_config(checkout)
    keys = key_file()
    key = load_key(keys, create=make_key)
    ledger = checkout.ledger_location(config)
    witnesses = [] if is_postgres(ledger) else _records(checkout.runs_dir(config))
    if access == "read":
        store = EventStore.for_reading(ledger, key=key, witnesses=witnesses)
    else:
        store = EventStore(ledger, key=key, witnesses=witnesses)
    if access == "run":
        require_room(Path(tempfile.gettempdir()), "the work folder (TMPDIR)")
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


def _records(runs: Path) -> list[Path]:
    """The records under the runs folder: a ledger that lost its runs must not pass as new."""
    try:
        return sorted(runs.glob("*/benchmark.json"))
    except OSError:
        return []
