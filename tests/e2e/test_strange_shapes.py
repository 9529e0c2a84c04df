"""Issue 22.4: agents that leave a shape armbench must still handle, not fix anything.

Each shape is a task; the suite has a judge (a command tool that writes down what it saw) and
two arms: `honest` fixes add() and leaves the shape too, `idle` leaves the shape and does nothing
else. Before this, each shape crashed the run (the driver died and the run stayed `running`) or
filled the host's disk:

- `non-utf8-name`: files named with bytes that are not UTF-8, in the clone and under the
  protected `tests/` (the restore lists them in its `CheckRan`: `UnicodeEncodeError`);
- `deep-folders`: 3,000 nested folders, in the clone and under `tests/` (`RecursionError` in
  the protect restore and the judge's copy);
- `sparse-file`: a 20 GiB sparse file (the diff read it whole; the judge's copy wrote it out);
- `stdout-flood`: 2 GiB on stdout and 1.5 GiB on stderr (spooled to the host's disk).

armbench runs with a soft file-size limit of 1 GiB (`RLIMIT_FSIZE`), so any file of a trial's
armbench writes whole on the host fails the run instead of filling the test machine's disk; the
scripted agent raises its own limit back (a soft limit may be raised up to the hard one) to make
its sparse file. Then a second run is killed (SIGKILL) while a trial that left 3,000 nested
folders sleeps, and `armbench resume` must finish it.
"""

from __future__ import annotations

import json
import resource
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from armbench.edge.tree import remove_tree
from e2e.conftest import (
    ARMBENCH,
    TIDY_SCORER,
    Result,
    World,
    hidden_task,
    make_world,
    parse_envelope,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SHAPES = ["non-utf8-name", "deep-folders", "sparse-file", "stdout-flood"]
FILE_LIMIT = 1 << 30
"""armbench's soft file-size limit in these runs."""
DEPTH = 3000
SPARSE = 20 << 30

AGENT = r'''
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

shape = sys.stdin.read().split()[0].rstrip(":")
arm = os.environ["ARMBENCH_MODEL"]
out = Path(os.environ["E2E_OUT"])
if arm == "honest":
    text = Path("calc.py").read_text()
    Path("calc.py").write_text(text.replace("return a - b", "return a + b"))


def nest(top, depth):
    os.makedirs(top, exist_ok=True)
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    leaf = os.open("leaf.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
    os.write(leaf, b"x = 1\n")
    os.close(leaf)
    os.close(fd)


if shape == "non-utf8-name":
    for folder in (b".", b"tests"):
        with open(folder + b"/bad-\xff\xfe name.py", "wb") as f:
            f.write(b"x = 1\n")
elif shape == "deep-folders":
    nest("deep", DEPTH)
    nest("tests/deep", DEPTH)
elif shape == "sparse-file":
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
    for name in ("big.bin", "tests/big.bin"):
        with open(name, "wb") as f:
            f.truncate(SPARSE)
elif shape == "stdout-flood":
    sys.stdout.flush()
    subprocess.run(["head", "-c", str(2 << 30), "/dev/zero"], check=True)
    subprocess.run(["head", "-c", str(3 << 29), "/dev/zero"], check=True, stdout=sys.stderr)
(out / f"left-{shape}-{arm}").write_text("done")
if (out / f"pause-{shape}-{arm}").exists():
    time.sleep(60)
'''.replace("DEPTH", str(DEPTH)).replace("SPARSE", str(SPARSE))

JUDGE = r"""
prompt=$(cat)
if touch probe 2>/dev/null; then echo writable >> "$E2E_OUT/judge-clone"
else echo read-only >> "$E2E_OUT/judge-clone"; fi
shape=$(printf '%s' "$prompt" | grep -o -m1 -E 'SHAPE-[a-z0-9-]+' | head -1)
printf '%s' "$prompt" > "$E2E_OUT/judge-prompt-$shape-$RANDOM$RANDOM"
if [ -e big.bin ]; then stat -c '%s' big.bin >> "$E2E_OUT/judge-big"; fi
echo '{"label": "tidy", "reason": "scripted"}'
"""


def limited(world: World, *args: str) -> Result:
    """`armbench <args>` under a soft file-size limit of FILE_LIMIT."""
    def limit() -> None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, hard))

    done = subprocess.run([str(ARMBENCH), *args], cwd=world.checkout, env=world.env,
                          capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL,
                          preexec_fn=limit)
    return Result(done.returncode, parse_envelope(done.stdout), done.stdout, done.stderr)


def limited_until(world: World, once: Path, *args: str) -> Result:
    """`armbench <args>` under the same limit, killed with SIGKILL once `once` exists."""
    def limit() -> None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, hard))

    with subprocess.Popen([str(ARMBENCH), *args], cwd=world.checkout, env=world.env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          stdin=subprocess.DEVNULL, preexec_fn=limit) as proc:
        import time
        deadline = time.monotonic() + 300
        while not once.exists():
            assert proc.poll() is None and time.monotonic() < deadline, f"{once.name} never appeared"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=60)
    return Result(proc.returncode, parse_envelope(stdout), stdout, stderr)


@dataclass
class Ran:
    world: World
    result: Result
    run: str
    record: dict


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ran]:
    world = make_world(tmp_path_factory.mktemp("shapes"))
    team, project = world.team, world.project
    team.tool("agent", AGENT, lang="python")
    team.tool("judge", JUDGE)
    team.write("scorers/tidy.md", TIDY_SCORER)
    team.suite("shapes", repetitions=1, parallel=1, timeout="15m", trial={"timeout": "5m"},
               defaults={"tool": "agent"}, scorers=["tidy"], judge={"tool": "judge"},
               arms=[{"name": "honest", "model": "honest"}, {"name": "idle", "model": "idle"}])
    for shape in SHAPES:
        team.task("shapes", shape, prompt=f"{shape}: add() in calc.py subtracts. Fix it. "
                  f"SHAPE-{shape}\n", **hidden_task(project))
    team.suite("resume", repetitions=1, parallel=1, timeout="15m", trial={"timeout": "5m"},
               defaults={"tool": "agent"}, arms=[{"name": "idle", "model": "idle"}])
    team.task("resume", "deep-folders", prompt="deep-folders: add() in calc.py subtracts.\n",
              **hidden_task(project))
    world.init_and_pull()
    world.configure(sandbox=True)
    try:
        result = limited(world, "run", "shapes")
        assert result.envelope is not None, result
        run = result.data["done"]["run"]
        yield Ran(world, result, run, world.record(run))
    finally:  # whatever a failed run left (3,000 nested folders): pytest's own clean-up recurses
        remove_tree(world.root)


def _results(ran: Ran, arm: str) -> dict[str, str]:
    return {t["task"]: t["result"] for t in ran.record["trials"] if t["arm"] == arm}


def _running_by_runs(world: World) -> list[str]:
    """The runs `armbench runs` lists as running."""
    listed = world.armbench("runs", "--json")
    assert listed.code == 0, listed
    rows = [json.loads(line) for line in listed.stdout.splitlines() if line.strip()]
    return [r["run"] for r in rows if r["state"] == "running"]


def _explained(ran: Ran, task: str, arm: str) -> str:
    """What `armbench explain` prints for the trial (its check step's id names it)."""
    step = next(e["step"] for e in ran.world.events("CheckRan")
                if e["kind"] == "trial" and f".{task}.{arm}." in e["step"])
    shown = ran.world.armbench("explain", ran.run, step)
    assert shown.code == 0, shown
    return shown.stdout + shown.stderr


def test_the_run_ends_and_no_run_is_left_running(ran: Ran) -> None:
    assert ran.result.code == 0, ran.result
    assert _running_by_runs(ran.world) == []


def test_every_honest_trial_passes_and_every_idle_one_fails(ran: Ran) -> None:
    assert _results(ran, "honest") == dict.fromkeys(SHAPES, "passed"), ran.result
    assert _results(ran, "idle") == dict.fromkeys(SHAPES, "failed"), ran.result


def test_every_trial_was_judged(ran: Ran) -> None:
    labels = [e for e in ran.world.events("LabelRecorded") if e["scorer"] == "tidy"]
    assert len(labels) == 2 * len(SHAPES), ran.world.events("JudgeFailed")


def test_a_name_that_is_not_utf8_is_carried_escaped_and_shown_escaped(ran: Ran) -> None:
    restored = {e["step"]: e["restored"] for e in ran.world.events("CheckRan")
                if e["kind"] == "trial" and ".non-utf8-name." in e["step"]}
    assert restored and all(r == ["tests/bad-\\xff\\xfe name.py"] for r in restored.values()), restored
    assert "bad-\\xff\\xfe name.py" in _explained(ran, "non-utf8-name", "idle")


def test_the_judge_reads_the_clone_read_only_in_place_never_a_copy(ran: Ran) -> None:
    assert set(ran.world.out_lines("judge-clone")) == {"read-only"}
    # the judge reads the tree the check grades: a 20 GiB file is not written onto it (the
    # diff names it, below)
    assert ran.world.out_lines("judge-big") == []


def test_a_file_over_the_size_limit_is_left_out_of_the_diff_and_named(ran: Ran) -> None:
    prompts = sorted(ran.world.out.glob("judge-prompt-SHAPE-sparse-file-*"))
    assert len(prompts) == 2
    for prompt in prompts:
        text = prompt.read_text(errors="replace")
        assert "left out of this diff, unread" in text
        named = f"big.bin ({SPARSE} bytes), tests/big.bin ({SPARSE} bytes)"
        assert f"unread, each over 1048576 bytes: {named}" in text
    kept = list(ran.world.kept("diff", "sparse-file").values())
    assert len(kept) == 2 and all(b"big.bin (21474836480 bytes)" in d for d in kept)


def test_a_flood_on_stdout_is_cut_and_the_cut_is_said(ran: Ran) -> None:
    said = _explained(ran, "stdout-flood", "idle")
    assert f"{2 << 30} bytes on stdout and {3 << 29} bytes on stderr" in said, said


def test_a_run_killed_beside_a_deep_clone_resumes_to_its_end(ran: Ran) -> None:
    world = ran.world
    (world.out / "pause-deep-folders-idle").write_text("")
    (world.out / "left-deep-folders-idle").unlink()  # the first run's
    world.env["ARMBENCH_LEASE_TTL"] = "2"
    killed = limited_until(world, world.out / "left-deep-folders-idle", "run", "resume")
    assert killed.code == -signal.SIGKILL, killed
    (world.out / "pause-deep-folders-idle").unlink()
    runs = _running_by_runs(world)
    assert len(runs) == 1, runs
    resumed = limited(world, "resume", runs[0])
    assert resumed.code == 0, resumed
    assert _running_by_runs(world) == []
    record = world.record(runs[0])
    assert [t["result"] for t in record["trials"]] == ["failed"]
