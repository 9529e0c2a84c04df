"""The reports branch: fetch it into a bare mirror, read its records, commit and push new ones.

The commit is built with pygit2 in the mirror, with no work tree (blob, tree, commit on the
fetched tip); the git CLI fetches and pushes, so the member's transport settings apply.
"""

from __future__ import annotations

import random
import re
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import pygit2

from armbench.edge.gitclone import git_env
from armbench.ledger.errors import EdgeFailure

__all__ = ["BRANCH", "RUNS_PATH", "deliver", "fetch_tip", "lost_race", "read_published", "record_path",
           "redact", "resolve_destination"]

BRANCH = "armbench-reports"
RUNS_PATH = "benchmarks/runs"
_TRACKING = f"refs/remotes/reports/{BRANCH}"
_CREDENTIALS = re.compile(r"([a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)
_NETWORK_TIMEOUT_S = 120
_PUSH_TRIES = 8
_RETRY_PAUSE_S = 0.05
_RACE_SIGNS = ("rejected", "fetch first", "non-fast-forward", "stale info", "cannot lock ref",
               "failed to lock", "Unable to create", ".lock", "failed to update ref",
               "reference already exists", "concurrent")


def redact(text: str) -> str:
    """Drop credentials written into a URL, for messages and the ledger."""
    return _CREDENTIALS.sub(r"\1", text)


def resolve_destination(repo: str, base: Path) -> str:
    """A URL as given; a relative local path made absolute against the checkout."""
    if "://" in repo or repo.startswith("git@"):
        return repo
    path = Path(repo).expanduser()
    return str(path if path.is_absolute() else (base / path).resolve())


def record_path(run: str) -> str:
    """Where a run's record lives on the reports branch."""
    return f"{RUNS_PATH}/{run}.json"


def _git(mirror: Path, *args: str) -> str:
    command = ["git", "-c", "core.hooksPath=/dev/null", *args]
    try:
        done = subprocess.run(command, cwd=mirror, env=git_env(network=True), capture_output=True,
                              text=True, timeout=_NETWORK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise EdgeFailure(f"git {args[0]} gave no answer in {_NETWORK_TIMEOUT_S} s",
                          code="reports_unreachable") from exc
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        said = [line.strip() for line in lines if line.lstrip().startswith(("error:", "fatal:", "!"))]
        detail = " / ".join(said[:3] or lines[-2:]) or "no message"
        raise EdgeFailure(redact(f"git {args[0]} failed: {detail}"), code="reports_unreachable")
    return done.stdout


def _mirror(mirror: Path) -> pygit2.Repository:
    """The bare mirror, made on first use (by whichever of two publishers gets there first)."""
    try:
        return pygit2.Repository(str(mirror))
    except pygit2.GitError:
        mirror.parent.mkdir(parents=True, exist_ok=True)
        return pygit2.init_repository(str(mirror), bare=True)


def fetch_tip(source: str, mirror: Path) -> pygit2.Oid | None:
    """Fetch the reports branch into the mirror; its tip, or None when the branch does not exist."""
    repo = _mirror(mirror)
    if not _git(mirror, "ls-remote", "--heads", source, f"refs/heads/{BRANCH}").strip():
        return None
    _git(mirror, "fetch", "--quiet", "--no-tags", source, f"+refs/heads/{BRANCH}:{_TRACKING}")
    return repo.revparse_single(_TRACKING).id


def read_published(source: str, mirror: Path) -> dict[str, bytes]:
    """Every record on the reports branch after a fetch, by run id (empty when there is no branch)."""
    with _git_errors():
        tip = fetch_tip(source, mirror)
        if tip is None:
            return {}
        repo = pygit2.Repository(str(mirror))
        runs = _subtree(repo, repo[tip].peel(pygit2.Commit).tree, RUNS_PATH)
        if runs is None:
            return {}
        return {entry.name.removesuffix(".json"): repo[entry.id].read_raw() for entry in runs
                if entry.type_str == "blob" and entry.name and entry.name.endswith(".json")}


def _subtree(repo: pygit2.Repository, tree: pygit2.Tree, path: str) -> pygit2.Tree | None:
    """The tree at `path` under `tree`, or None when there is none."""
    try:
        found = repo.get(tree[path].id)
    except KeyError:
        return None
    return found if isinstance(found, pygit2.Tree) else None


def deliver(source: str, mirror: Path, files: dict[str, bytes], *, message: str,
            when: datetime) -> str:
    """Commit `files` (path to bytes) onto the reports branch and push it; the commit that holds them.

    A delivery that loses a race with another publisher (a push rejected for a newer tip, or a ref
    lock another process holds: two runs at once in one checkout share this mirror) is tried
    again on the new tip after a short, growing, jittered pause, up to `_PUSH_TRIES` times; the
    last failure is raised, and the record stays pending.
    """
    for attempt in range(1, _PUSH_TRIES + 1):
        try:
            with _git_errors():
                return _deliver_once(source, mirror, files, message, when)
        except EdgeFailure as exc:
            if attempt == _PUSH_TRIES or not lost_race(exc.message):
                raise
            time.sleep(_RETRY_PAUSE_S * 2 ** (attempt - 1) * random.uniform(0.5, 1.5))
    raise AssertionError("unreachable: the last try returns or raises")  # pragma: no cover


def lost_race(message: str) -> bool:
    """Whether a failed delivery lost a race with another publisher (worth trying again)."""
    return any(sign in message for sign in _RACE_SIGNS)


def _deliver_once(source: str, mirror: Path, files: dict[str, bytes], message: str,
                  when: datetime) -> str:
    repo = _mirror(mirror)
    parent = fetch_tip(source, mirror)
    commit = _commit(repo, parent, files, message, when)
    if commit == parent:
        return str(commit)
    _git(mirror, "push", "--quiet", source, f"{commit}:refs/heads/{BRANCH}")
    repo.references.create(f"refs/heads/{BRANCH}", commit, force=True)
    return str(commit)


@contextmanager
def _git_errors() -> Iterator[None]:
    """pygit2's errors, as the edge's own."""
    try:
        yield
    except pygit2.GitError as exc:
        raise EdgeFailure(redact(f"the reports mirror could not be used: {exc}"),
                          code="reports_unreachable") from exc


def _commit(repo: pygit2.Repository, parent: pygit2.Oid | None, files: dict[str, bytes],
            message: str, when: datetime) -> pygit2.Oid:
    base = repo[parent].peel(pygit2.Commit).tree if parent is not None else None
    tree = _write_tree(repo, base, files)
    if base is not None and tree == base.id:
        return parent  # type: ignore[return-value]
    utc_offset = when.utcoffset()
    offset = int(utc_offset.total_seconds() // 60) if utc_offset else 0
    signature = pygit2.Signature("armbench", "armbench@users.noreply.invalid",
                                 int(when.timestamp()), offset)
    return repo.create_commit(None, signature, signature, message, tree,
                              [parent] if parent is not None else [])


def _write_tree(repo: pygit2.Repository, base: pygit2.Tree | None,
                files: dict[str, bytes]) -> pygit2.Oid:
    builder = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    below: dict[str, dict[str, bytes]] = defaultdict(dict)
    for path, data in files.items():
        head, _, rest = path.partition("/")
        if rest:
            below[head][rest] = data
        else:
            builder.insert(head, repo.create_blob(data), pygit2.enums.FileMode.BLOB)
    for name, sub in below.items():
        sub_base = _subtree(repo, base, name) if base is not None else None
        builder.insert(name, _write_tree(repo, sub_base, sub), pygit2.enums.FileMode.TREE)
    return builder.write()
