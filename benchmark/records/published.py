"""The reports branch, read: the one reader of what is published there, for `verify`, the
dashboard, the regression gate and `plan --detect`.

Every read fetches the branch first (`edge.reports.read_published`) into the checkout's mirror,
or into a throwaway one where `.armbench/` cannot be written (read-only commands work there).
Writing the branch is `benchmark.records.publish`'s.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from armbench.edge.config import Checkout, ProjectConfig
from armbench.edge.reports import BRANCH, read_published, record_path, redact, resolve_destination
from armbench.projections.record_types import Record, decode_records

__all__ = ["branch_reader", "destination", "published_record", "published_records", "read_branch",
           "skipped_published"]


def destination(checkout: Checkout, config: ProjectConfig) -> str:
    """The reports repo: `reports` in the config, else the team repo."""
    return resolve_destination(config.reports or config.team, checkout.root)


def read_branch(checkout: Checkout, config: ProjectConfig) -> dict[str, bytes]:
    """Every record on the reports branch, by run id, after a fetch (empty when there is no
    branch); raises when the branch cannot be read."""
    mirror, source = checkout.reports_mirror, destination(checkout, config)
    if os.access(mirror if mirror.exists() else mirror.parent, os.W_OK):
        return read_published(source, mirror)
    with tempfile.TemporaryDirectory(prefix="armbench-reports-") as scratch:
        return read_published(source, Path(scratch) / "reports.git")


def branch_reader(checkout: Checkout, config: ProjectConfig) -> Callable[[], dict[str, bytes]]:
    """`read_branch` for this checkout, to call again whenever the branch should be fetched anew
    (the dashboard's)."""
    return lambda: read_branch(checkout, config)


def published_record(checkout: Checkout, config: ProjectConfig, run: str) -> bytes | None:
    """The run's record as the reports branch holds it now (fetched), None when it holds none."""
    return read_branch(checkout, config).get(run)


def skipped_published(path: str, source: str, problem: str) -> str:
    """The warning for a published record that does not decode."""
    return (f"Skipped the record {path} on the {BRANCH} branch of {redact(source)}: {problem}. "
            "It is left out of the comparison; remove it from the branch, or put back the record "
            "armbench wrote for that run.")


def published_records(checkout: Checkout, config: ProjectConfig,
                      warn: Callable[[str], None]) -> list[Record]:
    """Every record on the reports branch that decodes as a `Record`; `warn` is told of each one
    that does not. Raises when the branch cannot be read."""
    found = read_branch(checkout, config)
    records, bad = decode_records((record_path(run), data) for run, data in sorted(found.items()))
    for path, problem in bad:
        warn(skipped_published(path, destination(checkout, config), problem))
    return records
