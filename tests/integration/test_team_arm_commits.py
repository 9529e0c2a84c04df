"""A team arm's commit, from the mirror alone: a ref resolved without fetching, a `without` made."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from gitrun import GIT_ENV, git

from armbench.edge.team import commit_without, fetch_team, resolve_team_ref, team_branches


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    repo, mirror = tmp_path / "team", tmp_path / "mirror.git"
    git(tmp_path, "init", "-q", "-b", "main", str(repo))
    for rel, text in {"armbench.yaml": "schemaVersion: v1alpha1\n", "skills/release/SKILL.md": "x\n",
                      "skills/release/notes.md": "n\n", "skills/dev/release/SKILL.md": "d\n",
                      "rules/commits.md": "r\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "team")
    commits = {"main": git(repo, "rev-parse", "HEAD")}
    git(repo, "tag", "v1")
    git(repo, "checkout", "-q", "-b", "bench/bare")
    git(repo, "rm", "-rq", "armbench.yaml")
    git(repo, "commit", "-q", "-m", "not a team repo any more")
    commits["bare"] = git(repo, "rev-parse", "HEAD")
    fetch_team(str(repo), mirror)
    git(repo, "checkout", "-q", "-b", "bench/late", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "after the fetch")
    commits["late"] = git(repo, "rev-parse", "HEAD")
    return repo, mirror, commits


def test_a_ref_resolves_from_the_mirror_to_a_commit_that_holds_armbench_yaml(mirror) -> None:
    _, path, commits = mirror
    assert resolve_team_ref(path, "main") == commits["main"]
    assert resolve_team_ref(path, "v1") == commits["main"]
    assert resolve_team_ref(path, commits["main"][:9]) == commits["main"]
    assert resolve_team_ref(path, "bench/bare") is None  # no armbench.yaml there
    assert resolve_team_ref(path, "bench/late") is None  # on the team repo, never fetched
    assert resolve_team_ref(path, commits["late"]) is None
    assert resolve_team_ref(path, "nope") is None
    assert team_branches(path) == ["bench/bare", "main"]


def test_a_without_commit_leaves_out_files_and_folders_and_is_the_same_every_time(mirror) -> None:
    _, path, commits = mirror
    made = commit_without(path, commits["main"], ["skills/release", "rules/commits.md"])
    listed = git(path, "ls-tree", "-r", "--name-only", made).splitlines()
    assert listed == ["armbench.yaml", "skills/dev/release/SKILL.md"]
    assert git(path, "rev-parse", f"{made}^") == commits["main"]
    assert commit_without(path, commits["main"], ["skills/release", "rules/commits.md"]) == made
    emptied = commit_without(path, commits["main"], ["skills/dev/release", "skills/release"])
    assert git(path, "ls-tree", "-r", "--name-only", emptied).splitlines() == [
        "armbench.yaml", "rules/commits.md"]  # an emptied folder is gone, as git lists trees
    kept = subprocess.run(["git", "for-each-ref", "--format=%(objectname)", "refs/armbench/without"],
                          cwd=path, env=GIT_ENV, capture_output=True, text=True).stdout.split()
    assert sorted(kept) == sorted([made, emptied])  # kept in the mirror, so no gc drops them
