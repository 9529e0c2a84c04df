"""What the team repo has published: a path is read itself, a URL asked, offline the mirror as fetched."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrun import git

from armbench.edge.team import fetch_team, reaches, remote_refs


class Team:
    """A team repo with two commits on main and a tag on the first, fetched into a mirror; then a
    commit planted in the mirror alone, with the mirror's main moved onto it."""

    def __init__(self, root: Path) -> None:
        self.repo, self.mirror = root / "team", root / "mirror.git"
        git(root, "init", "-q", "-b", "main", str(self.repo))
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "one")
        self.tagged = git(self.repo, "rev-parse", "HEAD")
        git(self.repo, "tag", "v1")
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "two")
        self.tip = git(self.repo, "rev-parse", "HEAD")
        git(self.repo, "checkout", "-q", "--orphan", "gone")
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "on no branch soon")
        self.dropped = git(self.repo, "rev-parse", "HEAD")
        assert fetch_team(str(self.repo), self.mirror) == self.dropped
        git(self.repo, "checkout", "-q", "main")
        git(self.repo, "branch", "-q", "-D", "gone")
        tree = git(self.mirror, "rev-parse", f"{self.tip}^{{tree}}")
        self.planted = git(self.mirror, "commit-tree", tree, "-p", self.tip, "-m", "planted")
        git(self.mirror, "update-ref", "refs/heads/main", self.planted)


@pytest.fixture
def team(tmp_path: Path) -> Team:
    return Team(tmp_path)


def test_a_path_is_read_itself_so_a_commit_planted_in_the_mirror_is_not_published(team: Team) -> None:
    refs = remote_refs(str(team.repo), team.mirror)
    assert not refs.offline
    assert reaches(refs, team.tip) and reaches(refs, team.tagged)
    assert not reaches(refs, team.planted)  # the mirror's main names it; the team repo does not have it
    assert not reaches(refs, team.dropped)  # fetched once, on no branch or tag now
    assert not reaches(refs, "not a sha")


def test_a_team_repo_that_cannot_be_reached_is_judged_by_the_mirror_as_last_fetched(team: Team) -> None:
    refs = remote_refs("https://example.invalid/team.git", team.mirror)
    assert refs.offline
    assert reaches(refs, team.tip) and reaches(refs, team.tagged)
    assert reaches(refs, team.dropped)  # as last fetched
    assert reaches(refs, team.planted)  # the weaker evidence offline: the mirror's own refs
