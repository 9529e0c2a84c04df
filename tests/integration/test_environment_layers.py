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
from edge.layers import Entry, _file_mode


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


def test_files_of_many_chunks_and_empty_ones_hash_as_read_back(tmp_path: Path) -> None:
    """Files of several of the 1 MiB chunks and empty ones, from plain and gzip layers, hash as
    read back; a file written again in a later layer keeps only its last bytes' hash."""
    big = os.urandom((5 << 20) // 2)  # two and a half of the 1 MiB chunks
    zipped = io.BytesIO()
    with gzip.GzipFile(fileobj=zipped, mode="wb") as out:
        out.write(layer([entry("z/big", big[::-1]), entry("z/empty", b""), entry("p/big", b"again")]))
    image = oci_archive(tmp_path / "img.tar", [
        layer([*_shell(), entry("p/big", big), entry("p/empty", b""),
               *(entry(f"p/many/f{i}", os.urandom(i * 37)) for i in range(300))]),
        zipped.getvalue(),
    ])
    got = resolve("image", f"oci-archive:{image}", base=tmp_path)
    stored = json.loads((got.root.parent / "manifest.json").read_text())
    assert stored == manifest_of(got.root)
    assert (got.root / "z/big").read_bytes() == big[::-1]
    assert (got.root / "p/big").read_bytes() == b"again"


@pytest.mark.parametrize("mode", [0o4775, 0o2755, 0o1777, 0o666, 0o600, 0o644, 0o700, 0o070, 0o011,
                                  0o000, 0o7777])
def test_a_files_mode_is_the_data_filters(mode: int) -> None:
    member = tarfile.TarInfo("f")
    member.mode = mode
    assert _file_mode(mode) == tarfile.data_filter(member, "/nonexistent").mode


def _members(data: bytes, info: type[tarfile.TarInfo]) -> list[object]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:", tarinfo=info) as tar:
        return [(m.get_info(), m.offset, m.offset_data, m.pax_headers, m.sparse) for m in tar]


@pytest.mark.parametrize("form", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_the_fast_header_reads_every_entry_as_tarfile_does(form: int) -> None:
    out = io.BytesIO()
    deep = "/".join(["folder"] * 12) + "/name-long-enough-to-need-a-prefix.txt"  # over 100 bytes
    with tarfile.open(fileobj=out, mode="w", format=form) as tar:
        for name, kind, link, uid in [("etc/", tarfile.DIRTYPE, "", 0), ("etc/a", tarfile.REGTYPE, "", 7),
                                      (deep, tarfile.REGTYPE, "", 0), ("ünï/cödé", tarfile.REGTYPE, "", 0),
                                      ("l", tarfile.SYMTYPE, "/etc/a", 0), ("h", tarfile.LNKTYPE, "etc/a", 0),
                                      ("big-uid", tarfile.REGTYPE, "", 8**7 + 1)]:
            info = tarfile.TarInfo(name)
            info.type, info.linkname, info.uid, info.mtime = kind, link, uid, 1700000000
            info.size = 3 if kind == tarfile.REGTYPE else 0
            if form != tarfile.USTAR_FORMAT or uid < 8**7:
                tar.addfile(info, io.BytesIO(b"abc") if kind == tarfile.REGTYPE else None)
        v7 = tarfile.TarInfo("old-dir/")  # the V7 form of a folder: a regular type, a trailing slash
        v7.type = tarfile.AREGTYPE
        tar.addfile(v7)
    data = out.getvalue()
    assert _members(data, Entry) == _members(data, tarfile.TarInfo)
    assert any(m[0]["name"] == deep for m in _members(data, Entry))
    assert any(m[0]["name"] == "old-dir/" and m[0]["type"] == tarfile.DIRTYPE  # get_info adds the /
               for m in _members(data, Entry))


def test_a_plain_header_is_read_without_tarfiles_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    header = tarfile.TarInfo("usr/bin/tool").tobuf(tarfile.GNU_FORMAT)
    stock = tarfile.TarInfo.frombuf(header, "utf-8", "surrogateescape")

    def refused(*args: object) -> tarfile.TarInfo:
        raise AssertionError("tarfile's own parser was used")
    monkeypatch.setattr(tarfile.TarInfo, "frombuf", classmethod(refused))
    assert Entry.frombuf(header, "utf-8", "surrogateescape").get_info() == stock.get_info()


def test_a_header_with_a_bad_checksum_is_refused_as_tarfile_refuses_it() -> None:
    good = tarfile.TarInfo("f").tobuf(tarfile.USTAR_FORMAT)
    bad = good[:148] + b"0000001\0" + good[156:]
    for header in (bad, good[:300]):
        with pytest.raises(tarfile.HeaderError) as stock:
            tarfile.TarInfo.frombuf(header, "utf-8", "surrogateescape")
        with pytest.raises(tarfile.HeaderError) as ours:
            Entry.frombuf(header, "utf-8", "surrogateescape")
        assert type(ours.value) is type(stock.value)
