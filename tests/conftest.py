"""Shared test set-up: git identity for commits the tests make, armbench's home in tmp, a
private PostgreSQL cluster for the tests of the shared ledger, and no import of armbench's
packages by a name of their own."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from collections.abc import Iterator, Sequence

import pytest
from postgres import fresh_database, private_cluster

os.environ.setdefault("GIT_AUTHOR_NAME", "armbench tests")
os.environ.setdefault("GIT_AUTHOR_EMAIL", "tests@armbench.invalid")
os.environ.setdefault("GIT_COMMITTER_NAME", "armbench tests")
os.environ.setdefault("GIT_COMMITTER_EMAIL", "tests@armbench.invalid")

PACKAGES = {"ledger", "aggregates", "projections", "suites", "engine", "edge", "benchmark", "cli"}


class _OnlyAsArmbench(importlib.abc.MetaPathFinder):
    """The repo's root is on the tests' path (for `perf/`), so `import ledger` would find the
    folder and load a second copy of every module it imports: a test, a guide's example or a
    doctest that does so fails here, naming the package to import instead."""

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        if path is None and name in PACKAGES:
            raise ModuleNotFoundError(f"No module named {name!r}: armbench's packages are imported "
                                      f"as armbench.{name}", name=name)
        return None


sys.meta_path.insert(0, _OnlyAsArmbench())


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a private PostgreSQL cluster started for this session (and stopped after)."""
    with private_cluster(tmp_path_factory.mktemp("postgres")) as url:
        yield url


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """The URL of a new empty database on the session's cluster: one ledger per test."""
    return fresh_database(postgres_server)
