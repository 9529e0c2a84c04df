"""Decode loaded YAML into a Struct, reporting every wrong type, unknown key and missing key at once.

msgspec stops at the first error and names no line, so the data is first walked against the
Struct's type (`msgspec.inspect`): each problem becomes a diagnostic at its line, and a plain
scalar where the type wants text gets its source text back. Only then does msgspec build the value.
"""

from __future__ import annotations

import difflib
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

from armbench.suites.diagnostics import Diagnostic, from_validation_error
from armbench.suites.yamlfile import LoadedYaml, Path, load_yaml

__all__ = ["Where", "decode_file", "describe_found", "label"]

T = TypeVar("T")
_SCALARS = (mi.StrType, mi.LiteralType)


class Where(msgspec.Struct, frozen=True):
    """A value's msgspec-style path (`$.arms[2].name`) and its segments in the loaded data."""

    path: str = "$"
    """The msgspec-style path."""
    segments: Path = ()
    """The same path as keys and indexes, for the loader's line and text maps."""

    def field(self, key: str) -> Where:
        """The path of a Struct field."""
        return Where(f"{self.path}.{key}", (*self.segments, key))

    def entry(self, key: str | int) -> Where:
        """The path of a list item or a dict entry."""
        return Where(f"{self.path}[{key}]", (*self.segments, key))


def label(path: str) -> str:
    """`$.arms[2].name` as messages start with it: `arms[2].name`; the root is ``."""
    return path.removeprefix("$").removeprefix(".")


def decode_file(
    text: str | bytes, kind: type[T], *, file: str
) -> tuple[T | None, LoadedYaml, list[Diagnostic]]:
    """Load `text` and decode it as `kind`: the value, or None and the diagnostics."""
    loaded = load_yaml(text, file=file)
    if loaded.data is None:
        return None, loaded, loaded.diagnostics
    walker = _Walker(loaded)
    data = walker.value(loaded.data, _type_info(kind), Where(), {})
    if walker.diagnostics:
        return None, loaded, walker.diagnostics
    try:
        return msgspec.convert(data, kind), loaded, []
    except msgspec.ValidationError as error:  # a type the walker does not know; never expected
        return None, loaded, [from_validation_error(error, file=file, line_of=loaded.line_of)]


_TYPE_INFO: dict[object, mi.Type] = {}


def _type_info(kind: object) -> mi.Type:
    """`msgspec.inspect`'s view of a Struct type, built once per type (the walker only reads it;
    building it was most of a small file's decode)."""
    found = _TYPE_INFO.get(kind)
    if found is None:
        found = _TYPE_INFO[kind] = mi.type_info(kind)
    return found


def describe_found(value: object, text: str | None = None) -> str:
    """A value as a message shows what was found: `7`, `` `abc` ``, `nothing`, `a list of 2 items`."""
    if text is not None:
        return text if text else "nothing"
    if value is None:
        return "nothing"
    if isinstance(value, str):
        shown = value if len(value) <= 60 else value[:57] + "..."
        return f"`{shown}`" if shown.strip() else "an empty text"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'s' * (len(value) != 1)}"
    if isinstance(value, dict):
        return "a mapping"
    return str(value).lower() if isinstance(value, bool) else str(value)


class _Walker:
    def __init__(self, loaded: LoadedYaml) -> None:
        self.loaded = loaded
        self.diagnostics: list[Diagnostic] = []

    def value(self, value: Any, t: mi.Type, where: Where, extra: dict[str, str]) -> Any:
        if isinstance(t, mi.Metadata):
            return self.value(value, t.type, where, t.extra or extra)
        if isinstance(t, mi.UnionType):
            members = _members(t, extra)
            picked = self.pick(value, where, [m for m, _ in members])
            if picked is None:
                return self.wrong(value, t, where, next((e for _, e in members if e), extra))
            return self.value(value, members[picked][0], where, members[picked][1])
        if isinstance(t, mi.StructType):
            return self.struct(value, t, where, extra)
        if isinstance(t, (mi.ListType, mi.VarTupleType)):
            if not isinstance(value, list):
                return self.wrong(value, t, where, extra)
            return [self.value(item, t.item_type, where.entry(i), {}) for i, item in enumerate(value)]
        if isinstance(t, mi.DictType):
            if not isinstance(value, dict):
                return self.wrong(value, t, where, extra)
            return {key: self.value(item, t.value_type, where.entry(key), {}) for key, item in value.items()}
        if isinstance(t, _SCALARS) and value is not None and not isinstance(value, str) \
                and where.segments in self.loaded.texts:
            value = self.loaded.texts[where.segments]  # `no`, `123`, `1e10`: the characters as written
        if isinstance(t, mi.LiteralType) and value not in t.values:
            return self.wrong(value, t, where, extra)
        if not _fits(value, t):
            return self.wrong(value, t, where, extra)
        return value

    def pick(self, value: Any, where: Where, types: list[mi.Type]) -> int | None:
        """The union member a value is meant for, by its kind; text stands in for a plain scalar."""
        for index, t in enumerate(types):
            if isinstance(t, (mi.StructType, mi.DictType)):
                if isinstance(value, dict):
                    return index
            elif isinstance(t, (mi.ListType, mi.VarTupleType)):
                if isinstance(value, list):
                    return index
            elif _fits(value, t):
                return index
        if value is not None and where.segments in self.loaded.texts:
            return next((i for i, t in enumerate(types) if isinstance(t, _SCALARS)), None)
        return None

    def struct(self, value: Any, t: mi.StructType, where: Where, extra: dict[str, str]) -> Any:
        if not isinstance(value, dict):
            return self.wrong(value, t, where, extra)
        fields = {f.encode_name: f for f in t.fields}
        result = {}
        for key, item in value.items():
            if key in fields:
                result[key] = self.value(item, fields[key].type, where.field(key), {})
            elif t.forbid_unknown_fields:
                self.unknown(key, list(fields), where)
        for f in t.fields:
            if f.required and f.encode_name not in value:
                self.missing(f, where)
        return result

    def wrong(self, value: Any, t: mi.Type, where: Where, extra: dict[str, str]) -> Any:
        expected = extra.get("expected") or extra.get("must") or _describe(t)
        found = describe_found(value, self.loaded.texts.get(where.segments))
        fix = extra.get("fix") or (f"Write `{extra['example']}` or similar." if "example" in extra
                                   else f"Change it to {expected}.")
        code = extra.get("code") or ("invalid_value" if isinstance(t, mi.LiteralType) else "wrong_type")
        wording = f"must be {extra['must']}" if "must" in extra else f"expected {expected}"
        self.report(where.path, where.path, code, f"{wording}, found {found}. {fix}")
        return value

    def unknown(self, key: str, names: list[str], where: Where) -> None:
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
        hint = f" Did you mean `{close[0]}`?" if close else ""
        key_path = where.field(key).path
        self.report(where.path, key_path, "unknown_field",
                    f"unknown key `{key}`; expected one of {', '.join(names)}.{hint} "
                    "Remove it, or fix its spelling.", line_path=key_path)

    def missing(self, f: mi.Field, where: Where) -> None:
        extra = (f.type.extra if isinstance(f.type, mi.Metadata) else None) or {}
        fix = extra.get("missing_fix") or (
            f"Add `{f.encode_name}: {extra['example']}`." if "example" in extra
            else f"Add `{f.encode_name}:` with {extra.get('expected') or _describe(f.type)}.")
        self.report(where.path, where.field(f.encode_name).path, extra.get("missing_code", "missing_field"),
                    f"missing `{f.encode_name}`, which is required. {fix}")

    def report(
        self, label_path: str, path: str, code: str, message: str, *, line_path: str | None = None
    ) -> None:
        """An error about `path`, worded from `label_path`, at the line of `line_path` (else `label_path`)."""
        shown = label(label_path)
        text = f"{shown}: {message}" if shown else message[0].upper() + message[1:]
        self.diagnostics.append(Diagnostic(
            file=self.loaded.file, line=self.loaded.line_of(line_path or label_path), severity="error",
            code=code, path=path, message=text))


def _members(t: mi.UnionType, extra: dict[str, str]) -> list[tuple[mi.Type, dict[str, str]]]:
    """A union's members with nested unions flattened, each with the diagnostic wording it carries."""
    found: list[tuple[mi.Type, dict[str, str]]] = []
    for member in t.types:
        inner = extra
        while isinstance(member, mi.Metadata):
            inner, member = member.extra or inner, member.type
        found += _members(member, inner) if isinstance(member, mi.UnionType) else [(member, inner)]
    return found


def _unwrap(t: mi.Type) -> mi.Type:
    return _unwrap(t.type) if isinstance(t, mi.Metadata) else t


def _fits(value: Any, t: mi.Type) -> bool:
    """Whether a scalar value has the kind a scalar type wants (constraints are checked by rules)."""
    t = _unwrap(t)
    if isinstance(t, mi.StrType):
        return isinstance(value, str)
    if isinstance(t, mi.LiteralType):
        return value in t.values and type(value) in {type(v) for v in t.values}
    if isinstance(t, mi.IntType):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(t, mi.FloatType):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(t, mi.BoolType):
        return isinstance(value, bool)
    if isinstance(t, mi.NoneType):
        return value is None
    return isinstance(t, mi.AnyType)


def _describe(t: mi.Type) -> str:
    t = _unwrap(t)
    if isinstance(t, mi.UnionType):
        names = [_describe(m) for m in t.types if not isinstance(_unwrap(m), mi.NoneType)]
        return " or ".join(dict.fromkeys(names)) or "nothing"
    if isinstance(t, mi.LiteralType):
        shown = [f"`{v}`" for v in t.values]
        return shown[0] if len(shown) == 1 else "one of " + ", ".join(shown)
    kinds = {mi.StrType: "text", mi.IntType: "a whole number", mi.FloatType: "a number",
             mi.BoolType: "true or false", mi.NoneType: "nothing", mi.ListType: "a list",
             mi.VarTupleType: "a list", mi.DictType: "a mapping", mi.StructType: "a mapping"}
    return kinds.get(type(t), "a different value")
