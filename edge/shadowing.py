"""The top-level entries of a trial's clone that would shadow a standard-library or test-runner
module in its check (`suites.shadowing` names them) and that its starting commit does not have.

The clone is the tool's and hostile: its root is opened without following a link, each entry is
looked at with `lstat`, and a folder is looked into (for an `__init__`) through its own file
descriptor, never by a path a link could redirect."""

from __future__ import annotations

import os
import stat
from collections.abc import Collection
from pathlib import Path

from armbench.suites.shadowing import import_name

__all__ = ["added_shadowing"]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def added_shadowing(clone: Path, at_start: Collection[str]) -> list[str]:
    """Each root entry of `clone` (sorted) whose import name is shadowable and whose name the
    starting commit's root does not have (`at_start`)."""
    found: list[str] = []
    root = os.open(clone, _DIR)
    try:
        for name in sorted(os.listdir(root)):
            if name in at_start:
                continue
            mode = os.lstat(name, dir_fd=root).st_mode
            package = stat.S_ISDIR(mode) and _has_init(root, name)
            if import_name(name, package=package, link=stat.S_ISLNK(mode)) is not None:
                found.append(name)
    finally:
        os.close(root)
    return found


def _has_init(root: int, name: str) -> bool:
    try:
        folder = os.open(name, _DIR, dir_fd=root)
    except OSError:  # replaced by a link since, or unreadable: not a package Python would open
        return False
    try:
        return any(entry.partition(".")[0] == "__init__" for entry in os.listdir(folder))
    finally:
        os.close(folder)
