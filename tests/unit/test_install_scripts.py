"""scripts/apt-install.sh and the install-*.sh scripts that call it, run with bash on a PATH of
stand-ins: an `id` that says who we are, an `apt-get` and a `sudo` that write down what they were
asked, so no package is installed and no root is needed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"
BASH = shutil.which("bash") or "/bin/bash"


def stand_ins(tmp_path: Path, *, uid: int, sudo: str | None) -> dict[str, str]:
    """A PATH holding only bash, dirname, ls, id (printing `uid`), apt-get (logging, and touching
    $INSTALLED on an install) and, unless `sudo` is None, a sudo whose `-n true` exits `sudo`."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("bash", "dirname", "ls"):
        (bin_ / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    scripts = {"id": f'echo {uid}\n',
               "apt-get": 'echo "apt-get $*" >> "$LOG"\n'
                          'case "$1" in install) : > "$INSTALLED";; esac\n'}
    if sudo is not None:
        scripts["sudo"] = f'[ "$*" = "-n true" ] && exit {sudo}\nprintf "sudo " >> "$LOG"\n"$@"\n'
    for name, body in scripts.items():
        (bin_ / name).write_text(f"#!{BASH}\n{body}")
        (bin_ / name).chmod(0o755)
    return {"PATH": str(bin_), "LOG": str(tmp_path / "log"), "INSTALLED": str(tmp_path / "installed")}


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([BASH, *args], env=env, capture_output=True, text=True, timeout=60,
                          check=False)


def asked(env: dict[str, str]) -> list[str]:
    log = Path(env["LOG"])
    return log.read_text().splitlines() if log.exists() else []


MESSAGE = ("demo is not installed and could not be installed here: install the demo-pkg package "
           "(Debian: apt-get install demo-pkg), then run this again.\n")


@pytest.mark.parametrize(("uid", "sudo", "calls"), [
    (0, None, ["apt-get update -qq", "apt-get install -y -qq demo-pkg"]),
    (1000, "0", ["sudo apt-get update -qq", "sudo apt-get install -y -qq demo-pkg"]),
    (1000, "1", []),  # sudo wants a password
    (1000, None, []),  # no sudo
], ids=["root", "sudo", "sudo-with-password", "no-sudo"])
def test_a_missing_package_is_installed_as_root_or_through_sudo_else_the_message_says_how(
        tmp_path: Path, uid: int, sudo: str | None, calls: list[str]) -> None:
    env = stand_ins(tmp_path, uid=uid, sudo=sudo)
    done = run(env, str(SCRIPTS / "apt-install.sh"), "demo-pkg", "demo", "Debian", "false")
    assert (done.returncode, done.stdout, done.stderr) == (1, "", MESSAGE)
    assert asked(env) == calls


def test_what_the_install_provided_ends_it_quietly(tmp_path: Path) -> None:
    env = stand_ins(tmp_path, uid=0, sudo=None)
    done = run(env, str(SCRIPTS / "apt-install.sh"), "demo-pkg", "demo", "Debian",
               "test", "-e", env["INSTALLED"])
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert asked(env) == ["apt-get update -qq", "apt-get install -y -qq demo-pkg"]


def test_a_package_already_there_is_left_alone(tmp_path: Path) -> None:
    env = stand_ins(tmp_path, uid=0, sudo="0")
    done = run(env, str(SCRIPTS / "apt-install.sh"), "demo-pkg", "demo", "Debian", "true")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert asked(env) == []


@pytest.mark.parametrize(("script", "message"), [
    ("install-bubblewrap.sh", "bubblewrap is not installed and could not be installed here: install "
                              "the bubblewrap package (Debian and Ubuntu: apt-get install bubblewrap)"),
    ("install-chromium.sh", "chromium is not installed and could not be installed here: install the "
                            "chromium package (Debian: apt-get install chromium)"),
])
def test_each_install_script_checks_its_own_command_and_names_its_package(
        tmp_path: Path, script: str, message: str) -> None:
    env = stand_ins(tmp_path, uid=1000, sudo=None)  # neither bwrap nor chromium is on this PATH
    done = run(env, str(SCRIPTS / script))
    assert done.returncode == 1
    assert done.stderr == f"{message}, then run this again.\n"


@pytest.mark.parametrize("script", ["install-bubblewrap.sh", "install-postgres.sh",
                                    "install-chromium.sh"])
def test_each_install_script_finds_what_scripts_test_sh_installed_and_does_nothing(script: str) -> None:
    env = {"PATH": os.environ["PATH"], "LOG": os.devnull}
    done = run(env, str(SCRIPTS / script))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
