"""Operator mutations of one source file, on the lines a fix added or changed (`suites.mutants`).

Each is an `Edit`: replace `source[start:end]` with `text`. Python files are read with `ast`:
a comparison flipped or loosened (`<` ↔ `<=`, `==` ↔ `!=`), an integer off by one, a boolean
negated (`True` ↔ `False`, `not x` → `x`, a condition negated, `and` ↔ `or`), a returned value
replaced by `None`, a call's positional argument dropped; an edit whose result does not parse
is dropped. JavaScript, TypeScript, Go and Rust files are read as tokens outside strings and
comments: a comparison between spaces (` < `, as comparisons are written and generics are not),
`===`/`!==`/`==`/`!=`, `&&` ↔ `||`, `true` ↔ `false`, an integer off by one. Other files get
none (their partial fixes still count). Pure.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator, Set
from dataclasses import dataclass
from typing import Literal

__all__ = ["Edit", "operator_edits"]

_Span = Callable[[ast.expr | ast.stmt], tuple[int, int]]

EditKind = Literal["comparison", "constant", "boolean", "return", "argument"]
TOKEN_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".go", ".rs")


@dataclass(frozen=True)
class Edit:
    """One mutation: `source[start:end]` becomes `text`."""

    kind: EditKind
    line: int
    start: int
    end: int
    text: str


def operator_edits(path: str, source: str, lines: Set[int]) -> list[Edit]:
    """The file's mutations on `lines` (1-based), in source order."""
    if path.endswith(".py"):
        return _python(source, lines)
    if path.endswith(TOKEN_SUFFIXES):
        return _tokens(source, lines)
    return []


# ------------------------------------------------------------------------------------- Python

_FLIP = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "=="}
_SPELLED = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _python(source: str, lines: Set[int]) -> list[Edit]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def at(line: int, col: int) -> int:  # ast columns are UTF-8 byte offsets
        text = source[starts[line - 1]:starts[line] if line < len(starts) else len(source)]
        return starts[line - 1] + len(text.encode()[:col].decode(errors="ignore"))

    def span(node: ast.expr | ast.stmt) -> tuple[int, int]:
        assert node.end_lineno is not None and node.end_col_offset is not None
        return at(node.lineno, node.col_offset), at(node.end_lineno, node.end_col_offset)

    edits = [e for node in ast.walk(tree) if getattr(node, "lineno", None) in lines
             for e in _python_node(node, source, span)]
    return sorted((e for e in edits if _parses(source, e)), key=lambda e: (e.start, e.end, e.text))


def _python_node(node: ast.AST, source: str, span: _Span) -> Iterator[Edit]:
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Compare):
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            if type(op) in _FLIP:
                gap = (span(left)[1], span(right)[0])
                found = source.find(_SPELLED[type(op)], *gap)
                if found >= 0:
                    yield Edit("comparison", line, found, found + len(_SPELLED[type(op)]), _FLIP[type(op)])
            left = right
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield Edit("boolean", line, *span(node), str(not node.value))
    elif isinstance(node, ast.Constant) and isinstance(node.value, int):
        yield Edit("constant", line, *span(node), str(node.value + 1))
        if node.value > 0:
            yield Edit("constant", line, *span(node), str(node.value - 1))
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        start, end = span(node.operand)
        yield Edit("boolean", line, span(node)[0], span(node)[1], source[start:end])
    elif isinstance(node, ast.BoolOp):
        word, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        gap = (span(node.values[0])[1], span(node.values[1])[0])
        found = source.find(word, *gap)
        if found >= 0:
            yield Edit("boolean", line, found, found + len(word), other)
    elif isinstance(node, (ast.If, ast.While)) and node.test.lineno == line:
        start, end = span(node.test)
        yield Edit("boolean", line, start, end, f"not ({source[start:end]})")
    elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None):
        yield Edit("return", line, *span(node.value), "None")
    elif isinstance(node, ast.Call) and node.args and not node.keywords:
        args = node.args
        for i, arg in enumerate(args):
            if isinstance(arg, ast.Starred):
                continue
            if i + 1 < len(args):
                yield Edit("argument", line, span(arg)[0], span(args[i + 1])[0], "")
            elif i > 0:
                yield Edit("argument", line, span(args[i - 1])[1], span(arg)[1], "")
            else:
                yield Edit("argument", line, *span(arg), "")


def _parses(source: str, edit: Edit) -> bool:
    try:
        ast.parse(source[:edit.start] + edit.text + source[edit.end:])
    except (SyntaxError, ValueError):
        return False
    return True


# ------------------------------------------------------------------------ tokens (JS, TS, Go, Rust)

_TOKEN = re.compile(r"(?<=\s)(<=|>=|<|>)(?=\s)|===|!==|==|!=|&&|\|\||\btrue\b|\bfalse\b"
                    r"|(?<![\w.])\d+(?![\w.])")
_SWAP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "===": "!==", "!==": "===", "==": "!=",
         "!=": "==", "&&": "||", "||": "&&", "true": "false", "false": "true"}


def _tokens(source: str, lines: Set[int]) -> list[Edit]:
    edits: list[Edit] = []
    for start, end in _code_spans(source):
        text = source[start:end]
        for m in _TOKEN.finditer(text):
            at = start + m.start()
            number = source.count("\n", 0, at) + 1
            if number not in lines:
                continue
            word = m.group(0)
            if word.isdigit():
                edits.append(Edit("constant", number, at, at + len(word), str(int(word) + 1)))
            else:
                kind: EditKind = "boolean" if word in ("true", "false", "&&", "||") else "comparison"
                edits.append(Edit(kind, number, at, at + len(word), _SWAP[word]))
    return edits


def _code_spans(source: str) -> Iterator[tuple[int, int]]:
    """The parts of the source outside string literals and comments."""
    i, start, n = 0, 0, len(source)
    while i < n:
        c = source[i]
        two = source[i:i + 2]
        if two in ("//", "/*") or c in "\"'`":
            if i > start:
                yield start, i
            if two == "//":
                i = source.find("\n", i)
                i = n if i < 0 else i
            elif two == "/*":
                i = source.find("*/", i + 2)
                i = n if i < 0 else i + 2
            else:
                i = _string_end(source, i, c)
            start = i
            continue
        i += 1
    if start < n:
        yield start, n


def _string_end(source: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(source):
        if source[j] == "\\":
            j += 2
            continue
        if source[j] == quote:
            return j + 1
        if source[j] == "\n" and quote != "`":
            return j  # an unterminated quote (a Rust lifetime, a char): ends at the line's end
        j += 1
    return len(source)
