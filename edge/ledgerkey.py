"""The ledger key: `~/.armbench/ledger.key` (or `$ARMBENCH_HOME/ledger.key`), 32 random bytes
as hex, mode 0600, made on first use. Its bytes are never printed; messages name its path and
its id (`LedgerKey.id`, a fingerprint)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from edge.config import armbench_home
from ledger.chain import LedgerKey
from ledger.errors import LedgerKeyProblem

__all__ = ["key_file", "load_key"]

_HEX_CHARS = 64


def key_file() -> Path:
    """Where the ledger key lives."""
    return armbench_home() / "ledger.key"


def load_key(path: Path, *, create: bool) -> LedgerKey | None:
    """The key at `path`; made there first when missing and `create` (None when missing and not).

    Making it is race-safe: the bytes go to a private temporary file that is then linked into
    place (an O_EXCL create of the key itself where links are not allowed), so two processes
    starting at once both read back the one key that won.
    """
    if not path.exists():
        if not create:
            return None
        _make(path)
    return _read(path)


def _make(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = (secrets.token_hex(_HEX_CHARS // 2) + "\n").encode()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    _write_new(tmp, data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:  # a file system without hard links
        with contextlib.suppress(FileExistsError):
            _write_new(path, data)
    finally:
        tmp.unlink(missing_ok=True)


def _write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _read(path: Path) -> LedgerKey:
    try:
        mode = path.stat().st_mode
        text = path.read_text().strip()
    except OSError as exc:
        raise LedgerKeyProblem(f"The ledger key {path} cannot be read ({exc.strerror}). Expected "
                               "a file this user can read; fix its permissions (chmod 600).") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise LedgerKeyProblem(f"The ledger key {path} is readable by other users (mode "
                               f"{stat.S_IMODE(mode):o}); expected 600. Run `chmod 600 {path}`.")
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        secret = b""
    if len(secret) * 2 < _HEX_CHARS:
        raise LedgerKeyProblem(f"The ledger key {path} is not a key: expected {_HEX_CHARS} hex "
                               f"characters, found something else ({len(text)} characters). "
                               "Restore the key file this ledger was written with (armbench "
                               "never rewrites it).")
    return LedgerKey(secret)
