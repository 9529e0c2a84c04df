"""The bytecode a check's Python reads: the system's, never the tree's.

A trial's check runs with `PYTHONPYCACHEPREFIX=/tmp/.pycache` (`Sandbox.agent_tree`), so Python never
reads a `__pycache__` of the trial's tree, where a tool could plant an unchecked-hash `.pyc`
compiled from a fixed source that the kept diff never shows. Alone, the prefix would also make
every check compile the standard library again (0.15 to 0.2 s a `python3 -m unittest` start), so
the check's sandbox shows this seed read-only at `/tmp/.pycache/usr`: for each `.pyc` in a
`__pycache__` of the system's Pythons (`/usr/lib/python3*`, `/usr/local/lib/python3*`), a link at
the place the prefix looks for it. The links point into the system's own folders, which no step
can write, and a stale one only costs a compile: Python checks a `.pyc` against its source.

The seed is made once per machine and Python installation (by name of the folders it was made
from and their times) in armbench's cache, `~/.armbench/cache/pycache`, by the composition root of
the commands that run trials (`cli.compose`), never in the member's home; building it takes about
half a second on a slow disk. `armbench try`, `task new` and `task harvest` need neither: their
checks run on commits of the history, which no agent wrote, so they get no prefix at all.
"""

from __future__ import annotations

import functools
import glob
import hashlib
import os
import secrets
import shutil
from pathlib import Path

from armbench.edge.config import armbench_home

__all__ = ["PREFIX", "seed"]

PREFIX = "/tmp/.pycache"
"""`PYTHONPYCACHEPREFIX` in every check: inside the check's own empty /tmp."""
_ROOTS = ("/usr/lib/python3*", "/usr/local/lib/python3*")


@functools.cache
def seed() -> Path | None:
    """The seed's `usr` folder, made if missing; None where there is no system Python or the
    seed cannot be written (the checks then compile what they import)."""
    roots = sorted(p for pattern in _ROOTS for p in glob.glob(pattern) if os.path.isdir(p))
    if not roots:
        return None
    key = hashlib.sha256("\n".join(f"{r} {os.stat(r).st_mtime_ns}" for r in roots).encode())
    home = armbench_home() / "cache" / "pycache"
    made = home / key.hexdigest()[:16]
    if (made / ".complete").is_file():
        return made / "usr"
    try:
        work = home / f".{made.name}-{secrets.token_hex(4)}"
        work.mkdir(parents=True, mode=0o700)
        for root in roots:
            _link_tree(Path(root), work)
        (work / ".complete").write_text("\n".join(roots) + "\n")
        try:
            work.rename(made)
        except OSError:  # another process made it first: theirs is as good
            shutil.rmtree(work, ignore_errors=True)
    except OSError:
        return None
    return made / "usr" if (made / ".complete").is_file() else None


def _link_tree(root: Path, seed: Path) -> None:
    """For each `<dir>/__pycache__/<name>.pyc` under root, `seed/<dir>/<name>.pyc` -> it."""
    for folder, subfolders, files in os.walk(root):
        if os.path.basename(folder) != "__pycache__":
            continue
        subfolders.clear()
        source_dir = os.path.dirname(folder)
        into = seed / source_dir.lstrip("/")
        into.mkdir(parents=True, exist_ok=True)
        for name in files:
            if name.endswith(".pyc"):
                os.symlink(os.path.join(folder, name), into / name)
