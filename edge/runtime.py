"""What a program needs from the root it runs in, checked before a step starts (issue 28).

A tool's executable comes from the host (bound into the sandbox at its own path), but the files
it needs to start are looked up inside the sandbox: an ELF's dynamic loader (its `PT_INTERP`,
e.g. `/lib64/ld-linux-x86-64.so.2`) and a script's `#!` interpreter (and, for `/usr/bin/env
node`, the program it looks for on PATH). With an image as `/`, those may be missing, and the
kernel's answer is an opaque "No such file or directory" about a file that is there. This module
reads the sandbox's command line to know what it shows at each path, and names the first file a
program needs that is not there.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Missing", "Shown", "elf_interpreter", "missing_runtime", "shebang"]

_PT_INTERP = 3
_HEAD = 256


@dataclass(frozen=True)
class Missing:
    """A file a program needs to start that the sandbox does not show."""

    path: str
    """The missing file, as the sandbox would show it."""
    needed_by: str
    """The program that needs it, as the sandbox shows it."""
    why: str
    """Why it cannot start, in a sentence's words (`/x is an ELF program whose dynamic loader
    /lib64/ld-linux-x86-64.so.2 is not there`)."""


class Shown:
    """What a bubblewrap command line shows at each path: its binds, its links (`--symlink`) and
    its empty mounts (`--tmpfs`, `--dir`, `--dev`, `--proc`), in order: a later one at or below an
    earlier one covers it."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.mounts: list[tuple[str, str, str]] = []
        """(path inside, `bind`, host path), (path, `link`, target) or (path, `empty`, "")."""
        args = list(argv)
        binds = {"--bind", "--ro-bind", "--bind-try", "--ro-bind-try", "--dev-bind"}
        empty = {"--tmpfs", "--dir", "--dev", "--proc"}
        i = 1
        while i < len(args) and args[i] != "--":
            if args[i] in binds and i + 2 < len(args):
                self.mounts.append((os.path.normpath(args[i + 2]), "bind", args[i + 1]))
                i += 3
            elif args[i] == "--symlink" and i + 2 < len(args):
                self.mounts.append((os.path.normpath(args[i + 2]), "link", args[i + 1]))
                i += 3
            elif args[i] in empty and i + 1 < len(args):
                self.mounts.append((os.path.normpath(args[i + 1]), "empty", ""))
                i += 2
            else:
                i += 1

    def _at(self, inside: str) -> tuple[str, str] | None:
        """What the sandbox has at `inside` (no link followed): (`bind`, host path), (`link`,
        target), (`empty`, "") for a folder an empty mount makes, or None for nothing."""
        best: tuple[str, str] | None = None
        length = -1
        for where, kind, value in self.mounts:
            if where == "/" or inside == where or inside.startswith(where + "/"):
                if len(where) >= length:
                    length = len(where)
                    rest = inside if where == "/" else inside[len(where):]
                    if kind == "bind":
                        best = ("bind", (value.rstrip("/") + rest) or "/")
                    else:
                        best = (kind, value) if inside == where else None
        return best

    def find(self, inside: str) -> str | None:
        """The host file the sandbox shows at `inside`, links followed as the sandbox would
        (an absolute target inside the sandbox's `/`), or None when nothing is there."""
        parts, at, hops = _parts(inside), "/", 40
        host: str | None = None
        while parts:
            here = os.path.join(at, parts.pop(0))
            got = self._at(here)
            if got is None:
                return None
            kind, value = got
            target = value if kind == "link" else None
            if kind == "bind":
                try:
                    if stat.S_ISLNK(os.lstat(value).st_mode):
                        target = os.readlink(value)
                except OSError:
                    return None
            if target is not None:
                hops -= 1
                if hops == 0:
                    return None
                parts, at = _parts(os.path.join(at, target)) + parts, "/"
                continue
            at, host = here, value if kind == "bind" else None
        return host

    def on_path(self, name: str, search: str) -> str | None:
        """Where `name` is found on the PATH `search`, as the sandbox shows it."""
        for folder in search.split(os.pathsep):
            if folder.startswith("/"):
                candidate = os.path.join(folder, name)
                host = self.find(candidate)
                if host is not None and os.path.isfile(host) and os.access(host, os.X_OK):
                    return candidate
        return None


def missing_runtime(shown: Shown, program: str, search: str) -> Missing | None:
    """The first file `program` (a path inside the sandbox, or a name looked up on the PATH
    `search`) needs to start that the sandbox does not show: its dynamic loader, its `#!`
    interpreter, or what `/usr/bin/env` would look for on PATH. A program given by path that is
    itself missing is not this check's (the step ends not_found, which names its fix)."""
    if not program.startswith("/"):
        found = shown.on_path(program, search)
        if found is None:
            return Missing(program, program, f"`{program}` is not on PATH ({search})")
        program = found
    for _ in range(4):  # a script's interpreter may be a script, or env naming one
        host = shown.find(program)
        if host is None:
            return None
        loader = elf_interpreter(host)
        if loader is not None:
            return None if shown.find(loader) else Missing(
                loader, program, f"{program} is an ELF program whose dynamic loader {loader} is "
                "not there")
        line = shebang(host)
        if line is None:
            return None
        interpreter, args = line
        if shown.find(interpreter) is None:
            return Missing(interpreter, program, f"{program} is a script whose #! interpreter "
                                                 f"{interpreter} is not there")
        named = next((a for a in args if not a.startswith("-") and "=" not in a), None)
        if os.path.basename(interpreter) != "env" or named is None:
            program = interpreter
            continue
        found = named if named.startswith("/") and shown.find(named) else shown.on_path(named, search)
        if found is None:
            return Missing(named, program, f"{program} is a script run by `#!{interpreter} "
                                           f"{named}`, and {named} is not on PATH ({search})")
        program = found
    return None


def elf_interpreter(path: str) -> str | None:
    """An ELF file's `PT_INTERP` (the dynamic loader the kernel starts it with), or None (not an
    ELF file, or a static one)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) \
                    or head[5] not in (1, 2):
                return None
            wide, order = head[4] == 2, "<" if head[5] == 1 else ">"
            if wide:
                phoff, = struct.unpack_from(order + "Q", head, 32)
                entsize, count = struct.unpack_from(order + "HH", head, 54)
            else:
                phoff, = struct.unpack_from(order + "I", head, 28)
                entsize, count = struct.unpack_from(order + "HH", head, 42)
            for n in range(min(count, 256)):
                f.seek(phoff + n * entsize)
                entry = f.read(entsize)
                if len(entry) < (56 if wide else 32) \
                        or struct.unpack_from(order + "I", entry)[0] != _PT_INTERP:
                    continue
                if wide:
                    offset, = struct.unpack_from(order + "Q", entry, 8)
                    size, = struct.unpack_from(order + "Q", entry, 32)
                else:
                    offset, = struct.unpack_from(order + "I", entry, 4)
                    size, = struct.unpack_from(order + "I", entry, 16)
                f.seek(offset)
                return f.read(min(size, 4096)).split(b"\0", 1)[0].decode(errors="replace") or None
    except OSError:
        return None
    return None


def shebang(path: str) -> tuple[str, list[str]] | None:
    """A script's `#!` line: its interpreter and arguments (`env -S` split), or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if not words:
        return None
    return words[0], words[1:]


def _parts(path: str) -> list[str]:
    return [p for p in os.path.normpath("/" + path).split("/") if p]
