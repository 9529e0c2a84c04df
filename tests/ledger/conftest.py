"""Fixtures of the ledger tests: the tiny project (built once), copies of it, a finished run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from ledger_procs import Project, armbench
from ledger_project import make_template
from typer.testing import CliRunner, Result


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, the team, and a checkout with `init` and `pull` done."""
    return make_template(tmp_path_factory.mktemp("template"))


@pytest.fixture
def project(template: Path, tmp_path: Path) -> Project:
    """A fresh copy of the template for one test."""
    return Project(template, tmp_path / "p")


@pytest.fixture(scope="session")
def audited_once(template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str]:
    """A finished run of the `audit` suite: passed, failed, error and not_run trials."""
    p = Project(template, tmp_path_factory.mktemp("audited") / "p")
    done = armbench(p, "run", "audit", "--sandbox")
    return p, json.loads(done.stdout)["data"]["done"]["run"]


@pytest.fixture
def audited(audited_once: tuple[Project, str], tmp_path: Path) -> tuple[Project, str]:
    """A copy of the finished audit run that a test may change."""
    p, run = audited_once
    return Project(p.root, tmp_path / "p"), run


class Cli:
    """armbench's typer app, run in process in a project's checkout."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def __call__(self, *args: str) -> Result:
        from armbench.cli.main import app

        here = Path.cwd()
        os.chdir(self.project.calc)
        try:
            return CliRunner().invoke(app, list(args), env=self.project.env())
        finally:
            os.chdir(here)


@pytest.fixture
def cli(audited: tuple[Project, str]) -> Iterator[Cli]:
    """The CLI in a copy of the finished audit run's checkout."""
    yield Cli(audited[0])
