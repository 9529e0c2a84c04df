"""Shared test set-up: git identity for commits the tests make, armbench's home in tmp, and a
private PostgreSQL cluster for the tests of the shared ledger."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from postgres import fresh_database, private_cluster

os.environ.setdefault("GIT_AUTHOR_NAME", "armbench tests")
os.environ.setdefault("GIT_AUTHOR_EMAIL", "tests@armbench.invalid")
os.environ.setdefault("GIT_COMMITTER_NAME", "armbench tests")
os.environ.setdefault("GIT_COMMITTER_EMAIL", "tests@armbench.invalid")


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a private PostgreSQL cluster started for this session (and stopped after)."""
    with private_cluster(tmp_path_factory.mktemp("postgres")) as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """The URL of a new empty database on the session's cluster: one ledger per test."""
    return fresh_database(postgres_server)
