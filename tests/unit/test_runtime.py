"""edge/runtime.py: an ELF's PT_INTERP read with `struct` (both classes, both byte orders), a
`#!` line, and what a bubblewrap command line shows at a path (binds, links, empty mounts)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from armbench.edge.runtime import Shown, elf_interpreter, missing_runtime, shebang


def _elf(wide: bool, order: str, interp: bytes | None) -> bytes:
    """A minimal ELF: its header, one program header (PT_INTERP, or PT_LOAD when `interp` is
    None) and the loader's name."""
    ident = b"\x7fELF" + bytes([2 if wide else 1, 1 if order == "<" else 2, 1]) + bytes(9)
    header_size, entry_size = (64, 56) if wide else (52, 32)
    data_at = header_size + entry_size
    kind, payload = (3, interp + b"\0") if interp is not None else (1, b"")
    if wide:
        header = ident + struct.pack(order + "HHIQQQIHHHHHH", 2, 62, 1, 0, header_size, 0, 0,
                                     header_size, entry_size, 1, 0, 0, 0)
        entry = struct.pack(order + "IIQQQQQQ", kind, 4, data_at, 0, 0, len(payload), len(payload), 1)
    else:
        header = ident + struct.pack(order + "HHIIIIIHHHHHH", 2, 3, 1, 0, header_size, 0, 0,
                                     header_size, entry_size, 1, 0, 0, 0)
        entry = struct.pack(order + "IIIIIIII", kind, data_at, 0, 0, len(payload), len(payload), 4, 1)
    assert len(header) == header_size and len(entry) == entry_size
    return header + entry + payload


@pytest.mark.parametrize(("wide", "order"), [(True, "<"), (True, ">"), (False, "<"), (False, ">")])
def test_an_elfs_loader_is_read_in_either_class_and_byte_order(tmp_path: Path, wide: bool,
                                                               order: str) -> None:
    (tmp_path / "dynamic").write_bytes(_elf(wide, order, b"/lib/ld-musl-x86_64.so.1"))
    (tmp_path / "static").write_bytes(_elf(wide, order, None))
    assert elf_interpreter(str(tmp_path / "dynamic")) == "/lib/ld-musl-x86_64.so.1"
    assert elf_interpreter(str(tmp_path / "static")) is None


def test_what_is_not_an_elf_has_no_loader(tmp_path: Path) -> None:
    (tmp_path / "script").write_text("#!/bin/sh\n")
    (tmp_path / "short").write_bytes(b"\x7fELF\x02\x01")
    assert elf_interpreter(str(tmp_path / "script")) is None
    assert elf_interpreter(str(tmp_path / "short")) is None
    assert elf_interpreter(str(tmp_path / "missing")) is None


def test_a_shebang_line_is_split_into_interpreter_and_arguments(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("#! /usr/bin/env -S node --max-old-space-size=64\nx\n")
    (tmp_path / "b").write_text("echo no\n")
    assert shebang(str(tmp_path / "a")) == ("/usr/bin/env", ["-S", "node", "--max-old-space-size=64"])
    assert shebang(str(tmp_path / "b")) is None


def test_the_sandbox_shows_binds_links_and_empty_folders_as_bubblewrap_mounts_them(
        tmp_path: Path) -> None:
    root, tool = tmp_path / "root", tmp_path / "tool"
    (root / "usr" / "bin").mkdir(parents=True)
    (root / "usr" / "bin" / "env").write_bytes(b"#!")
    (root / "usr" / "lib").mkdir()
    (root / "usr" / "lib" / "ld.so").write_bytes(b"")
    (root / "usr" / "lib" / "ld-link").symlink_to("/usr/lib/ld.so")  # absolute: inside the root
    tool.mkdir()
    (tool / "agent").write_bytes(_elf(True, "<", b"/lib/ld-link"))
    (tool / "run.js").write_text("#!/usr/bin/env -S node --x\n")
    argv = ["bwrap", "--ro-bind", str(root / "usr"), "/usr", "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib", "--dir", "/opt", "--tmpfs", "/tmp",
            "--ro-bind", str(tool), "/tmp/tool", "--", "/bin/bash"]
    shown = Shown(argv)
    assert shown.find("/bin/env") == str(root / "usr" / "bin" / "env")
    assert shown.find("/lib/ld-link") == str(root / "usr" / "lib" / "ld.so")
    assert shown.find("/tmp/tool/agent") == str(tool / "agent")
    assert shown.find("/tmp/other") is None and shown.find("/opt/x") is None
    assert shown.find("/nowhere") is None
    assert missing_runtime(shown, "/tmp/tool/agent", "/usr/bin") is None  # its loader is there
    missing = missing_runtime(shown, "/tmp/tool/run.js", "/usr/local/bin:/usr/bin")
    assert missing is not None and missing.path == "node", missing
    assert "run by `#!/usr/bin/env node`, and node is not on PATH" in missing.why
    assert missing_runtime(shown, "/tmp/tool/not-there", "/usr/bin") is None  # the step says not_found
