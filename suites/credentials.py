"""Which login files a team's command tool may ask for (`tool.yaml`'s `credentials:`).

A credential is copied from the member's home into every trial's private home, where the agent's
code can read it. So a path is refused when it is not inside the home (absolute, `~`, `..`) or
when it names a secret no model login needs: armbench's own home (its ledger key signs every
run), SSH and GnuPG keys, database, cloud, cluster and registry logins, git's stored passwords.
Pull, review and run apply the same rule; the tool step applies it again before copying.
"""

from __future__ import annotations

__all__ = ["GUARDED", "credential_problem"]

GUARDED: tuple[str, ...] = (".armbench", ".ssh", ".gnupg", ".pgpass", ".config/gcloud", ".aws",
                            ".kube", ".docker", ".netrc", ".git-credentials")
"""Paths of the home no credential may be or lie under."""


def credential_problem(path: str, armbench_home: str | None = None) -> str | None:
    """Why `path` (relative to the home) may not be handed to a trial, or None when it may.
    `armbench_home` is armbench's own home relative to the member's, where it lies inside."""
    if not path or path.startswith(("/", "~")):
        return "it is not relative to the home folder"
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts or "\0" in path:
        return "it leaves the home folder (`..`)"
    if not parts:
        return "it names the home folder itself"
    guarded = [*GUARDED, *([armbench_home] if armbench_home and armbench_home != "." else [])]
    for secret in guarded:
        names = secret.split("/")
        if parts[:len(names)] == names:
            return f"it is under `{secret}`, which holds secrets no model login needs"
    if armbench_home == ".":
        return "armbench's own home is the home folder itself"
    return None
