"""The team repo: a bare mirror in the checkout, fetched by `pull`, read at a revision."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import pygit2

from armbench.edge.gitclone import git_env
from armbench.ledger.errors import EdgeFailure, Refusal

__all__ = ["RemoteRefs", "commit_without", "descends_from", "fetch_team", "files_at", "git_dir_of",
           "keep_revision", "reaches", "read_team_checkout", "remote_refs", "resolve_source",
           "resolve_team_ref", "team_branches"]


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd,
                          env=git_env(network=True), capture_output=True, text=True)
    if done.returncode != 0:
        raise EdgeFailure(f"git {args[0]} failed: {done.stderr.strip() or done.stdout.strip()}",
                          code="git_failed")
    return done.stdout


def resolve_source(team: str, base: Path) -> str:
    """A URL as given; a relative local path made absolute against the checkout."""
    if "://" in team or team.startswith("git@"):
        if team[:7].lower() == "http://":
            shown = re.sub(r"^(http://)[^/@]*@", r"\1***@", team, flags=re.IGNORECASE)
            raise Refusal(f"The team repo {shown} is served over plain HTTP, where anything on the "
                          "network can change what is fetched, so no benchmark can pin the team "
                          "revision its trials get. Serve the team repo over HTTPS or SSH, or use a "
                          "local path, and run armbench init --team with it again.",
                          code="team_ref_blocked")
        return team
    path = Path(team).expanduser()
    return str((base / path).resolve() if not path.is_absolute() else path)


def fetch_team(source: str, mirror: Path) -> str:
    """Fetch every branch and tag into the mirror; return the full commit of the team's HEAD."""
    if not mirror.exists():
        _git("init", "--bare", "--template=", "-q", str(mirror))
    _git("fetch", "--prune", "--quiet", "--no-tags", source,
         "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", cwd=mirror)
    head = _git("ls-remote", "--symref", source, "HEAD", cwd=mirror)
    for line in head.splitlines():
        if line.startswith("ref:"):
            branch = line.split()[1]
            return str(pygit2.Repository(str(mirror)).revparse_single(branch).id)
    for line in head.splitlines():
        return line.split()[0]
    raise Refusal(f"The team repo {source} has no HEAD: push a default branch to it first.",
                  code="team_empty")


def files_at(mirror: Path, revision: str, prefix: str = "") -> dict[str, bytes]:
    """Every file under `prefix` at the revision, by repo-relative path."""
    repo = pygit2.Repository(str(mirror))
    tree = repo.revparse_single(revision).peel(pygit2.Commit).tree
    if prefix:
        try:
            entry = tree[prefix.rstrip("/")]
        except KeyError:
            return {}
        if isinstance(entry, pygit2.Blob):
            return {prefix.rstrip("/"): entry.data}
        if not isinstance(entry, pygit2.Tree):
            return {}
        tree = entry
    out: dict[str, bytes] = {}
    _walk(tree, prefix.rstrip("/"), out)
    return out


def _walk(tree: pygit2.Tree, base: str, out: dict[str, bytes]) -> None:
    for entry in tree:
        path = f"{base}/{entry.name}" if base else str(entry.name)
        if isinstance(entry, pygit2.Tree):
            _walk(entry, path, out)
        elif isinstance(entry, pygit2.Blob):
            out[path] = entry.data


def keep_revision(mirror: Path, name: str, revision: str) -> None:
    """Pin a revision in the mirror so a later fetch never drops its objects."""
    repo = pygit2.Repository(str(mirror))
    repo.references.create(f"refs/armbench/{name}", revision, force=True)


def resolve_team_ref(mirror: Path, ref: str) -> str | None:
    """The commit a branch, tag or commit of the team repo names, from the refs the mirror already
    has (nothing is fetched); None when it names none, or a commit without `armbench.yaml` or on no
    branch or tag."""
    repo = pygit2.Repository(str(mirror))
    found = None
    for name in (f"refs/heads/{ref}", f"refs/tags/{ref}"):
        if name in repo.references:
            found = repo.references[name].peel(pygit2.Commit)
            break
    if found is None and re.fullmatch(r"[0-9a-f]{7,40}", ref):
        try:
            found = repo.revparse_single(ref).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            return None
        if not reaches(_as_fetched(mirror), str(found.id)):
            return None
    if found is None or "armbench.yaml" not in found.tree:
        return None
    return str(found.id)


def team_branches(mirror: Path) -> list[str]:
    """The team repo's branches, as the mirror last fetched them."""
    repo = pygit2.Repository(str(mirror))
    return sorted(name.removeprefix("refs/heads/") for name in repo.references
                  if name.startswith("refs/heads/"))


def commit_without(mirror: Path, revision: str, paths: Sequence[str]) -> str:
    """A commit of `revision`'s tree without `paths` (files or folders), made in the mirror and kept
    there (`refs/armbench/without/<commit>`). Its author, time and message come from its inputs, so
    the same revision and paths always give the same commit."""
    repo = pygit2.Repository(str(mirror))
    base = repo.revparse_single(revision).peel(pygit2.Commit)
    tree = _tree_without(repo, base.tree, [p.strip("/").split("/") for p in paths])
    who = pygit2.Signature("armbench", "armbench@armbench.invalid", base.commit_time, 0)
    message = f"armbench: {revision[:7]} without {', '.join(paths)}\n"
    oid = repo.create_commit(None, who, who, message, tree, [base.id])
    keep_revision(mirror, f"without/{oid}", str(oid))
    return str(oid)


def _tree_without(repo: pygit2.Repository, tree: pygit2.Tree, paths: list[list[str]]) -> pygit2.Oid:
    builder = repo.TreeBuilder(tree)
    deeper: dict[str, list[list[str]]] = {}
    for parts in paths:
        if len(parts) == 1:
            if builder.get(parts[0]) is not None:
                builder.remove(parts[0])
        else:
            deeper.setdefault(parts[0], []).append(parts[1:])
    for name, rest in deeper.items():
        entry = builder.get(name)
        if entry is None or entry.filemode != pygit2.GIT_FILEMODE_TREE:
            continue
        sub = _tree_without(repo, repo[entry.id].peel(pygit2.Tree), rest)
        if len(repo[sub].peel(pygit2.Tree)) == 0:
            builder.remove(name)
        else:
            builder.insert(name, sub, pygit2.GIT_FILEMODE_TREE)
    return builder.write()


class RemoteRefs(NamedTuple):
    """The team repo's branch and tag tips, and the repository whose history says what they reach."""

    repo: pygit2.Repository
    """The team repo itself for a path; the mirror for a URL (its objects are what was fetched)."""
    tips: list[pygit2.Oid]
    """The commit each branch and tag points to."""
    offline: bool
    """The team repo could not be reached: these are its branches and tags as the last pull fetched them."""


def remote_refs(source: str, mirror: Path) -> RemoteRefs:
    """The team repo's branches and tags now: a path is opened, a URL asked with `git ls-remote`.

    A team repo that cannot be reached (a URL offline, a path gone) stands in with the branches and
    tags the last pull fetched into the mirror, which a benchmark can still be planned against; that
    is weaker evidence, since the mirror is this checkout's own file.
    """
    path = source.removeprefix("file://")
    if "://" not in path and not source.startswith("git@"):
        try:
            return RemoteRefs(repo=(team := pygit2.Repository(path)), tips=_tips(team), offline=False)
        except pygit2.GitError:
            return _as_fetched(mirror)
    try:
        out = _git("ls-remote", "--heads", "--tags", source, cwd=mirror)
    except EdgeFailure:
        return _as_fetched(mirror)
    tips = []
    for line in out.splitlines():
        try:
            tips.append(pygit2.Oid(hex=line.split()[0]))
        except (IndexError, ValueError):
            continue
    return RemoteRefs(repo=pygit2.Repository(str(mirror)), tips=tips, offline=False)


def _as_fetched(mirror: Path) -> RemoteRefs:
    repo = pygit2.Repository(str(mirror))
    return RemoteRefs(repo=repo, tips=_tips(repo), offline=True)


def _tips(repo: pygit2.Repository) -> list[pygit2.Oid]:
    """The commits a repository's branches and tags point to (tags peeled)."""
    tips = []
    for name in repo.references:
        if name.startswith(("refs/heads/", "refs/tags/")):
            try:
                tips.append(repo.references[name].peel(pygit2.Commit).id)
            except (pygit2.GitError, ValueError, KeyError):
                continue
    return tips


def reaches(refs: RemoteRefs, revision: str) -> bool:
    """The revision is one of the tips or an ancestor of one."""
    try:
        target = pygit2.Oid(hex=revision)
        if not isinstance(refs.repo.get(target), pygit2.Commit):
            return False
    except (ValueError, pygit2.GitError):
        return False
    for tip in refs.tips:
        try:
            if tip == target or refs.repo.descendant_of(tip, target):
                return True
        except (KeyError, ValueError, pygit2.GitError):
            continue
    return False



def descends_from(gitdir: Path, descendant: str, ancestor: str) -> bool:
    """Whether `ancestor` is in `descendant`'s history in the repository at `gitdir` (False when
    either does not read)."""
    try:
        repo = pygit2.Repository(str(gitdir))
        return bool(repo.descendant_of(pygit2.Oid(hex=descendant), pygit2.Oid(hex=ancestor)))
    except (KeyError, ValueError, pygit2.GitError):
        return False


def git_dir_of(path: str) -> str | None:
    """The git dir of the repository that holds `path`, or None when none does."""
    found: str | None = pygit2.discover_repository(path)
    return found


def read_team_checkout(cwd: Path, branch: str | None,
                       paths: Sequence[str]) -> tuple[str, str | None, dict[str, bytes]]:
    """The team repo that holds `cwd`, for `armbench review`: (its root; the commit read, or None
    for the working tree; the files under `paths` by repo-relative path), at `branch` (a branch,
    tag or commit) or from the working tree, leaving out what git ignores."""
    repo = _team_repo(cwd)
    if branch is None:
        return _root(repo), None, _worktree_files(repo, paths)
    try:
        revision = str(repo.revparse_single(branch).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        raise Refusal(f'--branch "{branch}" does not resolve to a commit in the repo at {_root(repo)}. '
                      "Give a branch, tag or commit it has (in CI, fetch it first).",
                      code="ref_not_found") from None
    files: dict[str, bytes] = {}
    for prefix in paths:
        files |= files_at(Path(repo.path), revision, prefix)
    return _root(repo), revision, files


def _team_repo(cwd: Path) -> pygit2.Repository:
    found = pygit2.discover_repository(str(cwd))
    if found is None:
        raise Refusal(f"{cwd} is not inside a git repository. armbench review reads the team repo the "
                      "current directory is in: run it in a checkout of the team repo.",
                      code="not_a_checkout")
    return pygit2.Repository(found)


def _root(repo: pygit2.Repository) -> str:
    return str(Path(repo.workdir or repo.path).resolve())


def _worktree_files(repo: pygit2.Repository, paths: Sequence[str]) -> dict[str, bytes]:
    if repo.workdir is None:
        raise Refusal(f"The repo at {_root(repo)} is bare, so it has no working tree to review. Give "
                      "--branch <ref> to review a branch, tag or commit.", code="not_a_checkout")
    root = Path(repo.workdir)
    files = {}
    for name in paths:
        top = root / name
        found = [top] if top.is_file() else sorted(p for p in top.rglob("*") if p.is_file())
        for path in found:
            rel = path.relative_to(root).as_posix()
            if not repo.path_is_ignored(rel):
                files[rel] = path.read_bytes()
    return files
