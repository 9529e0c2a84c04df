"""The one resolver of a team repo's namespaced files: `<folder>/<name><ext>` for everyone and
`<folder>/<ns>/<name><ext>` for members who receive `<ns>`, as workflows (`workflows/`, `.yaml`),
scorers (`scorers/`, `.md`) and the workflows an arm runs are found. Pure: callers pass paths.

A file is found in the caller's own namespace first (a namespaced suite's scorer, the
namespace of the workflow that runs another), then in the one namespace of the member's active
ones that defines it, then shared. Two active namespaces that both define it are a clash the
caller refuses (`clashing`), since no order between them exists.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

__all__ = ["clashing", "in_namespaces", "reachable", "resolve"]


def _parts(path: str, folder: str, ext: str) -> tuple[str | None, str] | None:
    """(namespace or None, name) of a `folder` file ending in `ext`, else None."""
    match path.split("/"):
        case [top, file] if top == folder and file.endswith(ext):
            return None, file.removesuffix(ext)
        case [top, namespace, file] if top == folder and file.endswith(ext):
            return namespace, file.removesuffix(ext)
    return None


def in_namespaces(paths: Iterable[str], folder: str, name: str, ext: str,
                  namespaces: Collection[str]) -> tuple[str, ...]:
    """The files of `name` in `namespaces` (`<folder>/<ns>/<name><ext>`), sorted."""
    found = []
    for path in paths:
        parts = _parts(path, folder, ext)
        if parts is not None and parts[0] is not None and parts[0] in namespaces and parts[1] == name:
            found.append(path)
    return tuple(sorted(found))


def clashing(paths: Iterable[str], folder: str, name: str, ext: str,
             active: Collection[str]) -> tuple[str, ...]:
    """The files of `name` in the `active` namespaces when two or more define it, else ()."""
    found = in_namespaces(paths, folder, name, ext, active)
    return found if len(found) > 1 else ()


def resolve(paths: Collection[str], folder: str, name: str, ext: str, *, own: str | None = None,
            active: Collection[str] = ()) -> str | None:
    """The file `name` resolves to: `own`'s, else an `active` namespace's (the first in path
    order: refuse a clash before), else the shared one; None when none is there."""
    if own is not None and f"{folder}/{own}/{name}{ext}" in paths:
        return f"{folder}/{own}/{name}{ext}"
    mine = in_namespaces(paths, folder, name, ext, active)
    if mine:
        return mine[0]
    shared = f"{folder}/{name}{ext}"
    return shared if shared in paths else None


def reachable(path: str, folder: str, ext: str, namespaces: Collection[str] | None) -> str | None:
    """The name of a `folder` file a member with `namespaces` (None: every one) can name: a
    shared file's or one of their namespaces'; None otherwise."""
    parts = _parts(path, folder, ext)
    if parts is None:
        return None
    namespace, name = parts
    return name if namespace is None or namespaces is None or namespace in namespaces else None
