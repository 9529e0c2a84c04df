"""What a trial's graded change shows, as facts the flags of a suspicious pass are read from
(`projections.flags`): which files it wrote, removed and added, which of its written files change
only whitespace or comments, the test-skipping markers it adds, the modules it adds under a name
the standard library or a test runner already has, and the fix's own non-test files.

The host gathers the bytes (the change as written onto the check's tree, and the starting
commit's); this module decides nothing about the result and reads no disk.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from armbench.ledger.events import ChangeFacts, ChangeMarker
from armbench.suites.pathspec import matches_any
from armbench.suites.shadowing import SHADOWABLE

__all__ = ["change_facts", "is_test_file"]

_MARKERS = re.compile(
    r"@pytest\.mark\.(skip|skipif|xfail)\b|\bpytest\.(skip|xfail)\(|@unittest\.(skip|skipIf|"
    r"skipUnless|expectedFailure)\b|\bself\.skipTest\(|\b(it|test|describe)\.(skip|todo)\(|"
    r"\bx(it|describe|test)\(|\bt\.Skip(Now|f)?\(|#\[ignore\]")
_TEST_NAME = re.compile(r"(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go)|[^/]*\.(test|spec)\.[cm]?[jt]sx?|"
                        r"conftest\.py)$|(^|/)(tests?|__tests__|spec)/")
_COMMENT = {".py": re.compile(r"#[^\n]*"), ".sh": re.compile(r"#[^\n]*")}
_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_C_LIKE = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".go", ".rs", ".c", ".h", ".cc", ".cpp",
           ".java", ".kt", ".swift", ".cs")


def is_test_file(path: str) -> bool:
    """Whether the path names a test file or lies in a tests folder, by the common conventions."""
    return bool(_TEST_NAME.search(path))


def change_facts(files: Mapping[str, tuple[bytes | None, bytes | None]], *, removed: Collection[str],
                 added: Collection[str], protect: Collection[str],
                 fix_paths: Collection[str] | None,
                 written: Collection[str] | None = None) -> ChangeFacts:
    """The facts of a change: `written`, every path it wrote (by default `files`' paths);
    `files`, the bytes of those that were read, at the starting commit and as the change wrote
    them (a path not read is never called cosmetic). A module it adds anywhere under a
    shadowable name (`suites.shadowing`: the standard library's, a runner's) is named, where the
    root's alone are refused."""
    written = sorted(files if written is None else written)
    cosmetic = sorted(p for p, (before, after) in files.items()
                      if before is not None and after is not None and _same_code(p, before, after))
    markers: list[ChangeMarker] = []
    for path in sorted(files):
        before, after = files[path]
        if after is None or matches_any(protect, path):
            continue
        old = set(_text(before).splitlines())
        for number, line in enumerate(_text(after).splitlines(), start=1):
            if line not in old and _MARKERS.search(line):
                markers.append(ChangeMarker(path=path, line=number, text=line.strip()[:200]))
    shadowing = sorted(p for p in added if _module_name(p) in SHADOWABLE | {"conftest"}
                       and not matches_any(protect, p))
    deleted_tests = sorted(p for p in removed if is_test_file(p) and not matches_any(protect, p))
    return ChangeFacts(written=written, removed=sorted(removed), added=sorted(added),
                       cosmetic=cosmetic, markers=markers[:50], shadowing=shadowing[:50],
                       deleted_tests=deleted_tests[:50],
                       fix_paths=sorted(fix_paths) if fix_paths is not None else None)


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode(errors="replace")


def _module_name(path: str) -> str | None:
    """The module a Python file or package folder makes importable by its own name."""
    name = path.rsplit("/", 1)[-1]
    if name == "__init__.py" and "/" in path:
        return path.rsplit("/", 2)[-2]
    return name[:-3] if name.endswith(".py") else None


def _same_code(path: str, before: bytes, after: bytes) -> bool:
    """The two texts are the same once whitespace (and, where the language is known, comments)
    are taken out."""
    a, b = _text(before), _text(after)
    suffix = "." + path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""
    comment = _COMMENT.get(suffix) or (_C_COMMENT if suffix in _C_LIKE else None)
    if comment is not None:
        a, b = comment.sub("", a), comment.sub("", b)
    return "".join(a.split()) == "".join(b.split())
