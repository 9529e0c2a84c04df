"""Where a ledger lives: a SQLite file, or a PostgreSQL URL (`postgresql://user@host/db`)."""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

import msgspec

__all__ = ["LedgerUrl", "is_postgres", "parse_postgres"]

_SCHEMES = ("postgresql://", "postgres://")


def is_postgres(location: str) -> bool:
    """The location is a PostgreSQL URL rather than a file."""
    return location.startswith(_SCHEMES)


class LedgerUrl(msgspec.Struct, frozen=True, kw_only=True):
    """A PostgreSQL ledger's connection parameters, and the URL to show people."""

    params: dict[str, str]
    """libpq's keywords (host, port, dbname, user, password when the URL has one, and the query's
    own keywords such as sslmode)."""
    shown: str
    """The URL without its password: what messages and records name."""


def parse_postgres(url: str) -> LedgerUrl:
    """Split a `postgresql://` URL; a password in it is kept in `params` only."""
    parts = urlsplit(url)
    params: dict[str, str] = {}
    if parts.hostname:
        params["host"] = unquote(parts.hostname)
    try:
        port = parts.port
    except ValueError:
        port = None
    if port:
        params["port"] = str(port)
    if parts.username:
        params["user"] = unquote(parts.username)
    if parts.password:
        params["password"] = unquote(parts.password)
    params["dbname"] = unquote(parts.path.lstrip("/")) or params.get("user", "postgres")
    params.update(dict(parse_qsl(parts.query)))
    userinfo = f"{parts.username}@" if parts.username else ""
    netloc = userinfo + (parts.hostname or "") + (f":{port}" if port else "")
    shown = f"{parts.scheme}://{netloc}/{params['dbname']}"
    return LedgerUrl(params=params, shown=shown)
