"""The suite a draft is tried in: a pulled suite by name, or a one-arm suite for the checkout."""

from __future__ import annotations

from pathlib import Path

from armbench.benchmark.harvest.trydraft import DraftSuite
from armbench.benchmark.team.suitecache import load_cache, verified_suite_files
from armbench.edge.config import Checkout
from armbench.edge.history import origin_url
from armbench.edge.team import files_at
from armbench.ledger.errors import Refusal
from armbench.suites.draftfile import synthetic_suite

__all__ = ["HISTORY_SUITE", "checkout_suite", "pulled_suite"]

HISTORY_SUITE = "history"
"""The name of the suite a draft is tried in when no `--suite` is given."""


def pulled_suite(checkout: Checkout, name: str) -> DraftSuite:
    """The suite.yaml `armbench pull` cached for `name`, read back from the team mirror (its
    `setup` then runs before each check, as in a run)."""
    pulled = checkout.read_pull()
    cache = load_cache(checkout)
    if pulled is not None and name in cache.suites:
        files = verified_suite_files(cache, name, mirror=checkout.mirror, pulled=pulled.revision,
                                     remote=None)
        return DraftSuite(name=name, text=files[f"{cache.dir_of(name)}/suite.yaml"])
    # A suite with no valid task yet is not cached: its first task may be this one.
    path = f"benchmarks/{name}/suite.yaml"
    found = files_at(checkout.mirror, pulled.revision, path) if pulled is not None else {}
    if path in found:
        return DraftSuite(name=name, text=found[path])
    known = ", ".join(sorted(cache.suites)) or "none"
    raise Refusal(f'Expected suite "{name}" at {path} in the team revision armbench pull last '
                  f"fetched (cached suites: {known}). Run `armbench init --team <repo>` and `armbench "
                  "pull` in this checkout, or leave --suite out to try the draft in a one-arm suite "
                  "without setup.", code="suite_not_found")


def checkout_suite(root: Path) -> DraftSuite:
    """A one-arm suite whose repo is the checkout's origin (or the checkout), without setup."""
    repo = origin_url(root) or f"file://{root}"
    return DraftSuite(name=HISTORY_SUITE, text=synthetic_suite(HISTORY_SUITE, repo, None).encode())
