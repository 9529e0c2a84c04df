"""Git `:(glob)` pathspec matching, as git applies it to `check.protect` entries."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["could_match_inside", "is_glob", "is_inside", "matches", "matches_any", "names_directory"]

_GLOB_CHARS = frozenset("*?[")
_SPECIAL_CHARS = frozenset("*?[\\")  # git's is_glob_special: where the literal prefix ends
_NEVER = re.compile(b"(?!)")
_DIGIT, _UPPER, _LOWER = (0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)
_POSIX_CLASSES: dict[bytes, tuple[tuple[int, int], ...]] = {  # git's own ASCII ctype, as wildmatch uses it
    b"alnum": (_DIGIT, _UPPER, _LOWER),
    b"alpha": (_UPPER, _LOWER),
    b"blank": ((0x09, 0x09), (0x20, 0x20)),
    b"cntrl": ((0x00, 0x1F), (0x7F, 0x7F)),
    b"digit": (_DIGIT,),
    b"graph": ((0x21, 0x7E),),
    b"lower": (_LOWER,),
    b"print": ((0x20, 0x7E),),
    b"punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    b"space": ((0x09, 0x0A), (0x0D, 0x0D), (0x20, 0x20)),
    b"upper": (_UPPER,),
    b"xdigit": (_DIGIT, (0x41, 0x46), (0x61, 0x66)),
}


class _Unmatchable(Exception):
    """The pattern can never match, as wildmatch's WM_ABORT_ALL says."""


def is_glob(pattern: str) -> bool:
    """Whether the pattern holds a glob character (`*`, `?` or `[`)."""
    return any(char in _GLOB_CHARS for char in pattern)


def is_inside(path: str, other: str) -> bool:
    """Whether `path` lies strictly inside the directory `other` (`""` is the repo root)."""
    path, other = path.rstrip("/"), other.rstrip("/")
    return bool(path) and path != other and (not other or path.startswith(other + "/"))


def matches(pattern: str, path: str) -> bool:
    """Whether the repo-relative file `path` matches the pathspec `:(glob)<pattern>`."""
    # Patterns are taken as git normalizes them (no `./`, `..` or `//`); an empty one matches nothing.
    if _matches_literally(pattern, path):
        return True
    wildcard = _compile(pattern)
    return wildcard is not None and wildcard.fullmatch(_bytes(path)) is not None


def matches_any(patterns: Iterable[str], path: str) -> bool:
    """Whether `path` matches at least one of `patterns`."""
    return any(matches(pattern, path) for pattern in patterns)


def could_match_inside(patterns: Iterable[str], directory: str) -> bool:
    """Whether some file inside `directory` could match one of `patterns` (a walk may skip it if not)."""
    return any(_could_match_inside(pattern, directory.rstrip("/")) for pattern in patterns)


def names_directory(patterns: Iterable[str], path: str) -> bool:
    """Whether `path` is a directory some pattern spells out before its last `/` (`test` in `test/**`)."""
    path = path.rstrip("/")
    for pattern in patterns:
        literal = pattern[: _literal_length(pattern)]
        directory = literal[: max(literal.rfind("/"), 0)]
        if directory and (directory == path or is_inside(directory, path)):
            return True
    return False


def _could_match_inside(pattern: str, directory: str) -> bool:
    literal = pattern[: _literal_length(pattern)]
    if literal == pattern:
        target = pattern.rstrip("/")
        return target == directory or is_inside(target, directory) or is_inside(directory, target)
    literal_dir, inside = literal[: literal.rfind("/") + 1], directory + "/"
    return inside.startswith(literal_dir) or literal_dir.startswith(inside)


def _matches_literally(pattern: str, path: str) -> bool:
    """Git compares the whole pattern as a literal path or directory prefix before any wildcard."""
    if not pattern or not path.startswith(pattern):
        return False
    return len(path) == len(pattern) or pattern.endswith("/") or path[len(pattern)] == "/"


def _literal_length(pattern: str) -> int:
    return next((i for i, char in enumerate(pattern) if char in _SPECIAL_CHARS), len(pattern))


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


@lru_cache(maxsize=1024)
def _compile(pattern: str) -> re.Pattern[bytes] | None:
    """Git matches the literal prefix as bytes, then wildmatches the rest (None: nothing to wildmatch)."""
    literal_length = _literal_length(pattern)
    if literal_length == len(pattern):
        return None
    raw = _bytes(pattern)
    split = len(_bytes(pattern[:literal_length]))
    try:
        return re.compile(re.escape(raw[:split]) + _translate(raw[split:]), re.DOTALL)
    except _Unmatchable:
        return _NEVER


def _translate(pattern: bytes) -> bytes:
    """Translate wildmatch (WM_PATHNAME) into a regex: `*`, `?` and classes never match `/`."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i : i + 1]
        if char == b"*":
            piece, i = _stars(pattern, i)
        elif char == b"?":
            piece, i = b"[^/]", i + 1
        elif char == b"[":
            piece, i = _bracket(pattern, i + 1)
        elif char == b"\\":
            piece, i = re.escape(_at(pattern, i + 1)), i + 2
        else:
            piece, i = re.escape(char), i + 1
        out.append(piece)
    return b"".join(out)


def _stars(pattern: bytes, start: int) -> tuple[bytes, int]:
    """`**` between slashes (or the ends) crosses directories; any other run of stars does not."""
    end = start
    while pattern[end : end + 1] == b"*":
        end += 1
    bounded_before = start == 0 or pattern[start - 1 : start] == b"/"
    rest = pattern[end:]
    if end - start == 1 or not bounded_before or not (rest == b"" or rest[:1] == b"/" or rest[:2] == b"\\/"):
        return b"[^/]*", end
    if rest[:1] == b"/":
        return b"(?:.*/)?", end + 1
    return b".*", end


def _bracket(pattern: bytes, i: int) -> tuple[bytes, int]:
    """A `[...]` class read the way wildmatch reads it; returns the regex and the index after `]`."""
    negated = pattern[i : i + 1] in (b"!", b"^")
    i += negated
    ranges: list[tuple[int, int]] = []
    previous, first = 0, True
    while first or _at(pattern, i) != b"]":
        first, char = False, _at(pattern, i)[0]
        if char == 0x5C:  # backslash
            i += 1
            previous = _at(pattern, i)[0]
            ranges.append((previous, previous))
        elif char == 0x2D and previous and pattern[i + 1 : i + 2] not in (b"", b"]"):  # a range
            i += 1 + (pattern[i + 1 : i + 2] == b"\\")
            ranges.append((previous, _at(pattern, i)[0]))
            previous = 0
        elif char == 0x5B and pattern[i + 1 : i + 2] == b":" and _class_end(pattern, i) is not None:
            end = _class_end(pattern, i)
            assert end is not None
            ranges.extend(_named_class(pattern[i + 2 : end - 1]))
            previous, i = 0, end
        else:
            previous = char
            ranges.append((char, char))
        i += 1
    return _class_regex(ranges, negated), i + 1


def _class_end(pattern: bytes, i: int) -> int | None:
    """Index of the `]` closing `[:name:]` at `i`, or None when it is a plain `[` (no `:]`)."""
    end = pattern.find(b"]", i + 2)
    if end < 0:
        raise _Unmatchable
    return end if end - 1 >= i + 2 and pattern[end - 1 : end] == b":" else None


def _named_class(name: bytes) -> tuple[tuple[int, int], ...]:
    """The ranges of `[:name:]`; an unknown name makes the whole pattern unmatchable, as in wildmatch."""
    if name not in _POSIX_CLASSES:
        raise _Unmatchable
    return _POSIX_CLASSES[name]


def _class_regex(ranges: list[tuple[int, int]], negated: bool) -> bytes:
    body = b"".join(b"\\x%02x-\\x%02x" % (low, high) for low, high in ranges if low <= high)
    return b"[^%s/]" % body if negated else (b"(?!/)[%s]" % body if body else b"(?!)")


def _at(pattern: bytes, i: int) -> bytes:
    """The byte at `i`; running off the end is wildmatch's WM_ABORT_ALL."""
    if i >= len(pattern):
        raise _Unmatchable
    return pattern[i : i + 1]
