"""A tool that needs what the task's environment lacks (issue 28): its step is not started, and
its report names the missing file, the tool, the environment and the fix.

The environment is a small root made here from the host's own bash, sh and env with their
libraries, laid out as Debian does (`/bin`, `/lib` and `/lib64` links into `/usr`, the loader an
absolute link), so links are followed inside the root; the steps run in the real bubblewrap
sandbox.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from armbench.benchmark.agents.base import RUNTIME_MISSING
from armbench.benchmark.agents.claude import ClaudeCode
from armbench.benchmark.agents.command import CommandTool
from armbench.benchmark.trials.toolstep import ENVIRONMENT_NAME, ENVIRONMENT_ROOT
from armbench.edge.runtime import elf_interpreter
from armbench.edge.sandbox import Sandbox
from armbench.engine.protocol import Lease, Report

LOADER = "/lib64/ld-linux-x86-64.so.2"
MUSL = "/lib/ld-musl-x86_64.so.1"
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or elf_interpreter("/bin/bash") != LOADER,
                                reason="needs bubblewrap and an x86-64 glibc host")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root with bash, sh and env and their libraries, and nothing else."""
    root = tmp_path_factory.mktemp("root")
    for folder in ("usr/bin", "usr/lib", "usr/lib64"):
        (root / folder).mkdir(parents=True)
    for name in ("bin", "lib", "lib64"):
        (root / name).symlink_to(f"usr/{name}")
    for program, inside in (("/bin/bash", "bash"), ("/bin/sh", "sh"), ("/usr/bin/env", "env")):
        shutil.copy(os.path.realpath(program), root / "usr/bin" / inside)
        listed = subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout
        for lib in re.findall(r"(/\S+) \(0x", listed):
            if lib != LOADER:
                (root / "usr" / lib.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(os.path.realpath(lib), root / "usr" / lib.lstrip("/"))
    real_loader = "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
    shutil.copy(os.path.realpath(LOADER), root / "usr" / real_loader.lstrip("/"))
    (root / "usr/lib64/ld-linux-x86-64.so.2").symlink_to(real_loader)  # absolute: inside the root
    return root


def _lease(tmp_path: Path, root: Path) -> Lease:
    cwd = tmp_path / "clones" / "trial"
    cwd.mkdir(parents=True, exist_ok=True)
    return Lease(run="r-env", step="trials.r0.t.a.prompt", lease="l1", kind="prompt",
                 expires_at=datetime(2030, 1, 1, tzinfo=UTC), cwd=str(cwd), prompt="Fix it.\n",
                 model="m", context={ENVIRONMENT_ROOT: str(root),
                                     ENVIRONMENT_NAME: "image: oci-archive:images/tiny.tar"})


def _tool(tmp_path: Path, name: str, data: bytes) -> CommandTool:
    tool_dir = tmp_path / "tools" / "scripted"
    tool_dir.mkdir(parents=True, exist_ok=True)
    (tool_dir / name).write_bytes(data)
    (tool_dir / name).chmod(0o755)
    return CommandTool("scripted", f'"$ARMBENCH_TOOL_DIR/{name}" && echo > ran', tool_dir, Sandbox())


def _said(report: Report) -> str:
    assert report.outcome == "error" and report.cause == RUNTIME_MISSING, report
    assert report.duration_ms == 0 and report.exit_code is None, report
    return report.message or ""


def test_a_script_whose_interpreter_is_on_the_hosts_path_only_is_named(tmp_path: Path,
                                                                       root: Path) -> None:
    tool = _tool(tmp_path, "agent.js", b"#!/usr/bin/env node\nconsole.log('hi')\n")
    lease = _lease(tmp_path, root)
    said = _said(tool(lease, cancel=threading.Event()))
    assert "scripted cannot start in the task's environment (image: oci-archive:images/tiny.tar)" in said
    assert ("/tmp/.armbench/tool/agent.js is a script run by `#!/usr/bin/env node`, and node is "
            "not on PATH") in said
    assert "Fix: run this task on the host's root (no `environment:`), use an image that has node" in said
    assert not (Path(lease.cwd or "") / "ran").exists()


def test_an_elf_whose_dynamic_loader_the_root_lacks_is_named(tmp_path: Path, root: Path) -> None:
    binary = Path("/usr/bin/true").read_bytes()
    assert LOADER.encode() + b"\0" in binary
    patched = binary.replace(LOADER.encode(), MUSL.encode().ljust(len(LOADER), b"\0"), 1)
    tool = _tool(tmp_path, "agent", patched)
    said = _said(tool(_lease(tmp_path, root), cancel=threading.Event()))
    assert f"/tmp/.armbench/tool/agent is an ELF program whose dynamic loader {MUSL} is not there" in said
    assert f"use an image that has {MUSL}" in said


def test_a_built_in_clis_node_script_is_named_with_its_executable(tmp_path: Path, root: Path) -> None:
    bin_dir = tmp_path / "host-bin"
    bin_dir.mkdir()
    (bin_dir / "claude").write_text("#!/usr/bin/env node\nrequire('./cli.js')\n")
    (bin_dir / "claude").chmod(0o755)
    cli = ClaudeCode(str(bin_dir / "claude"), tmp_path / "scratch", Sandbox())
    said = _said(cli(_lease(tmp_path, root), cancel=threading.Event()))
    assert "claude cannot start in the task's environment" in said
    assert f"{bin_dir}/claude is a script run by `#!/usr/bin/env node`, and node is not on PATH" in said


def test_a_tool_the_root_can_run_runs(tmp_path: Path, root: Path) -> None:
    tool = _tool(tmp_path, "agent.sh", b"#!/bin/sh\nexec env sh -c 'exit 0'\n")
    lease = _lease(tmp_path, root)
    report = tool(lease, cancel=threading.Event())
    assert report.outcome == "succeeded" and report.cause == "ok", report
    assert (Path(lease.cwd or "") / "ran").exists()
