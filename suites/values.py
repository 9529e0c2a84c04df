"""Checks of single values shared by the rules: names, arm values, repo paths, commits, team refs."""

from __future__ import annotations

import re

__all__ = ["CORRECTNESS_PREFIX", "commit_problem", "name_problem", "path_problem", "ref_problem",
           "unpublishable"]

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_SCP_URL = re.compile(r"[^\s/@]+@[^\s/:]+:")
_DRIVE = re.compile(r"[A-Za-z]:[\\/]")


def name_problem(name: str) -> str | None:
    """Why `name` is not a plain name (letters, digits, `-`, `_`; up to 64), or None."""
    if _NAME.fullmatch(name):
        return None
    return (f"expected a plain name of letters, digits, `-` and `_` (up to 64, starting with a letter "
            f"or digit), found `{name}`")


def unpublishable(value: str) -> bool:
    """Whether a value looks like a URL or a local path, which must not reach a published record."""
    return ("://" in value or value.startswith(("/", "./", "../", "~")) or "\\" in value
            or bool(_SCP_URL.match(value)) or bool(_DRIVE.match(value)))


def path_problem(path: str) -> str | None:
    """Why `path` is not a path relative to the repo root, or None."""
    if not path.strip():
        return "expected a path relative to the repo root, found an empty path"
    if path.startswith("/"):
        return f"expected a path relative to the repo root, found `{path}`, which starts with `/`"
    if ".." in path.split("/"):
        return f"expected a path inside the repo, found `{path}`, which leaves it with `..`"
    return None


def commit_problem(value: str) -> str | None:
    """Why `value` is not a full 40-character lowercase commit, or None."""
    if len(value) == 40 and _HEX.fullmatch(value):
        return None if value == value.lower() else f"found `{value}` in capitals. Write it in lowercase"
    if _HEX.fullmatch(value) and len(value) < 40:
        return (f"found `{value}`, an abbreviated commit of {len(value)} characters. "
                f"Write the full commit: `git rev-parse {value}` prints it")
    return f"found `{value}`, which is not a commit. Write the 40 hex characters `git rev-parse` prints"


_REF_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def ref_problem(ref: str) -> str | None:
    """Why `ref` is not a branch, tag or commit name git accepts, or None."""
    bad = (_REF_FORBIDDEN.search(ref) or ref in ("", "@") or ref.startswith(("-", "/", "."))
           or ref.endswith(("/", ".", ".lock")) or "/." in ref)
    if not bad:
        return None
    return (f"expected a branch, tag or commit of the team repo, found `{ref}`, which git does not "
            "accept as a ref name")


CORRECTNESS_PREFIX = "armbench:correctness:"
"""The generated correctness scorer of a `successCriteria` task is named this and the task's id
(`suites.scorers.correctness_scorer`); no scorer file can take such a name."""
