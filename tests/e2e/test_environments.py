"""Issue 28 end to end: a task's check that needs a tool the host lacks passes in the task's
environment (a Debian image with python3 made by mmdebstrap, plus a layer holding the tool) and
could not run without it; the record names the digest; the agent cannot write the cached root; an
image with a device file or a `..` path is refused before a run."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
from envimages import debian_with_toolchain, entry, layer, oci_archive

from e2e.conftest import FIX_ADD, TIDY_SCORER, World, make_world

pytestmark = pytest.mark.e2e

CHECK = "/opt/toolchain/bin/needs-env && grep -q 'return a + b' calc.py"
AGENT = f"""
cat > /dev/null
for p in /usr/bin/python3 /etc/os-release /opt/toolchain/bin/needs-env; do
  echo pwned > "$p" 2>/dev/null && echo "WROTE $p" >> ./agent-said
done
{FIX_ADD}"""


JUDGE = """cat > /dev/null
if [ -x /opt/toolchain/bin/needs-env ]; then
  echo '{"label": "tidy", "reason": "in the environment"}'
else
  echo '{"label": "messy", "reason": "on the host root"}'
fi
"""


def _task(world: World) -> dict[str, object]:
    return {"startingCommit": world.project.commits["test"],
            "check": {"run": CHECK, "protect": ["tests/**", "testconfig.ini"]}}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    world = make_world(tmp_path_factory.mktemp("environments"))
    image = debian_with_toolchain(world.root)
    world.team.tool("agent", AGENT)
    world.team.suite("in-env", environment={"image": f"oci-archive:{image}"})
    world.team.task("in-env", "needs-tool", **_task(world))
    world.team.tool("judge", JUDGE)
    world.team.write("scorers/tidy.md", TIDY_SCORER)
    world.team.suite("judged", environment={"image": f"oci-archive:{image}"}, scorers=["tidy"],
                     judge={"tool": "judge"})
    world.team.task("judged", "needs-tool", **_task(world))
    (world.team.work / "images").mkdir()
    tiny = oci_archive(world.team.work / "images" / "tiny.tar", [layer([
        *(entry(inside.lstrip("/"), Path(host).read_bytes(), mode=0o755) for inside, host in (
            ("/bin/sh", "/bin/dash"), ("/bin/bash", "/bin/bash"),
            ("/lib/x86_64-linux-gnu/libtinfo.so.6", "/lib/x86_64-linux-gnu/libtinfo.so.6"),
            ("/lib64/ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"),
            ("/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"))),
        entry("opt/marker", b"in the image")])])
    assert tiny.is_file()
    world.team.suite("from-team", environment={"image": "oci-archive:images/tiny.tar"})
    world.team.task("from-team", "marker", startingCommit=world.project.commits["test"],
                    check={"run": "test -e /opt/marker", "protect": ["tests/**"]})
    world.team.suite("on-host")
    world.team.task("on-host", "needs-tool", **_task(world))
    bad = oci_archive(world.root / "bad.tar", [layer([
        entry("bin/sh", b"#!", mode=0o755), entry("bin/bash", b"#!", mode=0o755),
        entry("dev/null", kind=tarfile.CHRTYPE)])])
    world.team.suite("device", environment={"image": f"oci-archive:{bad}"})
    world.team.task("device", "needs-tool", **_task(world))
    escape = oci_archive(world.root / "escape.tar", [layer([
        entry("bin/sh", b"#!", mode=0o755), entry("bin/bash", b"#!", mode=0o755),
        entry("../../outside", b"x")])])
    world.team.suite("escape", environment={"image": f"oci-archive:{escape}"})
    world.team.task("escape", "needs-tool", **_task(world))
    world.init_and_pull()
    return world


def test_the_check_passes_in_its_environment_and_the_record_names_the_digest(world: World) -> None:
    result = world.armbench("run", "in-env", "--sandbox", timeout=400)
    assert result.code == 0, result
    record = world.record(result.data["done"]["run"])
    plan = next(e for e in world.events("PlanFrozen") if e["suite"] == "in-env")
    digest = plan["tasks"][0]["environment"]["digest"]
    assert digest.startswith("sha256:")
    assert [(t["result"], t["environment"]) for t in record["trials"]] == [("passed", digest)]
    assert record["tasks"][0]["environment"] == digest
    assert [b["status"] for b in record["baselines"]] == ["valid"]  # ran in the image, and failed
    cached = world.home / "cache" / "rootfs" / digest.replace(":", "-")  # ARMBENCH_HOME
    assert (cached / "root" / "usr" / "bin" / "python3").exists()
    assert b"pwned" not in (cached / "root" / "etc" / "os-release").read_bytes()
    manifest = json.loads((cached / "manifest.json").read_text())
    assert any(entry[0] == "opt/toolchain/bin/needs-env" for entry in manifest)


def test_the_judge_runs_in_the_task_environment_too(world: World) -> None:
    result = world.armbench("run", "judged", "--sandbox", timeout=400)
    assert result.code == 0, result
    record = world.record(result.data["done"]["run"])
    [trial] = record["trials"]
    assert trial["result"] == "passed"
    assert [label["label"] for label in trial["labels"]] == ["tidy"], trial["labels"]


def test_an_image_committed_to_the_team_repo_is_read_at_the_pulled_revision(world: World) -> None:
    result = world.armbench("run", "from-team", "--sandbox", timeout=400)
    plan = next(e for e in world.events("PlanFrozen") if e["suite"] == "from-team")
    environment = plan["tasks"][0]["environment"]
    assert environment["source"] == "oci-archive:images/tiny.tar"
    assert "/cache/team-files/" in environment["path"]
    record = world.record(result.data["done"]["run"])
    assert record["tasks"][0]["environment"] == environment["digest"]
    [baseline] = record["baselines"]
    assert baseline.get("cause") != "not_found" and baseline["status"] != "could_not_run", baseline


def test_without_the_environment_the_check_could_not_run(world: World) -> None:
    assert not Path("/opt/toolchain").exists()
    result = world.armbench("run", "on-host", "--sandbox", timeout=400)
    record = world.record(result.data["done"]["run"])
    assert [(b["status"], b.get("cause")) for b in record["baselines"]] == [("could_not_run", "not_found")]
    assert "environment" not in record["trials"][0]


@pytest.mark.parametrize(("suite", "words"), [("device", "special file"), ("escape", "outside")])
def test_an_unsafe_image_is_refused_before_a_run(world: World, suite: str, words: str) -> None:
    result = world.armbench("run", suite, "--sandbox", timeout=120)
    assert result.code == 2, result
    said = json.dumps(result.envelope)
    assert "environment_unsafe" in said and words in said, said
    assert not (world.root.parent / "outside").exists()
    assert not any(e["suite"] == suite for e in world.events("PlanFrozen"))
