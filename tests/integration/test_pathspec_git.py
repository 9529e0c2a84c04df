"""`suites.pathspec.matches` agrees with `git ls-files -- ':(glob)<pattern>'` on a real repository."""

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from armbench.suites.pathspec import matches

FILES = [
    "ab",
    "ba",
    "B",
    "a.py",
    "b.py",
    "aa/b",
    "a/b.py",
    "a/b/c",
    "a/b/c.py",
    "a/bc/a",
    "a/c/b/a",
    "b/a",
    "b/a.py",
    "c/a/b/a",
    "c/ab",
    "A/b",
    "test/a.py",
    "test/sub/b.py",
    "test/sub/deep/c.test.ts",
    "testx",
    "tests/a.py",
    "foobar/baz/x",
    "foox",
    "[ab]/c",
    "x*/y",
    "a*",
    "a?b",
    "-",
    "!a",
    "a-b",
    ":",
    "]",
    "a]b",
    "[!a]/b",
    "7",
    "é/ü.py",
    "bb/a[/b",
]
TABLE = [
    "test",
    "test/",
    "test/*",
    "test/**",
    "test/**/",
    "**/b.py",
    "test/**/b.py",
    "**",
    "*",
    "*/",
    "**/",
    "*.py",
    "**/*.py",
    "t?st/*",
    "te*/",
    "foo**",
    "foo**/x",
    "**\\/a",
    "a\\*",
    "a*",
    "[ab]",
    "[!a]",
    "[^a]",
    "[a-c]",
    "[c-a]",
    "[]a]",
    "[!]a]",
    "a[",
    "[",
    "x[/]y",
    "[[:digit:]]",
    "[[:al:]]",
    "[[:x]",
    "[[:nope:]]",
    "a\\",
    "*/*/*",
    "a/**/a",
    "a**b",
    "**/a/**",
    "é/*",
    "?/ü.py",
    "é?ü.py",
    "[a-]",
    "[\\]]",
    "[a\\-c]",
    "b*/a[/b",
    "a/b/",
    "A/**",
]
GIT_ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, "GIT_CONFIG_NOSYSTEM": "1"}


def git_matches(repo: Path, pattern: str) -> set[str]:
    out = subprocess.run(
        ["git", "-c", "core.quotePath=false", "ls-files", "-z", "--", f":(glob){pattern}"],
        cwd=repo,
        env=GIT_ENV,
        check=True,
        capture_output=True,
    ).stdout
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pathspec")
    subprocess.run(["git", "init", "-q", "--template=", str(root)], env=GIT_ENV, check=True)
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    subprocess.run(["git", "add", "-A"], cwd=root, env=GIT_ENV, check=True)
    assert git_matches(root, "**") == set(FILES)
    return root


@pytest.mark.parametrize("pattern", TABLE)
def test_table_agrees_with_git(repo: Path, pattern: str) -> None:
    assert {f for f in FILES if matches(pattern, f)} == git_matches(repo, pattern)


SEGMENT = st.one_of(
    st.sampled_from(["**", "a", "b", "test"]), st.text(alphabet="ab*?[]!^-:\\", min_size=1, max_size=4)
)
PATTERN = st.builds(
    lambda parts, slash: "/".join(parts) + slash,
    st.lists(SEGMENT, min_size=1, max_size=4),
    st.sampled_from(["", "/"]),
)


@pytest.mark.slow  # more than a second or two: out of the inner loop
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(PATTERN)
def test_generated_patterns_agree_with_git(repo: Path, pattern: str) -> None:
    assert {f for f in FILES if matches(pattern, f)} == git_matches(repo, pattern)
