"""The ledger key: `~/.armbench/ledger.key` (or `$ARMBENCH_HOME/ledger.key`), 32 random bytes
as hex, mode 0600, made on first use. Its bytes are never printed; messages name its path and
its id (`LedgerKey.id`, a fingerprint)."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from armbench.edge.config import armbench_home
from armbench.ledger.chain import LedgerKey
from armbench.ledger.errors import LedgerKeyMismatch, LedgerKeyProblem
from armbench.ledger.store import EventStore

__all__ = ["key_file", "key_for_writing", "load_key"]

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


def key_for_writing(store: EventStore, path: Path) -> LedgerKey:
    """The key a command that writes chains with: the one at `path`, which must be the key the
    ledger is already chained with; made there only for a ledger that has none.

    A second home (a CI job with a fresh home, a worker without the key) would otherwise chain
    new runs with a new key, and `verify` would fail for the runs of one key or the other: that
    is refused before anything is written, and no key is made."""
    in_use = store.key_in_use()
    key = load_key(path, create=in_use is None)
    if in_use is None or (key is not None and key.id == in_use):
        assert key is not None
        return key
    found = (f"there is no key at {path}" if key is None
             else f"the key at {path} has id {key.id}")
    raise LedgerKeyMismatch(
        f"The ledger {store.path} is chained with the ledger key whose id is {in_use}, but "
        f"{found}. Writing with {'a new key' if key is None else 'that key'} would fork the "
        "ledger's chain, and `armbench verify` would fail for the runs of one key or the other, "
        f"so nothing was written{' and no key was made' if key is None else ''}. Copy the key "
        f"this ledger was written with to {path} (from the machine that wrote it or from your "
        "secret store; `armbench ledger key --id` prints a key's id, never the key), or set "
        "ARMBENCH_HOME to the folder that holds it, then run this again.")


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
