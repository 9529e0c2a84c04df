"""Two publications at once in one checkout both land (issue 11, item 8).

Two runs in one checkout share the reports mirror: their fetches and ref updates race for the
same ref locks, and their pushes for the branch. Once one publication lost that race and stayed
pending until a later `armbench publish`. Here two threads deliver to a real bare remote through
one mirror, from a barrier, round after round; every record must be on the branch.
"""

from __future__ import annotations

import subprocess
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.edge.reports import BRANCH, deliver, record_path

ROUNDS = 12


def on_branch(remote: Path) -> set[str]:
    done = subprocess.run(["git", "--git-dir", str(remote), "ls-tree", "--name-only",
                           f"{BRANCH}:benchmarks/runs"], capture_output=True, text=True)
    return set(done.stdout.split())


@pytest.mark.slow  # racing processes
def test_two_publications_racing_for_the_ref_locks_both_land(tmp_path: Path) -> None:
    remote, mirror = tmp_path / "reports.git", tmp_path / "checkout" / "reports-mirror.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    errors: list[BaseException] = []
    for round_ in range(ROUNDS):
        start = threading.Barrier(2)

        def publish(run: str, start: threading.Barrier = start) -> None:
            start.wait()
            try:
                deliver(str(remote), mirror, {record_path(run): f'{{"run": "{run}"}}\n'.encode()},
                        message=f"armbench: record {run}", when=datetime.now(UTC))
            except BaseException as exc:  # noqa: BLE001 - reported below, with the round
                errors.append(exc)

        runs = [f"r{round_}a", f"r{round_}b"]
        threads = [threading.Thread(target=publish, args=(run,)) for run in runs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert on_branch(remote) == {f"r{i}{s}.json" for i in range(ROUNDS) for s in "ab"}
