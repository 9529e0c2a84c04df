"""The run's work folder (clones, rooms, prompts, tool copies) and deleting what a trial leaves.

Apart from `workspace.py` (which reaches git) so that what only removes a finished clone or names
the folder (`workflow report`, `workflow launch`, leftovers) starts without git."""

from __future__ import annotations

import os
import pwd
import stat
import tempfile
import threading
from pathlib import Path

from armbench.edge import overlay, tree
from armbench.edge.errors import WorkFolderUnusable
from armbench.edge.proc import remove_in_process
from armbench.edge.sandbox import Room

__all__ = ["discard", "remove_tree", "settle_discards", "usable_work_base", "work_base",
           "work_folder_name", "work_root"]

_discards: list[threading.Thread] = []


def work_folder_name() -> str:
    """The name of this user's folder of runs in the system's temporary folder: one per user,
    so a folder another user (root, a CI job) made is never this user's to write in."""
    return f"armbench-work-{os.getuid()}"


def work_base() -> Path:
    """Where this user's runs' work folders are: `<TMPDIR>/armbench-work-<uid>`."""
    return Path(tempfile.gettempdir()) / work_folder_name()


def work_root(run: str) -> Path:
    """The run's folder for clones, prompts and tool copies: outside any checkout."""
    return work_base() / run


def usable_work_base() -> Path:
    """The user's work base, made owner-only where it is missing; WorkFolderUnusable, before any
    run exists, where it is a link, not a folder, another user's, or writable by others."""
    base = work_base()
    try:
        base.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise WorkFolderUnusable(str(base), f"that it cannot be made ({exc.strerror})") from None
    found = base.lstat()
    if stat.S_ISLNK(found.st_mode):
        raise WorkFolderUnusable(str(base), "a link")
    if not stat.S_ISDIR(found.st_mode):
        raise WorkFolderUnusable(str(base), "a file that is not a folder")
    if found.st_uid != os.getuid():
        raise WorkFolderUnusable(str(base), f"a folder owned by {_user(found.st_uid)}")
    if found.st_mode & 0o022:
        raise WorkFolderUnusable(str(base), f"a folder others can write in (mode "
                                            f"{stat.S_IMODE(found.st_mode):o})")
    return base


def _user(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def remove_tree(path: Path) -> None:
    """Remove a folder an agent may have made read-only or nested deeper than any recursion
    (`edge.tree.remove_tree`: iterative, no link followed)."""
    tree.remove_tree(path)


def _remove_in_background(paths: list[Path]) -> None:
    """`rm -rf` in its own process (it holds no lock of ours, where a Python walk of a clone's
    thousands of files holds the interpreter's), then `remove_tree` for whatever it left (a folder
    an agent made read-only, as a user other than root)."""
    remove_in_process(*paths)
    for path in paths:
        if path.exists():
            remove_tree(path)


def discard(clone: Path) -> None:
    """Take a finished clone and its trial's home and /tmp off the trial's path at once, and
    delete them in the background (one process for both): nothing a trial leaves behind survives."""
    moved: list[Path] = []
    inner = overlay.release(clone)  # an overlay: unmounted, its layers removed
    # an overlay's mount point (empty now) stays until the run's folder goes: a sandbox starting
    # meanwhile holds a copy of the holder's mounts, and bubblewrap's recursive bind of / fails
    # when the folder a copied mount sits on is renamed or removed under it
    for path in (Room.of(inner).base,) if inner != clone else (clone, Room.of(clone).base):
        if not path.exists():
            continue
        trash = path.parent.parent / "trash" / f"{path.parent.name}-{path.name}-" \
            f"{threading.get_ident()}-{len(_discards)}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.rename(trash)
        except OSError:
            remove_tree(path)
            continue
        moved.append(trash)
    if moved:
        worker = threading.Thread(target=_remove_in_background, args=(moved,), daemon=True)
        worker.start()
        _discards.append(worker)


def settle_discards() -> None:
    """Wait for background deletions to finish."""
    while _discards:
        _discards.pop().join()
