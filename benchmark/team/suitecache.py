"""The suite cache `.armbench/cache/suites.json`, and the check that plan reads it as pull left it.

Pull records, for each suite it caches, the team revision and the sha256 of every file in the
suite's directory there. Plan trusts none of it: the revision must be the pulled one (or, for a
suite pull kept at its last valid version, an ancestor of it), and every file is read back from
the team mirror at that revision and hashed again. Anything else means the cache or the mirror
was changed after the pull, and no run starts from it.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from armbench.edge.config import Checkout
from armbench.edge.team import RemoteRefs, descends_from, files_at, reaches
from armbench.ledger.errors import Refusal
from armbench.suites.plan import sha256

__all__ = ["CACHE_FILE", "SuiteCache", "load_cache", "verified_suite_files"]

CACHE_FILE = ".armbench/cache/suites.json"
_AGAIN = "Run `armbench pull` again to rewrite it from the team repo, and start again."


class SuiteCache(msgspec.Struct, kw_only=True):
    """The revision each valid suite was last cached at, its directory and its files' hashes."""

    suites: dict[str, str] = {}
    """Suite name -> the team revision it was cached at."""
    dirs: dict[str, str] = {}
    """Suite name -> its directory; a name without one (an older cache) is `benchmarks/<name>`."""
    files: dict[str, dict[str, str]] = {}
    """Suite name -> the sha256 of every file under its directory at that revision, by repo path."""

    def dir_of(self, name: str) -> str:
        """The suite's directory in the team repo."""
        return self.dirs.get(name, f"benchmarks/{name}")

    def keep(self, name: str, directory: str, revision: str, files: dict[str, bytes]) -> None:
        """Cache a suite at a revision, with the hash of each of its files there."""
        self.suites[name], self.dirs[name] = revision, directory
        self.files[name] = {path: sha256(data) for path, data in sorted(files.items())}

    def drop(self, name: str) -> None:
        """Forget a suite."""
        self.suites.pop(name, None)
        self.dirs.pop(name, None)
        self.files.pop(name, None)


def load_cache(checkout: Checkout) -> SuiteCache:
    """The suite cache, empty before the first pull."""
    path = checkout.cache_file
    if not path.exists():
        return SuiteCache()
    try:
        return msgspec.json.decode(path.read_bytes(), type=SuiteCache)
    except msgspec.DecodeError as exc:
        raise Refusal(f"Expected the suite cache {CACHE_FILE} to be the JSON armbench pull writes; "
                      f"found {exc}. {_AGAIN}", code="suite_cache_mismatch") from exc


def verified_suite_files(cache: SuiteCache, name: str, *, mirror: Path, pulled: str,
                         remote: RemoteRefs | None) -> dict[str, bytes]:
    """The suite's files read from the mirror at its cached revision, refused unless they are what
    pull cached at a revision the team published (`remote` None skips asking the team repo)."""
    revision = cache.suites[name]
    if not _pulled_or_kept(mirror, revision, pulled):
        if remote is not None and not reaches(remote, revision):
            raise Refusal(_unpublished(name, revision, remote), code="team_revision_unreachable")
        raise Refusal(
            f'Expected suite "{name}" in the suite cache {CACHE_FILE} at the pulled team revision '
            f"{pulled} (.armbench/pull.json), or at an ancestor of it where pull kept a suite's last "
            f"valid version; found {revision}. The cache was changed after the pull. {_AGAIN}",
            code="suite_cache_mismatch")
    hashes = cache.files.get(name)
    if not hashes:
        raise Refusal(f'Expected the suite cache {CACHE_FILE} to hold the sha256 of every file of '
                      f'suite "{name}"; found none (a cache written by an older armbench, or '
                      f"edited). {_AGAIN}", code="suite_cache_mismatch")
    files = files_at(mirror, revision, cache.dir_of(name))
    for path in sorted(set(hashes) | set(files)):
        found = sha256(files[path]) if path in files else None
        if found != hashes.get(path):
            raise Refusal(_differs(path, revision, hashes.get(path), found), code="suite_cache_mismatch")
    return files


def _pulled_or_kept(mirror: Path, revision: str, pulled: str) -> bool:
    """The revision is the pulled one, or one of its ancestors in the mirror's history."""
    if revision == pulled:
        return True
    return descends_from(mirror, pulled, revision)


def _unpublished(name: str, revision: str, remote: RemoteRefs) -> str:
    offline = (" (the team repo could not be reached, so this is its branches and tags as the last "
               "pull fetched them)" if remote.offline else "")
    return (f'Expected suite "{name}" in the suite cache {CACHE_FILE} at a team revision the team '
            f"repo has; found {revision}, which is on no branch or tag of the team repo{offline}. It "
            "is a commit of this checkout's mirror (.armbench/team.git) only, so the team never "
            f"published it. {_AGAIN}")


def _differs(path: str, revision: str, expected: str | None, found: str | None) -> str:
    want = f"sha256 {expected}" if expected else "no such file (the cache does not list it)"
    got = f"sha256 {found}" if found else "no such file"
    return (f"Expected {path} at team revision {revision[:12]} to be the file armbench pull cached "
            f"({want} in {CACHE_FILE}); found {got} in the team mirror (.armbench/team.git). The "
            f"cache or the mirror was changed after the pull. {_AGAIN}")
