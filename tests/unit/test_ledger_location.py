"""Where the ledger is: ARMBENCH_LEDGER_URL, else `ledger.url` or `ledger` in the config, else
the SQLite file; a PostgreSQL URL is shown without its password."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from armbench.edge.config import Checkout, ProjectConfig
from armbench.ledger.urls import is_postgres, parse_postgres


def _config(text: str) -> ProjectConfig:
    return msgspec.yaml.decode(text.encode(), type=ProjectConfig)


def test_the_environment_wins_over_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = Checkout(root=Path("/p"))
    config = _config("team: t\nledger: {url: 'postgresql://a@config/db'}\n")
    monkeypatch.delenv("ARMBENCH_LEDGER_URL", raising=False)
    assert checkout.ledger_location(config) == "postgresql://a@config/db"
    monkeypatch.setenv("ARMBENCH_LEDGER_URL", "postgresql://b@env/db")
    assert checkout.ledger_location(config) == "postgresql://b@env/db"


def test_without_a_url_the_ledger_is_the_sqlite_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARMBENCH_LEDGER_URL", raising=False)
    checkout = Checkout(root=Path("/p"))
    assert checkout.ledger_location(_config("team: t\n")) == "/p/.armbench/ledger.sqlite"
    assert checkout.ledger_location(_config("team: t\nledger: l.db\n")) == "/p/l.db"
    assert not is_postgres(checkout.ledger_location(_config("team: t\nledger: {file: x.db}\n")))


def test_a_url_is_shown_without_its_password() -> None:
    url = parse_postgres("postgresql://me:pa%40ss@db.example:6543/bench?sslmode=require")
    assert url.shown == "postgresql://me@db.example:6543/bench"
    assert url.params == {"host": "db.example", "port": "6543", "user": "me",
                          "password": "pa@ss", "dbname": "bench", "sslmode": "require"}
