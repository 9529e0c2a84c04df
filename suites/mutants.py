"""Mutants of a task's fix: wrong fixes a strong check rejects (`armbench try --strength`).

Made from the fix's non-test change alone (the files it changes that `protect` and `check.add`
do not name), as the source files at the starting commit and at the fix:

- **partial fixes**: each hunk of the change reverted alone, and the whole change reverted but
  for one hunk (where the change has two hunks or more);
- **operator mutants** on the lines the fix added or changed (`suites.mutators`): a comparison
  flipped or loosened, a constant off by one, a boolean negated, a returned value replaced, a
  call's argument dropped; for Python with its `ast` (every mutant still parses), for
  JavaScript, TypeScript, Go and Rust by tokens outside strings and comments.

At most `limit` of them, the same on every machine: the partial fixes first in file and line
order, then the operator mutants in the order of a hash of the fix's commit and the mutant.
A mutant whose files equal the fix's or the starting commit's is never made (the check is
already known to pass or fail there). Pure: callers pass bytes.
"""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Mapping
from typing import Literal

import msgspec

from armbench.suites.mutators import Edit, operator_edits

__all__ = ["FileChange", "Mutant", "MutantKind", "mutants_of"]

FileChange = tuple[bytes | None, bytes | None]
"""A file as the starting commit has it and as the fix has it (None: not there)."""

MutantKind = Literal["hunk_reverted", "only_hunk", "comparison", "constant", "boolean", "return",
                     "argument"]


class Mutant(msgspec.Struct, frozen=True, kw_only=True):
    """A wrong fix: the fix with some files replaced."""

    id: str
    """Stable across machines: kind, file, line and a short hash of the edit."""
    kind: MutantKind
    file: str
    """The file it changes (the first, for a partial fix that spans files)."""
    line: int
    """Where, in the fix's version of `file` (1-based)."""
    diff: str
    """What it changes in the fix, as a unified diff (fix → mutant)."""
    files: dict[str, bytes | None]
    """The files that differ from the fix, with their mutant bytes (None: removed)."""


def mutants_of(change: Mapping[str, FileChange], *, seed: str, limit: int) -> list[Mutant]:
    """At most `limit` mutants of the change (`seed`: the fix's commit, which orders them)."""
    texts = {path: pair for path, pair in sorted(change.items()) if _text(pair)}
    partial = _partial_fixes(texts)
    operators = sorted(_operator_mutants(texts), key=lambda m: _order(seed, m.id))
    start = {path: before for path, (before, _after) in texts.items()}
    chosen: list[Mutant] = []
    seen: set[tuple[tuple[str, bytes | None], ...]] = set()
    for mutant in [*partial, *operators]:
        key = tuple(sorted(mutant.files.items()))
        whole = {path: mutant.files.get(path, after) for path, (_before, after) in texts.items()}
        if not mutant.files or whole == start or key in seen:
            continue
        seen.add(key)
        chosen.append(mutant)
        if len(chosen) == limit:
            break
    return chosen


def _text(pair: FileChange) -> bool:
    """Both sides absent or UTF-8 text, and not the same bytes."""
    before, after = pair
    try:
        for side in (before, after):
            if side is not None:
                side.decode()
    except UnicodeDecodeError:
        return False
    return before != after


def _lines(data: bytes | None) -> list[str]:
    return [] if data is None else data.decode().splitlines(keepends=True)


def _join(lines: list[str], absent: bool) -> bytes | None:
    return None if absent and not lines else "".join(lines).encode()


def _hunks(before: bytes | None, after: bytes | None) -> list[tuple[str, int, int, int, int]]:
    """The change's non-equal opcodes (tag, i1, i2, j1, j2) on lines."""
    matcher = difflib.SequenceMatcher(None, _lines(before), _lines(after), autojunk=False)
    return [op for op in matcher.get_opcodes() if op[0] != "equal"]


def _with(before: bytes | None, after: bytes | None, keep: set[int]) -> bytes | None:
    """The file with only the hunks numbered in `keep` applied to `before`."""
    a, b = _lines(before), _lines(after)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    out: list[str] = []
    hunk = 0
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out += a[i1:i2]
            continue
        out += b[j1:j2] if hunk in keep else a[i1:i2]
        hunk += 1
    whole = len(keep) == len(_hunks(before, after))
    return _join(out, absent=(after if whole else before) is None)


def _partial_fixes(texts: Mapping[str, FileChange]) -> list[Mutant]:
    every = [(path, n, op) for path, (before, after) in texts.items()
             for n, op in enumerate(_hunks(before, after))]
    if len(every) < 2:
        return []
    found: list[Mutant] = []
    for path, n, op in every:
        before, after = texts[path]
        count = len(_hunks(before, after))
        reverted = _with(before, after, set(range(count)) - {n})
        found.append(_mutant("hunk_reverted", path, op[3] + 1, {path: reverted}, texts))
    for path, n, op in every:
        files = {other: texts[other][0] for other in texts if other != path}
        before, after = texts[path]
        files[path] = _with(before, after, {n})
        found.append(_mutant("only_hunk", path, op[3] + 1, files, texts))
    return found


def _operator_mutants(texts: Mapping[str, FileChange]) -> list[Mutant]:
    found: list[Mutant] = []
    for path, (before, after) in texts.items():
        if after is None:
            continue
        added = {line for _tag, _i1, _i2, j1, j2 in _hunks(before, after) for line in range(j1 + 1, j2 + 1)}
        source = after.decode()
        for edit in operator_edits(path, source, added):
            mutated = source[:edit.start] + edit.text + source[edit.end:]
            if mutated != source:
                found.append(_mutant(edit.kind, path, edit.line, {path: mutated.encode()}, texts, edit))
    return found


def _mutant(kind: MutantKind, path: str, line: int, files: dict[str, bytes | None],
            texts: Mapping[str, FileChange], edit: Edit | None = None) -> Mutant:
    files = {p: data for p, data in files.items() if data != texts[p][1]}
    digest = hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()[:8]
    return Mutant(id=f"{kind}:{path}:{line}:{digest}", kind=kind, file=path, line=line,
                  diff=_diff(files, texts), files=files)


def _diff(files: Mapping[str, bytes | None], texts: Mapping[str, FileChange]) -> str:
    out: list[str] = []
    for path, data in sorted(files.items()):
        fix = texts[path][1]
        old = f"a/{path}" if fix is not None else "/dev/null"
        new = f"b/{path}" if data is not None else "/dev/null"
        out += difflib.unified_diff(_lines(fix), _lines(data), old, new, n=1)
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def _order(seed: str, mutant_id: str) -> str:
    return hashlib.sha256(f"{seed}\0{mutant_id}".encode()).hexdigest()
