"""Mutants of a fix (`suites.mutants`, `suites.mutators`): partial fixes from its hunks, operator
mutants on the lines it added, each Python mutant parsing, the same list for the same fix on
every machine, and never the fix itself or the starting commit's files."""

from __future__ import annotations

import ast

from armbench.suites.mutants import mutants_of
from armbench.suites.mutators import operator_edits

BEFORE = b'''def clamp(x, low, high):
    return x


def sign(x):
    return 1


def half(x):
    return x / 2
'''
AFTER = b'''def clamp(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def sign(x):
    return -1 if x < 0 else 1


def half(x):
    return x // 2
'''


def test_partial_fixes_revert_each_hunk_alone_and_keep_each_hunk_alone() -> None:
    found = mutants_of({"calc.py": (BEFORE, AFTER)}, seed="f" * 40, limit=100)
    partial = [m for m in found if m.kind in ("hunk_reverted", "only_hunk")]
    assert sorted({m.kind for m in partial}) == ["hunk_reverted", "only_hunk"]
    assert len(partial) == 6  # three hunks: each reverted alone, each kept alone
    for m in partial:
        ast.parse(m.files["calc.py"] or b"")
        assert m.files["calc.py"] not in (BEFORE, AFTER)
    reverted_sign = next(m for m in partial if m.kind == "hunk_reverted" and m.line == 10)
    assert b"if x < low" in (reverted_sign.files["calc.py"] or b"")
    assert b"return 1\n" in (reverted_sign.files["calc.py"] or b"")
    assert "-    return -1 if x < 0 else 1\n+    return 1\n" in reverted_sign.diff


def test_operator_mutants_are_on_the_fixs_lines_and_all_parse() -> None:
    found = mutants_of({"calc.py": (BEFORE, AFTER)}, seed="f" * 40, limit=100)
    kinds = {m.kind for m in found}
    assert {"comparison", "constant", "return", "boolean"} <= kinds
    for m in found:
        ast.parse(m.files["calc.py"] or b"")
    loosened = [m for m in found
                if m.kind == "comparison" and "x <= low" in (m.files["calc.py"] or b"").decode()]
    assert len(loosened) == 1 and loosened[0].line == 2
    # `def clamp(x, low, high):` and the last `return x` were there before: never mutated
    assert not [m for m in found if m.line in (1, 6) and m.kind not in ("hunk_reverted", "only_hunk")]


def test_the_same_fix_gives_the_same_mutants_and_the_limit_keeps_the_partial_fixes_first() -> None:
    change = {"calc.py": (BEFORE, AFTER)}
    first = mutants_of(change, seed="a" * 40, limit=6)
    assert first == mutants_of(change, seed="a" * 40, limit=6)
    assert [m.kind for m in mutants_of(change, seed="a" * 40, limit=8)[:6]] == ["hunk_reverted"] * 3 + [
        "only_hunk"] * 3
    assert len(first) == 6
    other = mutants_of(change, seed="b" * 40, limit=8)
    assert other[:6] == mutants_of(change, seed="a" * 40, limit=8)[:6]  # the seed orders operators only
    assert other[6:] != mutants_of(change, seed="a" * 40, limit=8)[6:]
    assert len({m.id for m in mutants_of(change, seed="a" * 40, limit=100)}) == len(
        mutants_of(change, seed="a" * 40, limit=100))


def test_one_hunk_makes_no_partial_fix_and_an_added_file_is_removed_by_reverting_it() -> None:
    one = mutants_of({"a.py": (b"x = 1\n", b"x = 2\n")}, seed="0" * 40, limit=20)
    assert [(m.kind, m.files["a.py"]) for m in one] == [("constant", b"x = 3\n")]  # 2 -> 1 is the start
    two = mutants_of({"a.py": (b"a = 1\n", b"a = 2\n"), "new.py": (None, b"b = 3\n")}, seed="0" * 40,
                     limit=20)
    removed = [m for m in two if m.kind == "hunk_reverted" and m.file == "new.py"]
    assert removed and removed[0].files == {"new.py": None}


def test_a_mutant_equal_to_the_starting_files_is_never_made() -> None:
    found = mutants_of({"a.py": (b"x = 1\n", b"x = 2\n")}, seed="0" * 40, limit=20)
    assert all(m.files["a.py"] != b"x = 1\n" for m in found)


def test_binary_files_are_left_alone() -> None:
    assert mutants_of({"logo.png": (b"\x89PNG\xff", b"\x89PNG\xfe")}, seed="0" * 40, limit=20) == []


def test_tokens_outside_strings_and_comments_in_javascript_go_and_rust() -> None:
    js = 'if (a < b && "x < y" !== s) { return 1; } // c < d\n'
    edits = operator_edits("m.ts", js, {1})
    replaced = sorted((js[e.start:e.end], e.text) for e in edits)
    assert replaced == [("!==", "==="), ("&&", "||"), ("1", "2"), ("<", "<=")]
    go = "func f(xs []int) bool {\n\treturn len(xs) >= 2\n}\n"
    assert [(go[e.start:e.end], e.text) for e in operator_edits("f.go", go, {2})] == [(">=", ">"), ("2", "3")]
    rust = "fn f(v: Vec<u8>) -> bool { v.len() > 0 || true }\n"
    assert sorted((rust[e.start:e.end], e.text) for e in operator_edits("f.rs", rust, {1})) == [
        ("0", "1"), (">", ">="), ("true", "false"), ("||", "&&")]  # `Vec<u8>` is no comparison


def test_a_call_argument_is_dropped_and_the_result_parses() -> None:
    source = "def f(a, b):\n    return max(a, b, 0)\n"
    edits = [e for e in operator_edits("f.py", source, {2}) if e.kind == "argument"]
    results = sorted(source[:e.start] + e.text + source[e.end:] for e in edits)
    assert [r.splitlines()[1].strip() for r in results] == [
        "return max(a, 0)", "return max(a, b)", "return max(b, 0)"]
