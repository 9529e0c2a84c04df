"""Where the dashboard's published records come from: the reports branch, fetched."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from benchmark.dashboard.site import Published
from benchmark.records.publish import destination
from edge.config import Checkout, ProjectConfig
from edge.reports import read_published

__all__ = ["reports_branch"]


def reports_branch(checkout: Checkout, config: ProjectConfig) -> Published:
    """A reader of every record on the reports branch: fetched into the checkout's mirror, or a
    throwaway one where `.armbench/` cannot be written."""

    def read() -> dict[str, bytes]:
        mirror, source = checkout.reports_mirror, destination(checkout, config)
        if os.access(mirror if mirror.exists() else mirror.parent, os.W_OK):
            return read_published(source, mirror)
        with tempfile.TemporaryDirectory(prefix="armbench-reports-") as scratch:
            return read_published(source, Path(scratch) / "reports.git")

    return read
