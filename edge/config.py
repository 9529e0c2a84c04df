"""The project checkout's armbench files: `.armbench/config.yaml`, the pull record, paths."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Literal

import msgspec

from armbench.ledger.errors import Refusal

__all__ = ["Checkout", "ProjectConfig", "PullRecord", "WorkflowsConfig", "armbench_home",
           "armbench_home_in_home", "find_checkout", "load_config", "save_config"]

IGNORE_ALL = "# armbench's own files: nothing here belongs in the project's history.\n*\n"


class WorkflowsConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How workflows run on this machine."""

    sandbox: bool = False
    """This machine is a sandbox (a CI runner, a container without personal logins)."""
    max_parallel: int = 1
    """The most lanes the local driver runs at once."""
    isolation: Literal["bubblewrap", "declared"] = "bubblewrap"
    """How trials are isolated: armbench's bubblewrap sandbox, or `declared` (none: the machine
    itself is the sandbox)."""
    sandbox_read: list[str] = []
    """Host folders every sandboxed step sees read-only (e.g. a toolchain under the home)."""
    sandbox_write: list[str] = []
    """Host folders every sandboxed step may write, shared by all trials (the record lists them)."""
    evidence: bool = True
    """Keep each trial's evidence (check output, diff, transcript) in `.armbench/evidence/`;
    false is `run --no-evidence` for every run here."""
    setup_cache: bool = False
    """Keep `trial: {setup: once}` prepared trees between runs in `~/.armbench/cache/prepared/`
    (keyed by the starting commit, the setup command, the sandbox and its environment, the host's
    architecture and armbench's version; checked by their manifest before use); false builds
    each task's tree once per run."""
    sandbox_ports: list[int] = []
    """Host loopback ports forwarded into a trial tool's private network besides its model
    endpoint's (a local model server that no `*_BASE_URL` variable names)."""


LEDGER_URL_VARIABLE = "ARMBENCH_LEDGER_URL"
"""The environment variable that names the ledger (a `postgresql://` URL or a SQLite file)."""


class LedgerConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`ledger:` as a mapping: where the shared ledger is."""

    url: str | None = None
    """`postgresql://user@host:port/database` (the password from the URL, `PGPASSWORD` or
    `~/.pgpass`); without it, the SQLite file."""
    file: str | None = None
    """The SQLite file, relative to the checkout, when there is no `url`."""


class ProjectConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """`.armbench/config.yaml`."""

    schemaVersion: str = "v1alpha1"
    """The file format's version."""
    team: str
    """The team repo: a path or a git URL."""
    workflows: WorkflowsConfig = WorkflowsConfig()
    """How workflows run here."""
    roles: list[str] = []
    """The member's active roles and projects (namespaces)."""
    ledger: str | LedgerConfig | None = None
    """The ledger: its SQLite file (a path), or `{url: postgresql://...}` for a shared ledger on
    PostgreSQL; default `.armbench/ledger.sqlite`. `ARMBENCH_LEDGER_URL` wins over both."""
    runs_dir: str | None = None
    """Where records are written; default `.armbench/runs`."""
    reports: str | None = None
    """The repo whose `armbench-reports` branch records are published to: a path or a git URL;
    default the team repo."""
    publish: bool = True
    """Queue each run's record for publication; false keeps records in the runs folder only."""


class PullRecord(msgspec.Struct, frozen=True, kw_only=True):
    """What `armbench pull` last pulled."""

    team: str
    revision: str
    at: datetime


class Checkout(msgspec.Struct, frozen=True, kw_only=True):
    """A project checkout and where armbench keeps its files in it."""

    root: Path

    @property
    def dir(self) -> Path:
        """`.armbench/` in the checkout."""
        return self.root / ".armbench"

    @property
    def evidence_dir(self) -> Path:
        """`.armbench/evidence/`: each trial's evidence, content-addressed (`edge.evidence`)."""
        return self.dir / "evidence"

    @property
    def config_file(self) -> Path:
        return self.dir / "config.yaml"

    @property
    def pull_file(self) -> Path:
        return self.dir / "pull.json"

    @property
    def mirror(self) -> Path:
        """The bare mirror of the team repo."""
        return self.dir / "team.git"

    @property
    def cache_file(self) -> Path:
        """Which revision each valid suite was cached at."""
        return self.dir / "cache" / "suites.json"

    def ledger_path(self, config: ProjectConfig) -> Path:
        """The ledger's SQLite file (the default one when the ledger is on PostgreSQL)."""
        if isinstance(config.ledger, str) and config.ledger:
            return self.root / config.ledger
        if isinstance(config.ledger, LedgerConfig) and config.ledger.file:
            return self.root / config.ledger.file
        return self.dir / "ledger.sqlite"

    def ledger_location(self, config: ProjectConfig) -> str:
        """Where the ledger is: `ARMBENCH_LEDGER_URL`, else the config's `ledger.url`, else
        the SQLite file."""
        url = os.environ.get(LEDGER_URL_VARIABLE) or (
            config.ledger.url if isinstance(config.ledger, LedgerConfig) else None)
        return url or str(self.ledger_path(config))

    def runs_dir(self, config: ProjectConfig) -> Path:
        return self.root / config.runs_dir if config.runs_dir else self.dir / "runs"

    @property
    def reports_mirror(self) -> Path:
        """The bare mirror the reports branch is fetched into and committed in."""
        return self.dir / "reports.git"

    def read_pull(self) -> PullRecord | None:
        if not self.pull_file.exists():
            return None
        return msgspec.json.decode(self.pull_file.read_bytes(), type=PullRecord)


def armbench_home() -> Path:
    """`~/.armbench`, or `$ARMBENCH_HOME`."""
    return Path(os.environ.get("ARMBENCH_HOME") or Path.home() / ".armbench")


def armbench_home_in_home() -> str | None:
    """armbench's own home relative to the member's (`$HOME`), where it lies inside: what no
    tool's `credentials` may name (`suites.credentials`)."""
    try:
        home = Path.home().resolve()
        return armbench_home().resolve().relative_to(home).as_posix()
    except (ValueError, RuntimeError, OSError):
        return None


def find_checkout(start: Path) -> Checkout:
    """The git checkout that holds `start`; armbench runs in a checkout of the project.

    Found as git and libgit2 find it: the nearest folder, from `start` up, with a `.git` folder
    or a `.git` file (a linked worktree or a submodule); a bare repository on the way is refused.
    Walked here rather than with pygit2, whose import alone costs every command tens of
    milliseconds (tests/unit/test_find_checkout.py holds the two to the same answers)."""
    here = start.resolve()
    for folder in (here, *here.parents):
        dotgit = folder / ".git"
        if dotgit.is_dir() or dotgit.is_file():
            return Checkout(root=folder)
        if _bare(folder):
            raise Refusal(f"{start} is a bare repository; armbench needs a checkout with a work "
                          "tree.", code="not_a_checkout")
    raise Refusal(f"{start} is not inside a git checkout. Run armbench in a checkout of "
                  "the project your suites start from.", code="not_a_checkout")


def _bare(folder: Path) -> bool:
    """A bare repository's own folder: HEAD, objects/ and refs/ side by side."""
    return ((folder / "HEAD").is_file() and (folder / "objects").is_dir()
            and (folder / "refs").is_dir())


def load_config(checkout: Checkout) -> ProjectConfig:
    """The checkout's config, or a refusal saying to run `armbench init`."""
    path = checkout.config_file
    if not path.exists():
        raise Refusal(f"This checkout has no {path.relative_to(checkout.root)}: it is not tied "
                      "to a team repo yet. Run `armbench init --team <path or URL>` first.",
                      code="not_initialized")
    try:
        return msgspec.yaml.decode(path.read_bytes(), type=ProjectConfig)
    except msgspec.ValidationError as exc:
        raise Refusal(f"{path.relative_to(checkout.root)}: {exc}. Fix the file (keys: team, "
                      "workflows.sandbox, workflows.max_parallel, workflows.isolation, "
                      "workflows.sandbox_read, workflows.sandbox_write, workflows.sandbox_ports, "
                      "workflows.evidence, workflows.setup_cache, roles, ledger, runs_dir, reports, "
                      "publish).",
                      code="config_invalid") from exc
    except msgspec.DecodeError as exc:
        raise Refusal(f"{path.relative_to(checkout.root)} is not valid YAML: {exc}.",
                      code="config_invalid") from exc


def save_config(checkout: Checkout, config: ProjectConfig) -> None:
    """Write the config, and keep `.armbench/` out of the project's git status."""
    checkout.dir.mkdir(parents=True, exist_ok=True)
    (checkout.dir / ".gitignore").write_text(IGNORE_ALL)
    checkout.config_file.write_bytes(msgspec.yaml.encode(config))
