"""Errors raised at the edge: each says what was expected, what was found, and how to fix it."""

from __future__ import annotations

from armbench.ledger.errors import EdgeFailure, Refusal

__all__ = ["AddPathMissing", "CommitNotOnRemote", "CommitUnreachable", "EdgeError", "GitError",
           "RemoteUnreachable", "SandboxUnavailable", "WorkFolderUnusable"]


class EdgeError(EdgeFailure):
    """The root of the edge's errors, under armbench's one error root."""

    code = "edge_failure"

    def __init__(self, *, expected: str, found: str, fix: str) -> None:
        self.expected = expected
        self.found = found
        self.fix = fix
        super().__init__(f"Expected {expected}, found {found}. {fix}")


class GitError(EdgeError):
    """A git command or a repository did not do what a clone or a read needed."""

    code = "git_failed"


class CommitUnreachable(EdgeError):
    """A commit is in neither the member's checkout nor the repository it should be fetched from."""

    code = "commit_unreachable"

    def __init__(self, sha: str, repo: str) -> None:
        self.sha = sha
        self.repo = repo
        super().__init__(
            expected=f"commit {sha} in {repo}",
            found="no such commit there (fetching it by SHA failed)",
            fix=f"Push commit {sha} to {repo}, or fix the task's commit.",
        )


def _after(rebuilt: str | None) -> str:
    """What happened to the commit cache before a fetch, when it was found corrupted."""
    if rebuilt is None:
        return ""
    return f"the commit cache failed its integrity check ({rebuilt}) and was rebuilt; then "


class CommitNotOnRemote(CommitUnreachable):
    """The repository answered, but fetching the commit by SHA from it failed."""

    code = "commit_not_on_remote"

    def __init__(self, sha: str, repo: str, *, detail: str, rebuilt: str | None = None) -> None:
        self.sha, self.repo, self.rebuilt = sha, repo, rebuilt
        EdgeError.__init__(
            self,
            expected=f"commit {sha} in {repo}",
            found=f"{_after(rebuilt)}{repo} answered, but has no such commit (or does not serve it "
            f"by SHA): {detail}",
            fix=f"Push commit {sha} to {repo}, or fix the task's commit.",
        )


class RemoteUnreachable(CommitUnreachable):
    """The repository a missing commit is fetched from could not be reached at all."""

    code = "remote_unreachable"

    def __init__(self, sha: str, repo: str, *, detail: str, rebuilt: str | None = None) -> None:
        self.sha, self.repo, self.rebuilt = sha, repo, rebuilt
        EdgeError.__init__(
            self,
            expected=f"to fetch commit {sha} from {repo}",
            found=f"{_after(rebuilt)}{repo} could not be reached: {detail}",
            fix="Check the suite's repo, the network and your git credentials for it, or run in a "
            "checkout that already has the commit.",
        )


class AddPathMissing(EdgeError):
    """A `check.add` path is not a file at the commit its bytes come from."""

    code = "add_path_missing"

    def __init__(self, path: str, commit: str, found: str = "nothing at that path") -> None:
        self.path = path
        self.commit = commit
        super().__init__(
            expected=f"a file at {path} in commit {commit}",
            found=found,
            fix=f"check.add path {path} is not a file at {commit}: list files that commit has in "
            "check.add, or fix source.fix.",
        )


class SandboxUnavailable(Refusal):
    """bubblewrap cannot make the namespaces a trial's sandbox needs: nothing is started (exit 2)."""

    code = "sandbox_unavailable"

    def __init__(self, cause: str, fix: str) -> None:
        self.cause = cause
        super().__init__(
            f"Trials run in a bubblewrap sandbox, and this machine cannot make one: {cause}. "
            f"{fix}. Or, where the machine itself is the sandbox (a throwaway CI runner or "
            "container), opt out with `workflows.isolation: declared` in .armbench/config.yaml.")


class WorkFolderUnusable(Refusal):
    """The folder a run's clones go in is not the member's own to use: nothing is started
    (exit 2)."""

    code = "work_folder_unusable"

    def __init__(self, folder: str, found: str) -> None:
        self.folder = folder
        super().__init__(
            f"A run's work folder (its clones, homes and tool copies) goes in {folder}, which must "
            f"be a folder of this user's own that no one else can write in; found {found}. No run "
            "was started. Set TMPDIR to a folder of your own (armbench makes its folder inside "
            f"it), or, if {folder} is a leftover you may remove, remove it.")
