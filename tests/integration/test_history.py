"""`edge.history` on real repositories: the one-call walk agrees with commit-by-commit reads,
merges count against their first parent, odd paths survive, and bad revisions are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrun import git

from armbench.edge.errors import GitError
from armbench.edge.history import (
    added_lines,
    commit_facts,
    files_at,
    first_parent_commits,
    first_parent_facts,
    read_at,
    resolve_commit,
)


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    return root


def test_the_walk_reads_what_each_commit_read_reads_merges_and_odd_paths_included(repo: Path) -> None:
    start = commit(repo, "start", {"a.py": "x = 1\n"})
    git(repo, "checkout", "-q", "-b", "side")
    side = commit(repo, "side work\n\nwith a body\nof two lines", {"tests/t\tab ü.py": "y\n"})
    git(repo, "checkout", "-q", "main")
    commit(repo, "main work", {"a.py": "x = 2\n"})
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    walked = first_parent_facts(repo)
    assert walked == [commit_facts(repo, sha) for sha in first_parent_commits(repo)]
    assert [f.subject for f in walked] == ["start", "main work", "merge side"]
    merge = walked[-1]
    assert [(c.path, c.status) for c in merge.changes] == [("tests/t\tab ü.py", "A")]
    assert commit_facts(repo, side).body == "with a body\nof two lines"
    assert walked[0].changes == () and walked[0].sha == start
    assert [f.subject for f in first_parent_facts(repo, since=start)] == ["main work", "merge side"]
    assert first_parent_commits(repo, range_=f"{start}..HEAD~1") == [walked[1].sha]


def test_files_lines_and_revisions(repo: Path) -> None:
    commit(repo, "start", {"a.py": "x = 1\n"})
    fix = commit(repo, "fix", {"a.py": "x = 2\ny = 3\n"})
    assert read_at(repo, fix, "a.py") == b"x = 2\ny = 3\n" and read_at(repo, fix, "nope.py") is None
    assert added_lines(repo, f"{fix}^", fix) == ["x = 2", "y = 3"]
    assert resolve_commit(repo, "HEAD") == fix
    commit(repo, "more", {"b.txt": "", "dir/c.py": "c\n"})
    assert files_at(repo, "HEAD", ["a.py", "dir", "nope", "b.txt", "dir/c.py"]) == {
        "a.py": b"x = 2\ny = 3\n", "b.txt": b"", "dir/c.py": b"c\n"}
    for bad in ("--all", "no-such-branch"):
        with pytest.raises(GitError):
            resolve_commit(repo, bad)
