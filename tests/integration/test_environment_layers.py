"""Layers applied in one pass (edge/layers.py): the data filter's rules kept without its
`realpath`s, nothing written through a link even after a folder is replaced, and the manifest
built from the hashes taken while writing equal to one read back from the disk."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import stat
import tarfile
from pathlib import Path

import pytest
from envimages import entry, layer, oci_archive

from edge import environment
from edge.environment import EnvironmentRefused, manifest_of, resolve
from edge.layers import _file_mode


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARMBENCH_HOME", str(tmp_path / "armbench-home"))
    environment._resolve_once.cache_clear()


def _shell() -> list[tuple[tarfile.TarInfo, bytes]]:
    return [entry("bin/sh", b"#!shell\n", mode=0o755), entry("bin/bash", b"#!shell\n", mode=0o755)]


def _refused(tmp_path: Path, layers: list[bytes]) -> EnvironmentRefused:
    image = oci_archive(tmp_path / "img.tar", layers)
    with pytest.raises(EnvironmentRefused) as refused:
        resolve("image", f"oci-archive:{image}", base=tmp_path)
    return refused.value


def test_a_folder_replaced_by_a_link_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    got = _refused(tmp_path, [
        layer([*_shell(), entry("a", kind=tarfile.DIRTYPE, mode=0o755), entry("a/f", b"1")]),
        layer([entry("a/g", b"2"), entry(".wh.a"), entry("a", kind=tarfile.SYMTYPE, link=str(outside)),
               entry("a/x", b"pwned")]),
    ])
    assert got.code == "environment_unsafe" and re.search("through a link|outside", str(got)), got
    assert not (outside / "x").exists()


def test_an_opaque_folder_then_a_link_in_it_is_not_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    got = _refused(tmp_path, [layer([
        *_shell(), entry("o/in/f", b"1"), entry("o/.wh..wh..opq"),
        entry("o/in", kind=tarfile.SYMTYPE, link=str(outside)), entry("o/in/x", b"pwned")])])
    assert got.code == "environment_unsafe" and re.search("through a link|outside", str(got)), got
    assert not (outside / "x").exists()


def test_a_hard_link_to_a_link_is_a_link_not_its_target(tmp_path: Path) -> None:
    image = oci_archive(tmp_path / "img.tar", [layer([
        *_shell(), entry("etc/passwd-link", kind=tarfile.SYMTYPE, link="/etc/passwd"),
        entry("hard", kind=tarfile.LNKTYPE, link="etc/passwd-link")])])
    got = resolve("image", f"oci-archive:{image}", base=tmp_path)
    assert os.readlink(got.root / "hard") == "/etc/passwd"
    assert os.lstat(got.root / "hard").st_ino != os.stat("/etc/passwd").st_ino


@pytest.mark.parametrize("name", [".wh..", "etc/.wh.", "etc/.wh.."])
def test_a_whiteout_that_names_no_entry_is_refused(tmp_path: Path, name: str) -> None:
    got = _refused(tmp_path, [layer([*_shell(), entry("etc/a", b"1"), entry(name)])])
    assert got.code == "environment_unsafe" and "names no entry" in str(got), got


def test_the_manifest_from_the_writing_equals_the_one_read_back(tmp_path: Path) -> None:
    """Files replaced, whited out, hard-linked and from a gzip layer (read through tarfile)."""
    zipped = io.BytesIO()
    with gzip.GzipFile(fileobj=zipped, mode="wb") as out:
        out.write(layer([entry("z/one", b"from a gzip layer"), entry("etc/b", b"replaced again")]))
    image = oci_archive(tmp_path / "img.tar", [
        layer([*_shell(), entry("etc/a", b"a" * 70000), entry("etc/b", b"b"),
               entry("etc/hl", kind=tarfile.LNKTYPE, link="etc/a"), entry("gone/f", b"x"),
               entry("setuid", b"s", mode=0o4775)]),
        layer([entry("etc/b", b"bb"), entry(".wh.gone"), entry("etc/a", b"new a"),
               entry("etc/hl2", kind=tarfile.LNKTYPE, link="etc/b")]),
        zipped.getvalue(),
    ])
    got = resolve("image", f"oci-archive:{image}", base=tmp_path)
    stored = json.loads((got.root.parent / "manifest.json").read_text())
    assert stored == manifest_of(got.root)
    assert (got.root / "etc/b").read_bytes() == b"replaced again"
    assert (got.root / "etc/hl").read_bytes() == b"a" * 70000  # linked to the first etc/a
    assert (got.root / "z/one").read_bytes() == b"from a gzip layer"
    assert not (got.root / "gone").exists()
    assert stat.S_IMODE((got.root / "setuid").stat().st_mode) == 0o755


@pytest.mark.parametrize("mode", [0o4775, 0o2755, 0o1777, 0o666, 0o600, 0o644, 0o700, 0o070, 0o011,
                                  0o000, 0o7777])
def test_a_files_mode_is_the_data_filters(mode: int) -> None:
    member = tarfile.TarInfo("f")
    member.mode = mode
    assert _file_mode(mode) == tarfile.data_filter(member, "/nonexistent").mode
