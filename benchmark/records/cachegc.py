"""`armbench gc`'s second half: the unpacked image roots (`~/.armbench/cache/rootfs/`) that no
run the ledger keeps refers to.

A root is removed when no run that gc keeps (its evidence spared), no run under way and no run
planned but not started froze its image's digest in its plan, and no armbench process has used
it for a day (each use touches it): the cache is shared by every checkout of the member, whose
runs this ledger does not know. An unpack a process left unfinished goes after a day too. A
removed root is unpacked again from its image at its next use.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from armbench.edge.environment import cached_roots, remove_cached
from armbench.ledger.events import PlanFrozen
from armbench.ledger.store import EventStore

__all__ = ["IDLE_S", "RootsCollected", "collect_roots", "digests_in_use"]

IDLE_S = 86400.0
"""How long a cached root must have gone unused before gc may remove it."""


@dataclass(frozen=True)
class RootsCollected:
    """The cached roots gc removed (their digests; "" for an unfinished unpack) and the bytes."""

    digests: list[str]
    freed: int


def digests_in_use(ledger: EventStore, kept: Iterable[str]) -> set[str]:
    """The image digests frozen in the plans of the `kept` runs and of every run not started."""
    kept_runs = set(kept)
    started = {r.stream for r in ledger.all(topics=["RunStarted"])}
    used: set[str] = set()
    for record in ledger.all(topics=["PlanFrozen"]):
        plan = record.event
        if not isinstance(plan, PlanFrozen) or (record.stream in started
                                                and record.stream not in kept_runs):
            continue
        used.update(t.environment.digest for t in plan.tasks
                    if t.environment is not None and t.environment.kind == "image")
    return used


def collect_roots(ledger: EventStore, kept: Iterable[str], *, now: datetime,
                  idle_s: float = IDLE_S) -> RootsCollected:
    """Remove the cached roots that no kept, running or unstarted run of `ledger` uses and that
    have gone unused for `idle_s`."""
    used = digests_in_use(ledger, kept)
    gone: list[str] = []
    freed = 0
    for entry in cached_roots():
        if entry.digest in used or now.timestamp() - entry.used < idle_s:
            continue
        freed += remove_cached(entry)
        gone.append(entry.digest)
    return RootsCollected(digests=gone, freed=freed)
