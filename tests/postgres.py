"""A private PostgreSQL cluster for the tests (`scripts/postgres.sh`), and a fresh database in it
for each test that asks. No test skips without PostgreSQL: the script installs it."""

from __future__ import annotations

import secrets
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["fresh_database", "private_cluster"]

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "postgres.sh"


@contextmanager
def private_cluster(state: Path) -> Iterator[str]:
    """Start a cluster with its state under `state`; its superuser URL (the script prints the
    URL of armbench's own role, which may not make databases); stop it after."""
    got = subprocess.run(["bash", str(SCRIPT), "start", str(state)], capture_output=True,
                         text=True, check=False)
    if got.returncode != 0:
        raise RuntimeError(f"scripts/postgres.sh start failed:\n{got.stdout}\n{got.stderr}")
    try:
        yield (state / "admin-url").read_text().strip()
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(state)], capture_output=True,
                       check=False)


def fresh_database(server: str) -> str:
    """A new empty database on the cluster at `server`; its URL."""
    import psycopg

    name = "t_" + secrets.token_hex(6)
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.rsplit("/", 1)[0] + "/" + name
