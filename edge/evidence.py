"""The evidence folder: what each trial left to audit (the check's and setup's output, its diff,
its transcript, its judges' prompts and answers), kept on this machine and never published.

Files are content-addressed: `<root>/sha256/<first two hex>/<sha256>`, written once (a second
trial with the same bytes shares the file), owner-only, never through a link. The ledger's
`EvidenceKept` events name them by hash, so `verify` can tell a kept file from an altered or a
missing one. `collected.json` lists the runs whose evidence `armbench gc` removed, so a
reader can say so rather than call the files missing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

__all__ = ["COLLECTED", "EvidenceStore", "FileState", "redact"]

COLLECTED = "collected.json"
"""The file in the evidence folder naming the runs `gc` collected, and when."""
_SHA = re.compile(r"[0-9a-f]{64}")
_MIN_SECRET = 4
"""A withheld variable's value shorter than this is not redacted (it would blank every digit)."""

FileState = Literal["kept", "missing", "altered"]


class EvidenceStore:
    """The content-addressed evidence folder of a checkout (`.armbench/evidence/`)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, sha: str) -> Path:
        """Where the bytes with this SHA-256 are (or would be) kept."""
        if _SHA.fullmatch(sha) is None:
            raise ValueError(f"not a SHA-256: {sha!r}")
        return self.root / "sha256" / sha[:2] / sha

    def put(self, data: bytes) -> str:
        """Keep `data` (once) and return its SHA-256."""
        sha = hashlib.sha256(data).hexdigest()
        dest = self.path(sha)
        if dest.is_file() and not dest.is_symlink():
            return sha
        dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".put-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return sha

    def get(self, sha: str) -> bytes | None:
        """The kept bytes, or None when there is no such file (never read through a link)."""
        try:
            fd = os.open(self.path(sha), os.O_RDONLY | os.O_NOFOLLOW)
        except (OSError, ValueError):
            return None
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def state(self, sha: str) -> FileState:
        """Whether the file is kept with the bytes its name says, altered, or missing."""
        data = self.get(sha)
        if data is None:
            return "missing"
        return "kept" if hashlib.sha256(data).hexdigest() == sha else "altered"

    def size(self, sha: str) -> int:
        """The kept file's size (0 when it is missing)."""
        try:
            return self.path(sha).lstat().st_size
        except (OSError, ValueError):
            return 0

    def remove(self, shas: Iterable[str]) -> int:
        """Remove these files; the bytes freed."""
        freed = 0
        for sha in set(shas):
            try:
                path = self.path(sha)
                freed += path.lstat().st_size
                path.unlink()
            except (OSError, ValueError):
                continue
        return freed

    def collected(self) -> dict[str, str]:
        """The runs `gc` collected, each with when (ISO 8601)."""
        try:
            got = msgspec.json.decode((self.root / COLLECTED).read_bytes(), type=dict[str, str])
        except (OSError, msgspec.DecodeError):
            return {}
        return got

    def mark_collected(self, runs: Sequence[str], at: str) -> None:
        """Note that these runs' evidence was collected."""
        if not runs:
            return
        got = self.collected() | {run: at for run in runs}
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = self.root / f".{COLLECTED}.tmp"
        tmp.write_bytes(msgspec.json.format(msgspec.json.encode(dict(sorted(got.items())))))
        os.replace(tmp, self.root / COLLECTED)


def redact(data: bytes, env: Mapping[str, str], names: Sequence[str]) -> tuple[bytes, int]:
    """`data` with the value each of `names` has in `env` replaced by `[withheld NAME]`; and
    how many of them appeared. Longest values first, so one value inside another is not half
    replaced."""
    values = sorted(((env[n].encode(), n) for n in names if len(env.get(n, "")) >= _MIN_SECRET),
                    key=lambda pair: -len(pair[0]))
    found = 0
    for value, name in values:
        if value in data:
            data = data.replace(value, f"[withheld {name}]".encode())
            found += 1
    return data, found
