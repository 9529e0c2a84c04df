"""#38 point 3: a step sees of the host only what a toolchain needs, with the real `bwrap`.

The host's root is built from an allowlist (`edge.sandbox.HOST_SHOWN`, the toolchains on PATH,
`workflows.sandbox_read`), not the host's root minus a denylist. A git mirror and a listening
Unix socket in a host folder outside it (`/var/tmp`, which every system has and anyone may write,
standing for a mirror under `/srv` and PostgreSQL's `/var/run/postgresql`) are not there at all.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from listeners import serving

from armbench.edge.proc import run_step
from armbench.edge.sandbox import HOST_SHOWN, Room, Sandbox, host_root

LOOK = r"""
python3 - <<'EOF'
import json, os, socket, sys
def connects(path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        s.sendall(b"hello")
        return True
    except OSError:
        return False
    finally:
        s.close()
where = os.environ["LOOK_WHERE"]
print(json.dumps({
    "top": sorted(os.listdir("/")),
    "var": sorted(os.listdir("/var")),
    "var_tmp": os.listdir("/var/tmp"),
    "mirror": os.path.exists(where + "/mirror.git/HEAD"),
    "socket": connects(where + "/pg.sock"),
    "run": os.path.exists("/run"),
    "resolv": os.path.exists("/etc/resolv.conf") and bool(open("/etc/resolv.conf").read()),
    "python": sys.version_info[:2],
    "ssl": __import__("ssl").OPENSSL_VERSION,
}))
EOF
"""


@pytest.fixture
def room(tmp_path: Path) -> Room:
    clone = tmp_path / "work" / "clones" / "abc"
    clone.mkdir(parents=True)
    return Room.of(clone).make()


@pytest.fixture
def host_folder() -> Iterator[tuple[Path, list[bytes]]]:
    """A folder on the host outside the allowlist holding a git mirror and a listening Unix
    socket; the list holds what the socket received."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="armbench-host-") as where:
        folder = Path(where)
        subprocess.run(["git", "init", "-q", "--bare", str(folder / "mirror.git")], check=True)
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(folder / "pg.sock"))
        server.listen(4)
        got = serving(server)
        try:
            yield folder, got
        finally:
            server.close()


def look(tmp_path: Path, room: Room, where: Path, *, fresh: bool) -> dict:
    home = tmp_path / "member-home"
    home.mkdir(exist_ok=True)
    launch = Sandbox(home=home).launch(room, fresh=fresh)
    env = dict(os.environ) if not fresh else {"PATH": launch.env["PATH"]}
    done = run_step(LOOK, cwd=launch.cwd, env={**env, **launch.env, "LOOK_WHERE": str(where)},
                    sandbox=launch.argv)
    assert done.cause == "ok", done
    return json.loads(done.stdout_tail)


@pytest.mark.parametrize("fresh", [False, True], ids=["setup-and-tool", "check"])
def test_a_step_sees_the_system_and_its_toolchains_and_no_other_part_of_the_hosts_root(
        tmp_path: Path, room: Room, host_folder: tuple[Path, list[bytes]], fresh: bool) -> None:
    where, got = host_folder
    seen = look(tmp_path, room, where, fresh=fresh)
    _, shown = host_root(Sandbox(home=tmp_path / "member-home").toolchains())
    allowed = {*HOST_SHOWN, "dev", "proc", "tmp", "var"} | {p.parts[1] for p in shown}
    assert set(seen["top"]) <= allowed, set(seen["top"]) - allowed
    for gone in ("srv", "mnt", "media", "run", "boot", "home", "work"):
        assert gone not in seen["top"] or gone in allowed
    assert not seen["run"] and seen["var"] == ["tmp"] + [v for v in seen["var"] if v == "lib"]
    assert seen["var_tmp"] == []
    assert not seen["mirror"] and not seen["socket"] and got == []
    resolv = Path("/etc/resolv.conf")
    assert seen["resolv"] == (resolv.exists() and bool(resolv.read_text()))


def test_the_socket_and_the_mirror_are_there_without_the_sandbox(
        tmp_path: Path, room: Room, host_folder: tuple[Path, list[bytes]]) -> None:
    """The control: the same look on the host reaches both."""
    where, got = host_folder
    done = run_step(LOOK, cwd=room.clone, env={**os.environ, "LOOK_WHERE": str(where)})
    seen = json.loads(done.stdout_tail)
    assert seen["mirror"] and seen["socket"]
    assert got == [b"hello"]


def test_a_toolchain_on_path_outside_the_system_folders_is_shown_and_its_hidden_parts_are_not(
        tmp_path: Path, room: Room, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python installed under its own prefix (pyenv's, Homebrew's, a CI tool cache's): the
    prefix is shown, so a venv made from it runs in setup and in the check; a folder of
    armbench's state inside it stays hidden; the rest of the folder holding it does not show."""
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="armbench-tc-") as where:
        prefix = Path(where) / "toolchain"
        (prefix / "bin").mkdir(parents=True)
        (prefix / "bin" / "greet").write_text("#!/bin/sh\ncat \"$(dirname \"$0\")/../share/word\"\n")
        (prefix / "bin" / "greet").chmod(0o755)
        (prefix / "share").mkdir()
        (prefix / "share" / "word").write_text("hello\n")
        (prefix / "state").mkdir()
        (prefix / "state" / "key").write_text("secret\n")
        (Path(where) / "beside").write_text("not a toolchain\n")
        monkeypatch.setenv("PATH", f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}")
        home = tmp_path / "member-home"
        home.mkdir()
        sandbox = Sandbox(home=home, hide=(prefix / "state",))
        assert prefix in sandbox.toolchains()
        for fresh in (False, True):
            launch = sandbox.launch(room, fresh=fresh)
            done = run_step(f"greet; cat {prefix}/state/key; ls {where}", cwd=launch.cwd,
                            env={**os.environ, **launch.env}, sandbox=launch.argv)
            assert done.stdout_tail == b"hello\ntoolchain\n", (fresh, done)


def test_a_local_suite_repo_is_hidden_even_in_a_shown_folder(tmp_path: Path) -> None:
    """A mirror the suite names by path holds the fix: hidden wherever it lies."""
    mirror = tmp_path / "srv" / "calc.git"
    mirror.mkdir(parents=True)
    sandbox = Sandbox(home=tmp_path / "home", read=(tmp_path / "srv",)).of_repo(str(mirror), tmp_path)
    assert sandbox.name == "calc" and mirror in sandbox.hide
    relative = Sandbox().of_repo("srv/calc.git", tmp_path)
    assert tmp_path / "srv" / "calc.git" in relative.hide
    assert Sandbox().of_repo("https://example.com/calc.git", tmp_path).hide == ()
    room = Room.of(tmp_path / "work" / "clones" / "x")
    room.clone.mkdir(parents=True)
    room.make()
    launch = sandbox.launch(room)
    done = run_step(f"ls {mirror} && echo shown", cwd=launch.cwd, env=dict(os.environ), sandbox=launch.argv)
    assert b"shown" in done.stdout_tail and list(mirror.iterdir()) == []  # an empty tmpfs over it
    (mirror / "HEAD").write_text("ref: refs/heads/main\n")
    done = run_step(f"cat {mirror}/HEAD", cwd=launch.cwd, env=dict(os.environ), sandbox=launch.argv)
    assert done.stdout_tail == b""
