"""Publishing records on armbench-reports, with real git repos: queued at report, pushed, pending
while the remote cannot be reached, delivered by a later report or by `publish_pending`."""

from __future__ import annotations

import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from armbench.benchmark.records.publish import pending, publish_pending, queue_and_deliver
from armbench.benchmark.records.reporting import write_report
from armbench.edge.config import Checkout, ProjectConfig
from armbench.ledger.events import RecordDeliveryFailed, RecordPublished, RecordQueued, RecordWritten
from armbench.ledger.store import EventStore
from armbench.projections.publication import pending_runs, publication_state
from compare.builders import AT, all_pass, arm, leased, plan, run_events, task

BRANCH = "armbench-reports"


def git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                          check=True).stdout.strip()


class Place:
    """A checkout's ledger and runs folder, and a bare reports remote (made on demand)."""

    def __init__(self, root: Path, **config: object) -> None:
        self.root = root
        self.remote = root / "reports.git"
        self.checkout = Checkout(root=root / "calc")
        self.config = ProjectConfig(team=str(self.remote), **config)  # type: ignore[arg-type]
        self.store = EventStore(root / "ledger.sqlite")
        self.said: list[str] = []

    def make_remote(self, path: Path | None = None) -> None:
        git("init", "-q", "--bare", str(path or self.remote))

    def report(self, run: str, minutes: int = 0) -> str:
        """What the report step does for a run whose trials all passed; its text."""
        at = AT + timedelta(minutes=minutes)
        events = leased(run_events(plan([arm("a", model="m1"), arm("b", model="m2")],
                                        [task("t")], 1), all_pass, run=run, at=at)[:-1])
        self.store.append(run, events, expected_version=0)
        written, projected = write_report(run, events, "succeeded",
                                          self.checkout.runs_dir(self.config), at)
        published = queue_and_deliver(store=self.store, checkout=self.checkout, config=self.config,
                                      run=run, written=written, now=at, progress=self.said.append)
        self.store.append(run, [written, *published], expected_version=len(events))
        return projected.restated([*events, written, *published]).text

    def kinds(self, run: str) -> list[str]:
        return [type(r.event).__name__ for r in self.store.read(run)
                if type(r.event).__name__.startswith("Record")]

    def on_branch(self, run: str, remote: Path | None = None) -> bytes:
        return subprocess.run(["git", "--git-dir", str(remote or self.remote), "show",
                               f"{BRANCH}:benchmarks/runs/{run}.json"], capture_output=True,
                              check=True).stdout

    def local(self, run: str) -> bytes:
        return (self.checkout.runs_dir(self.config) / run / "benchmark.json").read_bytes()


@pytest.fixture
def place(tmp_path: Path) -> Place:
    return Place(tmp_path)


def test_the_record_is_pushed_to_the_reports_branch_at_benchmarks_runs(place: Place) -> None:
    place.make_remote()
    text = place.report("r1")
    assert place.on_branch("r1") == place.local("r1")
    assert place.kinds("r1") == ["RecordWritten", "RecordQueued", "RecordPublished"]
    published = [r.event for r in place.store.read("r1") if isinstance(r.event, RecordPublished)][0]
    assert published.commit == git("--git-dir", str(place.remote), "rev-parse", BRANCH)
    assert published.path == "benchmarks/runs/r1.json"
    assert "record: pending" not in text
    assert pending(place.store) == []


def test_later_records_are_committed_on_the_branch_tip(place: Place) -> None:
    place.make_remote()
    place.report("r1")
    place.report("r2", minutes=10)
    log = git("--git-dir", str(place.remote), "log", "--format=%s", BRANCH).splitlines()
    assert log == ["armbench: publish r2", "armbench: publish r1"]
    assert place.on_branch("r1") == place.local("r1") and place.on_branch("r2") == place.local("r2")


def test_a_missing_remote_leaves_the_record_pending_and_the_next_run_delivers_it(place: Place) -> None:
    text = place.report("r1")
    assert text.rstrip().endswith("These results hold for these tasks, this run and this machine.\n"
                                  "record: pending")
    assert place.kinds("r1") == ["RecordWritten", "RecordQueued", "RecordDeliveryFailed"]
    assert pending(place.store) == ["r1"]
    assert any("Could not publish" in line and "armbench publish" in line for line in place.said)

    place.make_remote()
    text = place.report("r2", minutes=10)
    assert "record: pending" not in text
    assert place.kinds("r1")[-1] == "RecordPublished"
    assert place.on_branch("r1") == place.local("r1") and place.on_branch("r2") == place.local("r2")
    assert pending(place.store) == []


def test_publish_delivers_the_pending_records_by_hand(place: Place) -> None:
    place.report("r1")
    place.report("r2", minutes=10)
    got = publish_pending(store=place.store, checkout=place.checkout, config=place.config,
                          now=AT + timedelta(hours=1))
    assert (got.delivered, got.pending, got.commit) == ([], ["r1", "r2"], None)
    assert got.error and "git ls-remote failed" in got.error

    place.make_remote()
    got = publish_pending(store=place.store, checkout=place.checkout, config=place.config,
                          now=AT + timedelta(hours=2))
    assert (got.delivered, got.pending) == (["r1", "r2"], [])
    assert got.commit == git("--git-dir", str(place.remote), "rev-parse", BRANCH)
    assert pending(place.store) == []
    again = publish_pending(store=place.store, checkout=place.checkout, config=place.config,
                            now=AT + timedelta(hours=3))
    assert (again.delivered, again.pending) == ([], [])


def test_a_branch_another_publisher_moved_is_built_on_not_overwritten(place: Place) -> None:
    place.make_remote()
    place.report("r1")
    other = place.root / "other"
    git("clone", "-q", "-b", BRANCH, str(place.remote), str(other))
    (other / "benchmarks" / "runs" / "rx.json").write_text("{}\n")
    git("add", "-A", cwd=other)
    git("-c", "user.name=o", "-c", "user.email=o@x.invalid", "commit", "-q", "-m", "theirs", cwd=other)
    git("push", "-q", "origin", BRANCH, cwd=other)
    place.report("r2", minutes=10)
    files = git("--git-dir", str(place.remote), "ls-tree", "--name-only", BRANCH, "benchmarks/runs/")
    assert files.splitlines() == ["benchmarks/runs/r1.json", "benchmarks/runs/r2.json",
                                  "benchmarks/runs/rx.json"]


def test_a_reports_repo_in_the_config_gets_the_records_instead_of_the_team_repo(tmp_path: Path) -> None:
    place = Place(tmp_path, reports="elsewhere.git")
    elsewhere = place.checkout.root / "elsewhere.git"  # relative to the checkout
    place.make_remote(elsewhere)
    place.report("r1")
    assert place.on_branch("r1", elsewhere) == place.local("r1")
    assert not place.remote.exists()


def test_with_publish_off_nothing_is_queued(tmp_path: Path) -> None:
    place = Place(tmp_path, publish=False)
    place.make_remote()
    text = place.report("r1")
    assert place.kinds("r1") == ["RecordWritten"] and "record: pending" not in text
    assert git("--git-dir", str(place.remote), "branch", "--list", BRANCH) == ""


def test_a_record_edited_after_it_was_written_is_not_published(place: Place) -> None:
    place.report("r1")  # no remote yet: pending
    path = place.checkout.runs_dir(place.config) / "r1" / "benchmark.json"
    path.write_bytes(path.read_bytes().replace(b'"passed"', b'"failed"'))
    place.make_remote()
    got = publish_pending(store=place.store, checkout=place.checkout, config=place.config,
                          now=AT + timedelta(hours=1))
    assert (got.delivered, got.pending) == ([], ["r1"])
    assert got.error and "armbench verify r1" in got.error


def test_pending_is_folded_from_the_log() -> None:
    queued = RecordQueued(destination="d", path="p", at=AT)
    failed = RecordDeliveryFailed(destination="d", reason="down", at=AT)
    done = RecordPublished(destination="d", path="p", sha256="s", commit="c", at=AT)
    written = RecordWritten(sha256="s", at=AT)
    assert publication_state([written]) is None
    assert publication_state([written, queued, failed]) == "pending"
    assert publication_state([written, queued, failed, done]) == "published"
    assert publication_state([done, queued]) == "pending"
    log = [("r1", queued), ("r2", queued), ("r1", failed), ("r3", queued), ("r2", done),
           ("r4", done)]
    assert pending_runs(log) == ["r1", "r3"]
