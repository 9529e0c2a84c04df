"""A project's history as `armbench task new --from-commit` and `task harvest` read it (the git CLI).

Read only: nothing here writes the checkout, its index or its refs. Every fact a draft needs
comes out as plain values (`CommitFacts`, bytes of a file at a commit, a commit's added lines),
so the drafting rules (`suites.drafting`) stay pure.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from armbench.edge.errors import GitError
from armbench.edge.gitclone import git_env

__all__ = ["Change", "CommitFacts", "ReflogEntry", "added_lines", "changes_between", "commit_facts",
           "files_at", "first_parent_commits", "first_parent_facts", "head_reflog", "is_ancestor",
           "origin_url", "read_at", "resolve_commit", "tree_paths"]

_SEP = "\x1e"


@dataclass(frozen=True)
class Change:
    """One path a commit changed against its first parent."""

    path: str
    status: str
    """git's letter: `A` added, `M` modified, `D` deleted, `R` renamed, `T` type changed."""


@dataclass(frozen=True)
class CommitFacts:
    """What a draft reads of one commit."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    body: str
    changes: tuple[Change, ...]


def _git(checkout: Path, *args: str, ok_codes: tuple[int, ...] = (0,)) -> bytes:
    command = ["git", "-c", "core.hooksPath=/dev/null", "--no-pager", *args]
    try:
        done = subprocess.run(command, cwd=checkout, env=git_env(), capture_output=True,
                              stdin=subprocess.DEVNULL)
    except OSError as error:
        raise GitError(expected="the git command", found=f"it could not start ({error.strerror})",
                       fix="Install git.") from None
    if done.returncode not in ok_codes:
        said = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["(nothing)"]
        raise GitError(expected=f"`git {' '.join(args[:3])}` to succeed in {checkout}",
                       found=said[0], fix="Run armbench in a git checkout of the project, "
                       "and name a commit or range it has.")
    return done.stdout


def resolve_commit(checkout: Path, rev: str) -> str:
    """The full SHA of `rev` (a SHA, a branch, `HEAD~3`), or GitError naming it."""
    if rev.startswith("-"):
        raise GitError(expected="a commit", found=f"`{rev}`", fix="Name a commit, not an option.")
    out = _git(checkout, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}",
               ok_codes=(0, 1))
    sha = out.decode().strip()
    if not sha:
        raise GitError(expected=f"a commit named {rev!r} in {checkout}", found="no such commit",
                       fix="Name a commit the checkout has (fetch it first if it is on a remote).")
    return sha


def commit_facts(checkout: Path, sha: str) -> CommitFacts:
    """A commit's parents, message and the paths it changed against its first parent."""
    head = _git(checkout, "show", "-s", f"--format=%H{_SEP}%P{_SEP}%s{_SEP}%b", sha).decode(
        errors="replace")
    full, parents, subject, body = (head.rstrip("\n").split(_SEP, 3) + ["", "", ""])[:4]
    first = parents.split()[:1]
    changes = changes_between(checkout, first[0], full) if first else ()
    return CommitFacts(sha=full, parents=tuple(parents.split()), subject=subject.strip(),
                       body=body.strip(), changes=changes)


def _spec(checkout: Path, since: str | None, range_: str | None) -> str:
    if range_ is not None:
        left, _, right = range_.partition("..")
        return f"{resolve_commit(checkout, left)}..{resolve_commit(checkout, right or 'HEAD')}"
    if since is not None:
        return f"{resolve_commit(checkout, since)}..{resolve_commit(checkout, 'HEAD')}"
    return resolve_commit(checkout, "HEAD")


def first_parent_commits(checkout: Path, *, since: str | None = None, range_: str | None = None,
                         limit: int | None = None) -> list[str]:
    """The first-parent commits of `A..B` (`range_`), of `since..HEAD`, or of HEAD's whole
    history, oldest first; with `limit`, the newest `limit` of them."""
    args = ["rev-list", "--first-parent"]
    if limit is not None:
        args.append(f"--max-count={limit}")
    shas = _git(checkout, *args, _spec(checkout, since, range_), "--").decode().split()
    return list(reversed(shas))


def changes_between(checkout: Path, old: str, new: str) -> tuple[Change, ...]:
    """The paths that differ between two commits, as `new` changes them."""
    raw = _git(checkout, "diff-tree", "-r", "-z", "--no-commit-id", "--name-status", "--no-renames",
               old, new)
    parts = raw.decode(errors="surrogateescape").split("\0")
    return tuple(Change(path=parts[i + 1], status=parts[i][:1])
                 for i in range(0, len(parts) - 1, 2) if parts[i])


@dataclass(frozen=True)
class ReflogEntry:
    """One move of HEAD: where it went, when (whole seconds, as git keeps them), and why."""

    sha: str
    at: int
    action: str
    """git's words, such as `commit: fix add` or `checkout: moving from a to b`."""


def head_reflog(checkout: Path) -> list[ReflogEntry]:
    """HEAD's reflog in the checkout, oldest first (empty when it has none)."""
    raw = _git(checkout, "reflog", "show", "--date=unix", "--format=%H%x1f%gd%x1f%gs", "HEAD", "--",
               ok_codes=(0, 128)).decode(errors="replace")
    entries = []
    for line in raw.splitlines():
        sha, selector, action = (line.split("\x1f", 2) + ["", ""])[:3]
        stamp = selector.rpartition("@{")[2].rstrip("}")
        if stamp.isdigit():
            entries.append(ReflogEntry(sha=sha, at=int(stamp), action=action))
    return list(reversed(entries))


def is_ancestor(checkout: Path, ancestor: str, descendant: str) -> bool:
    """Whether `ancestor` is `descendant` or one of its ancestors."""
    command = ["git", "-c", "core.hooksPath=/dev/null", "merge-base", "--is-ancestor", ancestor, descendant]
    done = subprocess.run(command, cwd=checkout, env=git_env(), capture_output=True,
                          stdin=subprocess.DEVNULL)
    return done.returncode == 0


def first_parent_facts(checkout: Path, *, since: str | None = None,
                       range_: str | None = None) -> list[CommitFacts]:
    """`commit_facts` of every commit `first_parent_commits` gives, oldest first, in one git call
    (a merge's changes are against its first parent)."""
    raw = _git(checkout, "log", "-z", "--first-parent", "--no-renames", "--name-status",
               "--diff-merges=first-parent", f"--format={_SEP}%H\x1f%P\x1f%s\x1f%b\x1f",
               _spec(checkout, since, range_), "--").decode(errors="surrogateescape")
    found = []
    for record in raw.split(_SEP)[1:]:
        head, _, tail = record.partition("\x1f\0")
        full, parents, subject, body = (head.split("\x1f", 3) + ["", "", ""])[:4]
        parts = tail.lstrip("\n").split("\0")
        changes = tuple(Change(path=parts[i + 1], status=parts[i][:1])
                        for i in range(0, len(parts) - 1, 2) if parts[i] and parents)
        found.append(CommitFacts(sha=full, parents=tuple(parents.split()), subject=subject.strip(),
                                 body=body.strip(), changes=changes))
    return list(reversed(found))


def read_at(checkout: Path, sha: str, path: str) -> bytes | None:
    """A file's bytes at a commit, or None where the commit has no such file."""
    return files_at(checkout, sha, [path]).get(path)


def files_at(checkout: Path, sha: str, paths: Sequence[str]) -> dict[str, bytes]:
    """The bytes of those of `paths` that are files at a commit, in one `git cat-file --batch`."""
    wanted = [p for p in dict.fromkeys(paths) if "\n" not in p]
    if not wanted:
        return {}
    command = ["git", "-c", "core.hooksPath=/dev/null", "cat-file", "--batch"]
    done = subprocess.run(command, cwd=checkout, env=git_env(), capture_output=True,
                          input="".join(f"{sha}:{p}\n" for p in wanted).encode("utf-8", "surrogateescape"))
    if done.returncode != 0:
        raise GitError(expected=f"`git cat-file --batch` to read files at {sha[:7]} in {checkout}",
                       found=done.stderr.decode(errors="replace").strip() or f"exit {done.returncode}",
                       fix="Run armbench in a git checkout of the project.")
    out, at, found = done.stdout, 0, {}
    for path in wanted:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        at = end + 1
        if len(header) == 3 and header[1] in (b"blob", b"tree", b"commit", b"tag"):
            size = int(header[2])
            if header[1] == b"blob":
                found[path] = out[at:at + size]
            at += size + 1
    return found


def tree_paths(checkout: Path, sha: str) -> list[str]:
    """Every file path at a commit."""
    raw = _git(checkout, "ls-tree", "-r", "-z", "--name-only", sha)
    return [p for p in raw.decode(errors="surrogateescape").split("\0") if p]


def added_lines(checkout: Path, old: str, new: str) -> list[str]:
    """The lines `new` adds against `old` (every file), without the `+`."""
    raw = _git(checkout, "diff", "--no-color", "--no-ext-diff", "-U0", old, new)
    return [line[1:] for line in raw.decode(errors="replace").splitlines()
            if line.startswith("+") and not line.startswith("+++")]


def origin_url(checkout: Path) -> str | None:
    """The checkout's `origin` remote URL, or None when it has none."""
    out = _git(checkout, "config", "--get", "remote.origin.url", ok_codes=(0, 1)).decode().strip()
    return out or None
