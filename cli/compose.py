"""The composition root: the one place that wires the edge into the engine and the host."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from armbench.cli.output import clock, new_id, progress
from armbench.edge.config import Checkout, ProjectConfig, find_checkout, load_config
from armbench.edge.ledgerkey import key_file, key_for_writing, load_key
from armbench.ledger.errors import Refusal
from armbench.ledger.store import EventStore
from armbench.ledger.storefaults import require_room
from armbench.ledger.urls import is_postgres

if TYPE_CHECKING:  # the host and the engine are imported when a command first uses them
    from armbench.benchmark.agents.base import ToolAdapter
    from armbench.benchmark.host import BenchmarkHost
    from armbench.cli.live import Live, Mode
    from armbench.edge.gitclone import CommitCache
    from armbench.edge.sandbox import Sandbox
    from armbench.engine.service import Engine

__all__ = ["App", "compose", "try_sandbox"]


@dataclass
class App:
    """Everything a command needs, wired once. The host and the engine are built (and their
    modules imported) the first time a command asks for them: a command that only reads the
    ledger starts without them (`armbench runs`, `verify`; see perf/bench_startup.py)."""

    checkout: Checkout
    config: ProjectConfig
    store: EventStore
    key_file: Path
    """Where the ledger key is (or would be)."""
    snapshot_every: int | None = None
    """Events between the engine's snapshots when `ARMBENCH_SNAPSHOT_EVERY` is unset (None: the
    engine's `EVERY`)."""
    live: Live | None = None
    """The run's progress on stderr (`run`, `resume`, `work`), when the command shows it."""

    @property
    def progress(self) -> Callable[[str], None]:
        """The progress sink: the live display's, else plain lines on stderr."""
        return self.live.say if self.live is not None else progress

    @cached_property
    def sandbox(self) -> Sandbox:
        """The sandbox every trial step starts in, as the project configures it."""
        from armbench.edge import pycache
        from armbench.edge.sandbox import for_checkout

        return dataclasses.replace(for_checkout(self.checkout, self.config), pycache=pycache.seed())

    @cached_property
    def tools(self) -> Callable[[str], Mapping[str, ToolAdapter]]:
        """`tools(run)`: the run's tools (the agents of its arms, its judge, the team's command
        tools at its team revision), the same for the host's judge steps and every driver."""
        from armbench.benchmark.runtools import run_tools

        return run_tools(self.store, self.checkout, self.sandbox)

    @cached_property
    def host(self) -> BenchmarkHost:
        """The benchmark host: trials, checks and reports on this machine."""
        from armbench.benchmark.host import BenchmarkHost

        return BenchmarkHost(store=self.store, checkout=self.checkout, config=self.config,
                             cache=_commit_cache, clock=clock, progress=self.progress,
                             sandbox=self.sandbox, tools=self.tools)

    @cached_property
    def engine(self) -> Engine:
        """The engine over the store and the host, with the limits the environment sets."""
        from armbench.aggregates.workflow import MAX_ATTEMPTS
        from armbench.engine import snapshots
        from armbench.engine.service import Engine

        ttl = timedelta(seconds=_env_number("ARMBENCH_LEASE_TTL", lambda: 60.0, "seconds"))
        every = int(_env_number("ARMBENCH_SNAPSHOT_EVERY",
                                lambda: self.snapshot_every or snapshots.EVERY, "events"))
        attempts = int(_env_number("ARMBENCH_MAX_ATTEMPTS", lambda: MAX_ATTEMPTS, "attempts"))
        return Engine(self.store, self.host, clock=clock, new_id=new_id, ttl=ttl,
                      snapshot_every=every, max_attempts=attempts)


def _commit_cache() -> CommitCache:
    """The commit cache trials are cloned from (git is imported only by a verb that clones)."""
    from armbench.edge.config import armbench_home
    from armbench.edge.gitclone import CommitCache

    return CommitCache(armbench_home() / "cache" / "commits", notify=progress)


def _env_number(name: str, default: Callable[[], float], unit: str) -> float:
    """A positive number from the environment, or a refusal that says what was wrong (the
    default is asked for only when it is used or named)."""
    raw = os.environ.get(name)
    if raw is None:
        return default()
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise Refusal(f"{name} is {raw!r}; expected a positive number of {unit} (unset it for "
                      f"the default, {default():g}).", code="bad_environment")
    return value


def _tuning_checked() -> None:
    """Every command refuses a tuning variable that is set wrong, even one it does not use (so a
    mistake shows at the first command, not at the next run); the engine's modules, whose
    defaults the message names, are imported only then."""
    def snapshot_every() -> float:
        from armbench.engine import snapshots
        return snapshots.EVERY

    def max_attempts() -> float:
        from armbench.aggregates.workflow import MAX_ATTEMPTS
        return MAX_ATTEMPTS

    _env_number("ARMBENCH_LEASE_TTL", lambda: 60.0, "seconds")
    for name, default, unit in (("ARMBENCH_SNAPSHOT_EVERY", snapshot_every, "events"),
                                ("ARMBENCH_MAX_ATTEMPTS", max_attempts, "attempts")):
        if name in os.environ:
            _env_number(name, default, unit)


Access = Literal["read", "write", "run"]
"""What a command does with the ledger: only reads it (a read-only ledger or a full disk is
opened read-only), writes it, or also starts trials (its work folder needs room too)."""


def compose(cwd: Path | None = None, *, access: Access = "write",
            snapshot_every: int | None = None, live: Mode | None = None) -> App:
    """Wire the checkout's ledger (a command that writes chains with the ledger's key, refused
    when the key here is missing or another, made only for a ledger that has none; a command
    that only reads never makes one), the benchmark host and the engine (with
    `snapshot_every` as its default, for a process that works one step of a run), the run's
    tools, and the progress sink (a live display of the run in `live` mode, when given).

    A ledger that is empty while records of its runs exist is refused; so is a full disk under
    the ledger or, for `run`, under the work folder, before anything is written."""
    _tuning_checked()
    checkout = find_checkout(cwd or Path.cwd())
    config = load_config(checkout)
    keys = key_file()
    ledger = checkout.ledger_location(config)
    witnesses = [] if is_postgres(ledger) else _records(checkout.runs_dir(config))
    if access == "read":  # a command that only reads never makes a key
        store = EventStore.for_reading(ledger, key=load_key(keys, create=False),
                                       witnesses=witnesses)
    else:
        store = _keyed(EventStore(ledger, witnesses=witnesses), keys)
    if access == "run":
        require_room(Path(tempfile.gettempdir()), "the work folder (TMPDIR)")
        from armbench.benchmark.trials.workfolder import usable_work_base

        usable_work_base()
    shown = None
    if live is not None:
        from armbench.cli.live import Live

        shown = Live(store, clock, live)
    app = App(checkout=checkout, config=config, store=store, key_file=keys,
              snapshot_every=snapshot_every, live=shown)
    if access != "read":
        app.engine  # noqa: B018 - a bad limit in the environment is refused before any work
    return app


def _keyed(store: EventStore, keys: Path) -> EventStore:
    """The store, chaining with the ledger's own key (made only for a ledger that has none);
    a key that is missing or another is refused before anything is written."""
    try:
        store.chain_with(key_for_writing(store, keys))
    except BaseException:
        store.close()
        raise
    return store


def _records(runs: Path) -> list[Path]:
    """The records under the runs folder: a ledger that lost its runs must not pass as new."""
    try:
        return sorted(runs.glob("*/benchmark.json"))
    except OSError:
        return []


def try_sandbox(cwd: Path) -> Sandbox:
    """The sandbox `armbench try` runs a task's setup and check in: the checkout's config where
    there is one (a try needs no `init`)."""
    from armbench.edge.sandbox import for_checkout

    try:
        checkout: Checkout | None = find_checkout(cwd)
    except Refusal:
        checkout = None
    config = None
    if checkout is not None and checkout.config_file.exists():
        try:
            config = load_config(checkout)
        except Refusal:
            config = None
    return dataclasses.replace(for_checkout(checkout, config), agent_tree=False)  # no agent wrote it
