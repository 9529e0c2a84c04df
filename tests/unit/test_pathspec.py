"""Git `:(glob)` pathspec matching, without git: the table pins git's behaviour, properties the rest."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from armbench.suites.pathspec import (
    could_match_inside,
    is_glob,
    is_inside,
    matches,
    matches_any,
    names_directory,
)

CASES = [
    # a pattern without glob characters: the path itself or anything under it as a directory
    ("test", "test/a.py", True),
    ("test", "test", True),
    ("test", "testx/a.py", False),
    ("test/a.py", "test/a.py", True),
    ("test/a.py", "test/a.pyc", False),
    ("test/", "test/a.py", True),
    ("test/", "test", False),
    # `*` and `?` never cross `/`
    ("test/*", "test/a.py", True),
    ("test/*", "test/sub/b.py", False),
    ("*.py", "a.py", True),
    ("*.py", "src/a.py", False),
    ("t?st/a.py", "test/a.py", True),
    ("te?t", "te/t", False),
    # `**`
    ("test/**", "test/sub/deep/c.ts", True),
    ("test/**", "testx/a", False),
    ("**/b.py", "b.py", True),
    ("**/b.py", "x/y/b.py", True),
    ("test/**/b.py", "test/b.py", True),
    ("test/**/b.py", "test/x/y/b.py", True),
    ("test/**/b.py", "test/xb.py", False),
    ("**", "any/thing/at/all", True),
    ("a**b", "a/x/b", False),
    ("a**b", "axxb", True),
    # git's quirks: the literal prefix is cut off first, so `**` right after it crosses directories
    ("foo**", "foobar/baz/x", True),
    ("foo**/x", "foox", True),
    ("**\\/x", "x", False),
    ("**\\/x", "a/x", True),
    # classes
    ("[ab].py", "b.py", True),
    ("[!a].py", "b.py", True),
    ("[^a].py", "a.py", False),
    ("[a-c]", "b", True),
    ("[c-a]", "b", False),
    ("[]a]", "]", True),
    ("x[/]y", "x/y", False),
    ("[!a]", "/", False),
    ("[[:digit:]]", "7", True),
    ("[[:al:]]", "b", False),  # no prefix of a class name
    ("[[:nope:]]", "n", False),
    ("[[:x]", ":", True),
    # unterminated or dangling: never a wildcard match, but still the literal path
    ("a[", "a[", True),
    ("a[", "ab", False),
    ("a\\", "a\\", True),
    ("a\\", "ab", False),
    # a glob pattern also matches itself literally, as a file or a directory
    ("[ab]", "[ab]/c", True),
    ("x*", "x*/y", True),
    ("a\\*", "a*", True),
    ("a\\*", "ab", False),
    # a trailing `/` after a wildcard matches only directories, never a file
    ("te*/", "test/a.py", False),
    ("", "a", False),
    ("é?", "éx", True),
    ("?", "é", False),  # `?` is one byte, as in git; é is two
]


@pytest.mark.parametrize(("pattern", "path", "expected"), CASES)
def test_matches_like_git(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_is_glob_sees_only_glob_characters() -> None:
    assert [is_glob(p) for p in ["a*", "a?", "a[b]", "test/a.py", "a\\b", ""]] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_is_inside_is_strict_and_segment_aware() -> None:
    assert is_inside("test/a.py", "test") and is_inside("test/a.py", "test/")
    assert not is_inside("test", "test") and not is_inside("testx/a", "test")
    assert is_inside("a", "") and not is_inside("", "")


def test_matches_any_needs_one_pattern() -> None:
    assert matches_any(["src/**", "test/**"], "test/a.py")
    assert not matches_any(["src/**", "docs"], "test/a.py")
    assert not matches_any([], "test/a.py")


def test_could_match_inside_prunes_unrelated_directories() -> None:
    assert could_match_inside(["test/sub/*.py"], "test")
    assert could_match_inside(["test/sub/*.py"], "test/sub")
    assert not could_match_inside(["test/sub/*.py"], "src")
    assert not could_match_inside(["vitest.config.ts"], "node_modules")
    assert could_match_inside(["**/*.test.ts"], "node_modules")


def test_names_directory_is_the_literal_directory_part() -> None:
    assert names_directory(["test/**"], "test") and names_directory(["test/unit/*.py"], "test/unit")
    assert names_directory(["test/unit/*.py"], "test") and names_directory(["test/a.py"], "test/")
    assert not names_directory(["test/**"], "test/unit") and not names_directory(["test"], "test")
    assert not names_directory(["**/*.ts", "*.py", "vitest.config.ts"], "src")


SEGMENT = st.text(alphabet="ab.", min_size=1, max_size=3).filter(lambda s: s not in (".", ".."))
PATH = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)


@given(PATH, PATH)
def test_a_literal_pattern_matches_itself_and_its_contents(pattern: str, rest: str) -> None:
    assert matches(pattern, pattern)
    assert matches(pattern, f"{pattern}/{rest}")
    assert matches(pattern + "/", f"{pattern}/{rest}")


@given(PATH, PATH)
def test_star_stays_within_one_directory(head: str, tail: str) -> None:
    assert matches(f"{head}/*", f"{head}/{tail}") is ("/" not in tail)
    assert matches(f"{head}/**", f"{head}/{tail}")


GLOB_SEGMENT = st.one_of(st.just("**"), st.text(alphabet="ab*?[]!", min_size=1, max_size=3))
PATTERN = st.lists(GLOB_SEGMENT, min_size=1, max_size=3).map("/".join)


@given(PATTERN, PATH)
def test_pruning_never_skips_a_directory_that_holds_a_match(pattern: str, path: str) -> None:
    if matches(pattern, path):
        parts = path.split("/")
        assert all(could_match_inside([pattern], "/".join(parts[:n])) for n in range(1, len(parts)))


@given(PATTERN, PATH)
def test_a_named_directory_is_never_pruned(pattern: str, directory: str) -> None:
    if names_directory([pattern], directory):
        assert could_match_inside([pattern], directory)
