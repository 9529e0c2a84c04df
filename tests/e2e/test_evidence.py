"""Issue 29: every trial keeps its evidence (the check's output, its diff, its transcript) on this
machine, shows it through `explain` and `show`, never publishes it, and `gc` collects it."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from e2e.conftest import World, git, make_world, visible_task
from e2e.history_repos import pytest_folder

pytestmark = pytest.mark.e2e

SECRET = "ghp-e2e-withheld-7f3a9c"
"""GITHUB_TOKEN's value in armbench's environment: a check that prints it shows it redacted."""

# The agent breaks add the wrong way (a - b becomes a * b), commits that, then leaves a new file
# uncommitted, and says on stdout and stderr what it did (a command tool's transcript).
AGENT = r"""
set -eu
cat > /dev/null
sed -i 's/return a - b/return a * b/' calc.py
git -c user.name=agent -c user.email=agent@e2e.invalid commit -qam "agent: multiply instead"
printf 'notes from the agent\n' > NOTES.md
echo "agent-said: I multiplied"
echo "agent-warned: on stderr" >&2
"""


def _world(tmp_path: Path) -> World:
    world = make_world(tmp_path / "w")
    world.team.tool("agent", AGENT)
    world.team.suite("checked", repetitions=1, timeout="5m")
    task = visible_task(world.project)
    task["check"]["run"] = ('cat "$E2E_OUT/printed-secret.txt"; '
                            "python3 -m pytest -q -p no:cacheprovider tests/test_add.py")
    world.team.task("checked", "a-visible", **task)
    world.init_and_pull()
    (world.out / "printed-secret.txt").write_text(f"the check printed {SECRET}\n")
    world.env["GITHUB_TOKEN"] = SECRET
    pylib = pytest_folder(tmp_path)  # the sandbox's python3 imports pytest from here
    world.env |= {"PYTHONPATH": str(pylib), "ARMBENCH_SANDBOX_READ": str(pylib)}
    return world


def _expected_diff(world: World, tmp: Path) -> str:
    """`git diff` of the agent's change: the same edits in a clone of the project at the task's
    starting commit, committed and uncommitted, against that commit."""
    start = world.project.commits["test"]
    clone = tmp / "expected"
    git(tmp, "clone", "-q", str(world.checkout), str(clone))
    git(clone, "checkout", "-q", start)
    calc = clone / "calc.py"
    calc.write_text(calc.read_text().replace("return a - b", "return a * b"))
    git(clone, "-c", "user.name=x", "-c", "user.email=x@e2e.invalid", "commit", "-qam", "same")
    (clone / "NOTES.md").write_text("notes from the agent\n")
    git(clone, "add", "-A")
    return git_diff(clone, start)


def git_diff(clone: Path, start: str) -> str:
    import subprocess
    return subprocess.run(["git", "diff", "--cached", "--no-color", start], cwd=clone,
                          capture_output=True, text=True, check=True).stdout


def _evidence_files(world: World) -> list[Path]:
    root = world.checkout / ".armbench" / "evidence" / "sha256"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_a_failed_trial_keeps_its_check_output_diff_and_transcript_and_shows_them(
        tmp_path: Path) -> None:
    world = _world(tmp_path)
    ran = world.armbench("run", "checked", "--sandbox")
    assert ran.code == 0, ran
    assert [t["result"] for t in world.record(ran.data["done"]["run"])["trials"]] == ["failed"]
    run = ran.data["done"]["run"]

    explained = world.armbench("explain", run, "r0.a-visible.base")
    assert explained.code == 0, explained
    got = explained.data["explain"]
    assert got["result"] == "failed" and got["output_of"] == "check"
    # pytest's assertion and its values, under the rule
    assert "E       AssertionError: 6 != 5" in got["output"], got
    shown = explained.stderr.index("  | E       AssertionError: 6 != 5")
    assert explained.stderr.index("Rule:") < shown < explained.stderr.index("Events:")

    check = world.armbench("show", run, "r0.a-visible.base", "--check")
    assert check.code == 0, check
    assert "1 failed" in check.stdout
    assert "the check printed [withheld GITHUB_TOKEN]" in check.stdout
    assert SECRET not in check.stdout

    diff = world.armbench("show", run, "r0.a-visible.base", "--diff")
    assert diff.code == 0, diff
    assert diff.stdout == _expected_diff(world, tmp_path)

    transcript = world.armbench("show", run, "r0.a-visible.base", "--transcript")
    assert transcript.code == 0, transcript
    assert "agent-said: I multiplied" in transcript.stdout
    assert "agent-warned: on stderr" in transcript.stdout

    raw = world.armbench("show", run, "r0.a-visible.base", "--diff", "--json")
    assert raw.data["show"]["raw"] == diff.stdout
    assert raw.data["show"]["sha256"] == hashlib.sha256(diff.stdout.encode()).hexdigest()

    # nothing of it is in the record (what publish pushes), nor anything naming it
    record = world.record_path(run).read_text()
    kept = world.events("EvidenceKept")
    assert {e["kind"] for e in kept} >= {"check", "diff", "transcript"}
    for needle in ["6 != 5", "AddTest.test_add", "return a * b", "notes from the agent",
                   "agent-said", "agent-warned", SECRET, "[withheld GITHUB_TOKEN]",
                   *(e["sha256"] for e in kept)]:
        assert needle not in record, needle
    # nor anywhere in the evidence folder: the secret never reached a kept file
    assert all(SECRET.encode() not in p.read_bytes() for p in _evidence_files(world))

    assert world.armbench("verify", run).code == 0
    exported = world.armbench("export", run, "--db", str(tmp_path / "plain.db"))
    assert exported.code == 0, exported
    with sqlite3.connect(tmp_path / "plain.db") as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "evidence" not in tables
    exported = world.armbench("export", run, "--db", str(tmp_path / "full.db"), "--with-evidence")
    assert exported.code == 0, exported
    with sqlite3.connect(tmp_path / "full.db") as db:
        rows = dict(db.execute("SELECT kind, text FROM evidence WHERE kind='diff'").fetchall())
    assert rows["diff"] == diff.stdout


def test_verify_finds_an_altered_file_and_gc_collects_what_explain_then_says(tmp_path: Path) -> None:
    world = _world(tmp_path)
    first = world.armbench("run", "checked", "--sandbox")
    (world.out / "printed-secret.txt").write_text("the second run's check prints this\n")
    second = world.armbench("run", "checked", "--sandbox")
    old, new = first.data["done"]["run"], second.data["done"]["run"]
    files = _evidence_files(world)
    assert files

    check = next(e for e in world.events("EvidenceKept") if e["kind"] == "check")
    path = next(p for p in files if p.name == check["sha256"])
    data = path.read_bytes()
    path.write_bytes(data.replace(b"failed", b"passed"))
    verified = world.armbench("verify", old)
    assert verified.code == 1, verified
    assert any("check" in p and "differs" in p for p in verified.data["verify"]["problems"])
    path.write_bytes(data)

    before = sum(p.stat().st_size for p in _evidence_files(world))
    events = world.events()
    gc = world.armbench("gc", "--keep", "1")
    assert gc.code == 0, gc
    assert gc.data["gc"]["runs"] == [old] and gc.data["gc"]["kept"] == [new]
    after = sum(p.stat().st_size for p in _evidence_files(world))
    assert gc.data["gc"]["freedBytes"] == before - after > 0
    assert "freeing" in gc.stderr

    said = world.armbench("explain", old, "r0.a-visible.base")
    assert said.code == 0 and "collected by armbench gc" in said.data["explain"]["evidence"]
    shown = world.armbench("show", old, "r0.a-visible.base", "--diff")
    assert shown.code == 0 and "collected by armbench gc" in shown.stderr, shown
    assert world.armbench("verify", old).code == 0  # collected is not missing
    # the newer run's evidence is whole, and its events all stayed
    assert world.armbench("show", new, "r0.a-visible.base", "--diff").stdout
    assert world.events() == events


def test_no_evidence_keeps_none(tmp_path: Path) -> None:
    world = _world(tmp_path)
    ran = world.armbench("run", "checked", "--sandbox", "--no-evidence")
    assert ran.code == 0, ran
    assert not world.events("EvidenceKept") and not _evidence_files(world)
    world.configure(evidence=False)
    again = world.armbench("run", "checked", "--sandbox")
    assert again.code == 0, again
    assert not world.events("EvidenceKept")
    said = world.armbench("explain", again.data["done"]["run"], "r0.a-visible.base")
    assert "kept no output" in said.data["explain"]["evidence"]
    assert json.loads(json.dumps(said.data))["explain"]["output"] == []
