"""Load one YAML file into plain data plus the line of every value, with diagnostics, never raising.

Plain scalars resolve by the YAML 1.2 core schema (`true`, `false`, ints, floats, `null`, `~`);
everything else, `yes`, `no`, `on` and dates included, is text. The source text of each plain
scalar that resolved to a non-string is kept in `texts`, so a schema that wants text there
(a commit of all digits, `1e10...`) gets the characters as written, never a number.
"""

from __future__ import annotations

import re
from typing import Any, cast

import msgspec
import yaml

from armbench.suites.diagnostics import Diagnostic

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_VALUES", "LoadedYaml", "Path", "load_yaml", "resolve_core"]

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 50
MAX_VALUES = 100_000

Path = tuple[str | int, ...]
_STR = "tag:yaml.org,2002:str"
_PLAIN = "armbench:plain"
_COLLECTION_TAGS = {"tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"}
_TOKEN = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")


class LoadedYaml(msgspec.Struct, frozen=True, kw_only=True):
    """A loaded file: its data (None after an error), value lines, source texts and diagnostics."""

    file: str
    """The file's path relative to the repo root, as diagnostics name it."""
    data: object
    """Plain dicts, lists, str, int, float, bool and None; None when the file has an error."""
    lines: dict[Path, int]
    """1-based line per path: a mapping value's key line, a sequence item's own line; `()` is the root."""
    texts: dict[Path, str]
    """The source text of each plain scalar that resolved to int, float, bool or null."""
    diagnostics: list[Diagnostic]
    """What kept the file from loading, or an empty list."""

    def line_of(self, path: str) -> int | None:
        """The line of `$.arms[2].name` or `$.aliases[strong][codex]`, else of its nearest parent."""
        segments: Path = ()
        best = self.lines.get(())
        for dotted, bracketed in _TOKEN.findall(path.removeprefix("$")):
            token = dotted or bracketed
            choices: list[str | int] = [int(token), token] if token.isdigit() else [token]
            step = next((c for c in choices if (*segments, c) in self.lines), None)
            if step is None:
                break
            segments = (*segments, step)
            best = self.lines[segments]
        return best


class _Loader(yaml.SafeLoader):
    """SafeLoader's composer that marks untagged plain scalars instead of resolving them (YAML 1.1)."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            return _PLAIN
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]  # stubs


def load_yaml(text: str | bytes, *, file: str) -> LoadedYaml:
    """Decode, compose and convert one file; every problem is a diagnostic, never an exception."""
    decoded = _decode(text, file)
    if isinstance(decoded, Diagnostic):
        return _failed(file, [decoded])
    try:
        root = yaml.compose(decoded, Loader=_Loader)
    except yaml.MarkedYAMLError as error:
        return _failed(file, [_syntax(error, file)])
    except yaml.reader.ReaderError as error:
        line = decoded.count("\n", 0, error.position) + 1
        return _failed(file, [_error(file, line, "yaml_bad_character",
            f"The file contains the character #x{error.character:02x} at line {line}, which YAML "
            "does not allow. Remove it; a suite file is plain UTF-8 text.")])
    except yaml.YAMLError as error:
        return _failed(file, [_error(file, None, "yaml_syntax",
            f"The YAML is malformed: {error}. Fix the YAML syntax.")])
    except RecursionError:
        return _failed(file, [_too_deep(file, None)])
    if root is None:
        return _failed(file, [_error(file, None, "yaml_empty",
            "The file is empty: expected a mapping that starts with `schemaVersion: v1alpha1`. "
            "Write the file's keys, or delete the file.")])
    if not isinstance(root, yaml.MappingNode):
        found = "a list" if isinstance(root, yaml.SequenceNode) else f"the text {root.value[:40]!r}"
        return _failed(file, [_error(file, root.start_mark.line + 1, "yaml_not_mapping",
            f"Expected a mapping of keys such as `schemaVersion: v1alpha1`, found {found}. "
            "Write the file as `key: value` lines.")])
    return _Builder(file).load(root)


def _decode(text: str | bytes, file: str) -> str | Diagnostic:
    size = len(text) if isinstance(text, bytes) else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        return _error(file, None, "file_too_large",
            f"The file is {size} bytes, over the 1 MiB limit for a suite file. Keep long inputs "
            "in the project repo and refer to them from the prompt.")
    if "\x00" in text if isinstance(text, str) else b"\x00" in text:
        return _error(file, None, "file_binary",
            "Expected UTF-8 text, found a binary file (it contains NUL bytes). Replace it with YAML text.")
    if isinstance(text, str):
        return text.removeprefix("\ufeff")
    try:
        return text.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        line = text.count(b"\n", 0, error.start) + 1
        return _error(file, line, "file_not_utf8",
            f"Expected UTF-8 text, found the byte 0x{text[error.start]:02x} at line {line}, "
            "which is not UTF-8. Save the file as UTF-8.")


def _syntax(error: yaml.MarkedYAMLError, file: str) -> Diagnostic:
    mark = error.problem_mark or error.context_mark
    line = mark.line + 1 if mark else None
    if error.problem and "another document" in error.problem:
        return _error(file, line, "yaml_multiple_documents",
            f"Expected one YAML document, found a second one starting at line {line}. "
            "Remove the `---` line and merge the documents, or move the second one to its own file.")
    problem = error.problem or "invalid YAML"
    context = f" ({error.context})" if error.context else ""
    hint = " Indent with spaces, not tabs." if "\\t" in problem else ""
    column = f", column {mark.column + 1}" if mark else ""
    return _error(file, line, "yaml_syntax",
        f"The YAML is malformed at line {line}{column}: {problem}{context}.{hint} Fix the YAML there; "
        "a common cause is a missing space after `:` or an indent that does not line up.")


def _error(file: str, line: int | None, code: str, message: str) -> Diagnostic:
    return Diagnostic(file=file, line=line, severity="error", code=code, message=message)


def _too_deep(file: str, line: int | None) -> Diagnostic:
    return _error(file, line, "yaml_too_deep",
        f"The YAML nests deeper than {MAX_DEPTH} levels. Flatten it; suite files need a few levels.")


def _failed(file: str, diagnostics: list[Diagnostic]) -> LoadedYaml:
    return LoadedYaml(file=file, data=None, lines={}, texts={}, diagnostics=diagnostics)


class _Stop(Exception):
    """A problem that ends the conversion (too deep, too many values, a recursive alias)."""


class _Builder:
    """Converts composed nodes to plain data, recording lines and texts per path."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.lines: dict[Path, int] = {}
        self.texts: dict[Path, str] = {}
        self.diagnostics: list[Diagnostic] = []
        self.count = 0
        self.open: set[int] = set()

    def load(self, root: yaml.MappingNode) -> LoadedYaml:
        self.lines[()] = root.start_mark.line + 1
        try:
            data = self.node(root, ())
        except _Stop as stop:
            self.diagnostics.append(stop.args[0])
        except RecursionError:  # a long chain of `<<` merges
            self.diagnostics.append(_too_deep(self.file, None))
        failed = bool(self.diagnostics)
        return LoadedYaml(file=self.file, data=None if failed else data, lines=self.lines,
                          texts=self.texts, diagnostics=self.diagnostics)

    def node(self, node: yaml.Node, path: Path) -> object:
        line = node.start_mark.line + 1
        self.count += 1
        if self.count > MAX_VALUES:
            raise _Stop(_error(self.file, line, "yaml_too_many_values",
                f"The file expands to more than {MAX_VALUES} values (through aliases). "
                "Write the values out; suite files need a few hundred."))
        if len(path) > MAX_DEPTH:
            raise _Stop(_too_deep(self.file, line))
        if id(node) in self.open:
            raise _Stop(_error(self.file, line, "yaml_recursive_alias",
                "An alias at this line refers to a value that contains it. Write the value out."))
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, path)
        if node.tag not in _COLLECTION_TAGS:
            self.unsupported(node)
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                return [self.item(item, (*path, index)) for index, item in enumerate(node.value)]
            return self.mapping(cast(yaml.MappingNode, node), path)  # the last collection tag
        finally:
            self.open.discard(id(node))

    def item(self, node: yaml.Node, path: Path) -> object:
        self.lines[path] = node.start_mark.line + 1
        return self.node(node, path)

    def scalar(self, node: yaml.ScalarNode, path: Path) -> object:
        if node.tag == _PLAIN:
            value = resolve_core(node.value)
            if not isinstance(value, str):
                self.texts[path] = node.value
            return value
        if node.tag != _STR:
            self.unsupported(node)
        return node.value

    def mapping(self, node: yaml.MappingNode, path: Path) -> dict[str, object]:
        result: dict[str, object] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node, merged in self.pairs(node, set()):
            if not isinstance(key_node, yaml.ScalarNode):
                self.diagnostics.append(_error(self.file, key_node.start_mark.line + 1, "yaml_complex_key",
                    "Expected a plain key such as `name:`, found a list or mapping used as a key. "
                    "Use a text key."))
                continue
            key, line = key_node.value, key_node.start_mark.line + 1
            if key in first_line:
                if not merged:
                    self.diagnostics.append(_error(self.file, line, "yaml_duplicate_key",
                        f"Duplicate key `{key}`: first at line {first_line[key]}, again at line {line}. "
                        "Remove one of them."))
                continue
            first_line[key] = line
            self.lines[(*path, key)] = line
            result[key] = self.node(value_node, (*path, key))
        return result

    def pairs(self, node: yaml.MappingNode, seen: set[int]) -> list[tuple[yaml.Node, yaml.Node, bool]]:
        """Own pairs first, then `<<` merged pairs (whose keys yield to own keys)."""
        own, merged = [], []
        for key_node, value_node in node.value:
            if key_node.tag == _PLAIN and key_node.value == "<<":
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    if not isinstance(source, yaml.MappingNode) or id(source) in seen | {id(node)}:
                        raise _Stop(_error(self.file, key_node.start_mark.line + 1, "yaml_bad_merge",
                            "A `<<` merge key needs an alias of a mapping, or a list of them. "
                            "Point it at a `&anchor` mapping, or write the keys out."))
                    merged += [(k, v, True) for k, v, _ in self.pairs(source, seen | {id(node)})]
            else:
                own.append((key_node, value_node, False))
        return own + merged

    def unsupported(self, node: yaml.Node) -> None:
        self.diagnostics.append(_error(self.file, node.start_mark.line + 1, "yaml_unsupported_tag",
            f"Expected plain YAML values, found the tag `{node.tag}`. Remove the tag; "
            "quote the value if it is meant as text."))


_NULL = {"", "~", "null", "Null", "NULL"}
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_SPECIAL = {".inf": "inf", ".Inf": "inf", ".INF": "inf", ".nan": "nan", ".NaN": "nan", ".NAN": "nan"}


def resolve_core(text: str) -> object:
    """A plain scalar's value under the YAML 1.2 core schema; text that is no such value stays text."""
    if text in _NULL:
        return None
    if text in _BOOL:
        return _BOOL[text]
    try:
        if _INT.match(text):
            return int(text)
        if text.startswith(("0o", "0x")) and len(text) > 2:
            return int(text[2:], 8 if text[1] == "o" else 16)
        if _FLOAT.match(text):
            return float(text)
    except ValueError:  # digits beyond Python's int conversion limit, or not octal/hex after all
        return text
    sign, rest = (text[0], text[1:]) if text[:1] in "+-" and text[1:] in _SPECIAL else ("", text)
    if rest in _SPECIAL and (not sign or _SPECIAL[rest] == "inf"):
        return float(sign + _SPECIAL[rest])
    return text
