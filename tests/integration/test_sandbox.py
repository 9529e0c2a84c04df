"""The bubblewrap sandbox itself, with the real `bwrap`: what a step sees, keeps and can reach."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
from pathlib import Path

import pytest
from e2e.conftest import serve

from armbench.edge.proc import run_step
from armbench.edge.sandbox import Room, Sandbox, probe

SPY = r"""
python3 - <<'EOF'
import json, os
from pathlib import Path
def can_write(p):
    try:
        Path(p).write_text("x")
        return True
    except OSError:
        return False
print(json.dumps({
    "cwd": os.getcwd(), "home": os.environ["HOME"], "tmpdir": os.environ.get("TMPDIR"),
    "home_files": sorted(os.listdir(os.environ["HOME"])), "tmp_files": sorted(os.listdir("/tmp")),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "hidden_exists": os.path.exists(os.environ["SPY_HIDDEN"]),
    "shared_write": can_write(os.environ["SPY_SHARED"] + "/evidence"),
    "root_write": can_write("/etc/armbench-test"),
    "clone_files": sorted(os.listdir(".")),
    "path": os.environ["PATH"], "nousersite": os.environ.get("PYTHONNOUSERSITE"),
    "git_global": os.environ.get("GIT_CONFIG_GLOBAL"),
}))
Path(os.environ["HOME"], "planted").write_text("x")
Path("/tmp/planted").write_text("x")
EOF
"""


@pytest.fixture
def room(tmp_path: Path) -> Room:
    clone = tmp_path / "work" / "clones" / "abc"
    clone.mkdir(parents=True)
    (clone / "calc.py").write_text("x = 1\n")
    return Room.of(clone).make()


def in_tmp(home: Path) -> list[str]:
    """What /tmp holds besides the clone: the folder the home is mounted in, when it is in /tmp."""
    return [home.relative_to("/tmp").parts[0]] if home.is_relative_to("/tmp") else []


def spy(tmp_path: Path, room: Room, *, fresh: bool) -> dict:
    hidden, shared = tmp_path / "state", tmp_path / "shared"
    hidden.mkdir(exist_ok=True)
    shared.mkdir(exist_ok=True)
    sandbox = Sandbox(hide=(hidden,), write=(shared,), name="calc", home=tmp_path / "member-home")
    (tmp_path / "member-home").mkdir(exist_ok=True)
    (tmp_path / "member-home" / ".secret").write_text("member's")
    launch = sandbox.launch(room, fresh=fresh)
    env = {**os.environ, **launch.env, "SPY_HIDDEN": str(hidden), "SPY_SHARED": str(shared)}
    done = run_step(SPY, cwd=launch.cwd, env=env, sandbox=launch.argv, timeout_s=60)
    assert done.cause == "ok", done.stderr_tail.decode()
    return json.loads(done.stdout_tail)


def test_bubblewrap_can_make_a_sandbox_here() -> None:
    probe(Sandbox())  # CI installs bubblewrap; a machine that cannot make one fails here, never skips


def test_a_step_sees_its_clone_its_own_home_and_tmp_and_nothing_of_armbenchs(
        tmp_path: Path, room: Room) -> None:
    seen = spy(tmp_path, room, fresh=False)
    assert seen["cwd"] == "/tmp/calc" and seen["clone_files"] == ["calc.py"]
    assert seen["home"] == str(tmp_path / "member-home") and seen["home_files"] == []
    assert seen["tmpdir"] == "/tmp" and seen["tmp_files"] == sorted(["calc", *in_tmp(tmp_path)])
    assert max(seen["pids"]) < 10  # a PID namespace of its own
    assert seen["hidden_exists"] is False
    assert seen["shared_write"] is True and seen["root_write"] is False
    # what it left in its home and /tmp is the trial's, on the host, until the trial ends
    assert (room.home / "planted").exists() and (room.tmp / "planted").exists()
    assert not (tmp_path / "member-home" / "planted").exists()


def test_a_check_gets_a_fresh_home_and_tmp_that_the_tool_never_touched(tmp_path: Path, room: Room) -> None:
    spy(tmp_path, room, fresh=False)  # the tool's step plants in the trial's home and /tmp
    seen = spy(tmp_path, room, fresh=True)
    assert seen["home_files"] == [] and seen["tmp_files"] == sorted(["calc", *in_tmp(tmp_path)])
    assert seen["nousersite"] == "1" and seen["git_global"] == "/dev/null"
    home = str(tmp_path / "member-home")
    assert all(not entry.startswith((home, "/tmp")) for entry in seen["path"].split(":")), seen["path"]


def test_a_check_has_no_network_and_a_tool_keeps_the_hosts(tmp_path: Path, room: Room) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    threading.Thread(target=serve, args=(server,), daemon=True).start()
    probe_cmd = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)'"
    sandbox = Sandbox(home=tmp_path)
    results = {}
    for name, kwargs in {"tool": {}, "tool-none": {"network": "none"}, "check": {"fresh": True}}.items():
        launch = sandbox.launch(room, **kwargs)  # type: ignore[arg-type]
        results[name] = run_step(probe_cmd, cwd=launch.cwd, env={**os.environ, **launch.env},
                                 sandbox=launch.argv, timeout_s=30).cause
    server.close()
    assert results == {"tool": "ok", "tool-none": "exit", "check": "exit"}


@pytest.mark.slow  # waits out the leftovers
def test_everything_a_step_started_ends_with_it(tmp_path: Path, room: Room) -> None:
    launch = Sandbox(home=tmp_path).launch(room)
    daemon = "setsid sh -c 'sleep 2; echo late > late' > /dev/null 2>&1 & echo started"
    done = run_step(daemon, cwd=launch.cwd, env={**os.environ, **launch.env}, sandbox=launch.argv)
    assert done.cause == "ok" and done.leftovers == 0
    threading.Event().wait(2.5)
    assert not (room.clone / "late").exists()


def test_a_sandbox_that_cannot_start_its_step_is_sandbox_failed_not_the_steps_exit(
        tmp_path: Path, room: Room) -> None:
    launch = Sandbox(home=tmp_path, read=(tmp_path / "missing",)).launch(room)
    broken = [launch.argv[0], "--ro-bind", str(tmp_path / "nowhere"), "/nowhere", *launch.argv[1:]]
    done = run_step("exit 1", cwd=launch.cwd, env=dict(os.environ), sandbox=broken)
    assert (done.cause, done.exit_code) == ("sandbox_failed", None)
    assert b"nowhere" in done.stderr_tail


def test_a_signal_that_ended_the_step_is_a_signal_not_an_exit_code(tmp_path: Path, room: Room) -> None:
    launch = Sandbox(home=tmp_path).launch(room)
    done = run_step("kill -9 $$", cwd=launch.cwd, env=dict(os.environ), sandbox=launch.argv)
    assert (done.cause, done.signal, done.exit_code) == ("signal", 9, None)


def test_declared_runs_on_the_host_as_before(tmp_path: Path, room: Room) -> None:
    launch = Sandbox(isolation="declared").launch(room)
    assert launch.argv == [] and launch.env == {} and launch.clone == str(room.clone)


def test_a_sandboxed_step_leaves_no_zombie_behind(tmp_path: Path, room: Room) -> None:
    """bwrap hands its pid 1 to us (the subreaper) when it exits: run_step reaps it."""
    launch = Sandbox(home=tmp_path).launch(room)
    before = _zombie_children()  # earlier in-process tests' orphans wait here too
    for _ in range(3):
        assert run_step("true", cwd=launch.cwd, env=dict(os.environ), sandbox=launch.argv).cause == "ok"
    assert _zombie_children() - before == set()


def _zombie_children() -> set[str]:
    return {p.name for p in Path("/proc").iterdir() if p.name.isdigit() and _zombie_child(p)}


def _zombie_child(proc: Path) -> bool:
    try:
        fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] == "Z" and int(fields[1]) == os.getpid()


def test_a_tools_folder_is_shown_but_never_the_home_or_a_folder_holding_armbenchs_state(
        tmp_path: Path, room: Room) -> None:
    home, state = tmp_path / "member-home", tmp_path / "project" / ".armbench"
    (home / ".local" / "bin").mkdir(parents=True)
    state.mkdir(parents=True)
    sandbox = Sandbox(home=home, hide=(state,))
    argv = sandbox.launch(room, expose=[home / ".local" / "bin", home, tmp_path / "project", Path("/")]).argv
    shown = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] == argv[i + 2]]
    assert str(home / ".local" / "bin") in shown
    assert not {str(home), str(tmp_path / "project"), "/"} & set(shown[1:])  # shown[0] is the root


def test_a_hidden_file_is_covered(tmp_path: Path, room: Room) -> None:
    """In a folder a step is shown (`workflows.sandbox_read`), outside /tmp and the home (which a
    step never sees anyway), as armbench's command is in a shown `/usr/local/bin`."""
    with tempfile.TemporaryDirectory(dir="/var/tmp") as where:
        script, kept = Path(where) / "armbench", Path(where) / "kept"
        script.write_text("#!/bin/sh\necho armbench\n")
        kept.write_text("kept\n")
        launch = Sandbox(home=tmp_path, hide=(script,), read=(Path(where),)).launch(room)
        done = run_step(f"cat {script} 2>/dev/null; cat {kept}", cwd=launch.cwd, env=dict(os.environ),
                        sandbox=launch.argv)
    assert done.cause == "ok" and done.stdout_tail == b"kept\n"  # the script's bytes never show
