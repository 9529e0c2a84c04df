"""The YAML loader: plain data, a line per msgspec-style path, and a diagnostic for each bad file."""

from __future__ import annotations

import pytest

from armbench.suites.yamlfile import MAX_BYTES, load_yaml, resolve_core

F = "benchmarks/s/suite.yaml"


def only_problem(text: str | bytes) -> tuple[int | None, str, str]:
    loaded = load_yaml(text, file=F)
    assert loaded.data is None and len(loaded.diagnostics) == 1
    d = loaded.diagnostics[0]
    assert d.file == F and d.severity == "error"
    return d.line, d.code, d.message


def test_lines_follow_msgspec_paths() -> None:
    loaded = load_yaml("""\
arms:
  - name: a
  - name: b
  -
    name: c
check:
  protect:
    - test/**
aliases:
  strong:
    codex: gpt-5
    claude: {model: opus}
""", file=F)
    assert loaded.diagnostics == []
    assert [loaded.line_of(p) for p in ["$", "$.arms", "$.arms[2]", "$.arms[2].name", "$.check.protect[0]",
                                        "$.aliases[strong][codex]", "$.aliases.strong.claude.model"]] == [
        1, 1, 5, 5, 8, 11, 12]  # an item whose `-` stands alone is at the line its value starts


def test_a_missing_path_falls_back_to_its_nearest_parent() -> None:
    loaded = load_yaml("a:\n  b: 1\n", file=F)
    assert loaded.line_of("$.a.missing") == 1 and loaded.line_of("$.a[...]") == 1
    assert loaded.line_of("$.nothing[3]") == 1


def test_a_digit_key_is_looked_up_as_a_key_after_an_index() -> None:
    loaded = load_yaml("m:\n  '0': x\nl:\n  - y\n", file=F)
    assert (loaded.line_of("$.m[0]"), loaded.line_of("$.l[0]")) == (2, 4)


def test_plain_scalars_resolve_by_the_yaml_12_core_schema() -> None:
    loaded = load_yaml("""\
a: yes
b: no
c: on
d: true
e: 12
f: 1.5
g: ~
h:
i: 0x1F
j: 0o17
k: 2024-01-01
l: '12'
m: .inf
n: 1e10
o: 017
""", file=F)
    assert loaded.data == {"a": "yes", "b": "no", "c": "on", "d": True, "e": 12, "f": 1.5, "g": None,
                           "h": None, "i": 31, "j": 15, "k": "2024-01-01", "l": "12", "m": float("inf"),
                           "n": 1e10, "o": 17}
    assert loaded.texts[("n",)] == "1e10" and loaded.texts[("o",)] == "017" and ("l",) not in loaded.texts


@pytest.mark.parametrize(("text", "value"), [
    ("1" * 5000, "1" * 5000), ("0x", "0x"), ("0o9", "0o9"), ("-.inf", float("-inf")), ("-.nan", "-.nan"),
    ("+12", 12), ("1_000", "1_000"), ("NULL", None), ("tRue", "tRue"),
])
def test_core_schema_edges(text: str, value: object) -> None:
    assert resolve_core(text) == value


def test_anchors_aliases_and_merge_keys() -> None:
    loaded = load_yaml("""\
base: &base {tool: claude, model: strong}
arms:
  - <<: *base
    name: a
    model: fast
  - *base
""", file=F)
    assert loaded.diagnostics == []
    assert loaded.data == {"base": {"tool": "claude", "model": "strong"},
                           "arms": [{"name": "a", "model": "fast", "tool": "claude"},
                                    {"tool": "claude", "model": "strong"}]}
    assert loaded.line_of("$.arms[0].tool") == 1 and loaded.line_of("$.arms[0].model") == 5


def test_a_merge_of_a_non_mapping() -> None:
    assert only_problem("a: &x 1\nb:\n  <<: *x\n")[1] == "yaml_bad_merge"


def test_empty_and_comment_only_files() -> None:
    for text in ["", "# nothing here\n", b"", "\ufeff"]:
        assert only_problem(text) == (None, "yaml_empty", "The file is empty: expected a mapping that starts "
                                      "with `schemaVersion: v1alpha1`. Write the file's keys, or delete the "
                                      "file.")


@pytest.mark.parametrize(("text", "found"), [
    ("- a\n- b\n", "a list"), ("just text\n", "the text 'just text'"), ("12\n", "the text '12'")])
def test_a_file_that_is_not_a_mapping(text: str, found: str) -> None:
    assert only_problem(text) == (1, "yaml_not_mapping", f"Expected a mapping of keys such as "
                                                         "`schemaVersion: "
                                  f"v1alpha1`, found {found}. Write the file as `key: value` lines.")


def test_binary_bytes() -> None:
    assert only_problem(b"a: 1\n\x00\x01\x02") == (None, "file_binary", "Expected UTF-8 text, found a binary "
                                                   "file (it contains NUL bytes). Replace it with YAML text.")
    assert only_problem("a: \x00")[1] == "file_binary"


def test_bytes_that_are_not_utf8() -> None:
    assert only_problem(b"a: 1\nb: caf\xe9\n") == (2, "file_not_utf8", "Expected UTF-8 text, found the byte "
                                                   "0xe9 at line 2, which is not UTF-8. Save the file as "
                                                   "UTF-8.")


def test_a_utf8_bom_is_accepted() -> None:
    assert load_yaml(b"\xef\xbb\xbfa: 1\n", file=F).data == {"a": 1}


def test_a_control_character() -> None:
    assert only_problem("a: 1\nb: \x07\n") == (2, "yaml_bad_character", "The file contains the character "
                                                                        "#x07 "
                                              "at line 2, which YAML does not allow. Remove it; a suite file "
                                              "is "
                                              "plain UTF-8 text.")


def test_a_file_over_1_mib() -> None:
    big = "a: " + "x" * MAX_BYTES + "\n"
    line, code, message = only_problem(big)
    assert (line, code) == (None, "file_too_large")
    assert message.startswith(f"The file is {len(big)} bytes, over the 1 MiB limit")
    assert only_problem(big.encode())[1] == "file_too_large"
    assert load_yaml("a: " + "x" * (MAX_BYTES - 10), file=F).diagnostics == []


def test_duplicate_keys_name_both_lines() -> None:
    loaded = load_yaml("name: a\nrepo: x\nname: b\narms:\n  - {tool: a, tool: b}\n", file=F)
    assert loaded.data is None
    assert [(d.line, d.code, d.message) for d in loaded.diagnostics] == [
        (3, "yaml_duplicate_key", "Duplicate key `name`: first at line 1, again at line 3. Remove one of "
                                  "them."),
        (5, "yaml_duplicate_key", "Duplicate key `tool`: first at line 5, again at line 5. Remove one of "
                                  "them."),
    ]


def test_malformed_yaml_gives_its_line() -> None:
    assert only_problem("name: a\narms: [a, b\nrepo: x\n") == (
        3, "yaml_syntax", "The YAML is malformed at line 3, column 5: expected ',' or ']', but got ':' "
                          "(while "
        "parsing a flow sequence). Fix the YAML there; a common cause is a missing space after `:` or an "
        "indent "
        "that does not line up.")


def test_tabs_get_a_hint() -> None:
    line, code, message = only_problem("a:\n\tb: 1\n")
    assert (line, code) == (2, "yaml_syntax") and "Indent with spaces, not tabs." in message


def test_two_documents() -> None:
    assert only_problem("a: 1\n---\nb: 2\n") == (
        2, "yaml_multiple_documents", "Expected one YAML document, found a second one starting at line 2. "
        "Remove the `---` line and merge the documents, or move the second one to its own file.")


def test_an_undefined_alias_is_a_syntax_error() -> None:
    assert only_problem("a: *nope\n")[:2] == (1, "yaml_syntax")


def test_a_recursive_alias() -> None:
    assert only_problem("a: &x [1, *x]\n") == (1, "yaml_recursive_alias", "An alias at this line refers to a "
                                               "value that contains it. Write the value out.")


def test_an_alias_bomb_stops_at_the_value_limit() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    assert only_problem("\n".join(lines) + "\n")[1] == "yaml_too_many_values"


@pytest.mark.parametrize("depth", [60, pytest.param(5000, marks=pytest.mark.slow)])
def test_deep_nesting(depth: int) -> None:
    line, code, message = only_problem("a: " + "[" * depth + "]" * depth + "\n")
    assert code == "yaml_too_deep"
    assert message == "The YAML nests deeper than 50 levels. Flatten it; suite files need a few levels."


def test_tags_other_than_str_are_refused() -> None:
    assert only_problem("a: !!binary aGk=\n") == (1, "yaml_unsupported_tag", "Expected plain YAML values, "
                                                  "found the tag `tag:yaml.org,2002:binary`. Remove the tag; "
                                                  "quote "
                                                  "the value if it is meant as text.")
    assert only_problem("a: !custom {b: 1}\n")[1] == "yaml_unsupported_tag"
    assert load_yaml("a: !!str 12\n", file=F).data == {"a": "12"}


def test_a_list_used_as_a_key() -> None:
    assert only_problem("? [a]\n: b\n")[:2] == (1, "yaml_complex_key")
