"""What the check's change facts read (`benchmark.host._change_facts`) is the agent's: a tool that
leaves a link to a host file, a FIFO, a file over the read limit and odd names in its change gets
its trial checked as usual; no link is followed, no FIFO blocks the run, no host file changes,
and nothing of the host file reaches the record."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from e2e.conftest import FIX_ADD, hidden_task, make_world

pytestmark = pytest.mark.e2e


def test_links_fifos_huge_files_and_odd_names_in_a_change_are_read_as_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "host-secret.py"
    secret.write_text("TOKEN = 'do-not-read'\n@unittest.skip('host')\n")
    before = hashlib.sha256(secret.read_bytes()).hexdigest()
    attack = ("set -eu\ncat >/dev/null\n" + FIX_ADD
              + f"ln -s {secret} lib_link.py\n"
              + "mkfifo pipe_test.py\n"
              + "head -c 3145728 /dev/zero > big_test.py\n"
              + "printf 'x = 1\\n' > \"$(printf 'odd\\nname.py')\"\n"
              + "mkdir -p more && printf '@unittest.skip(\"x\")\\n' > more/test_a.py\n")
    world = make_world(tmp_path / "w")
    world.team.tool("attacker", attack)
    world.team.suite("s", defaults={"tool": "attacker"})
    world.team.task("s", "add", **hidden_task(world.project))
    world.init_and_pull()
    ran = world.armbench("run", "s", "--sandbox", timeout=300)
    assert ran.code == 0, ran
    record = world.record(ran.data["done"]["run"])
    [trial] = record["trials"]
    assert trial["result"] == "passed"
    assert [f["name"] for f in trial.get("flags", [])] == ["skips_tests"]  # read where it may be
    assert "do-not-read" not in str(record) and "host" not in str(trial.get("flags"))
    assert hashlib.sha256(secret.read_bytes()).hexdigest() == before
